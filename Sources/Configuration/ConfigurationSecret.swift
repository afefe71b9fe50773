/// A secret of the configuration (a bearer token): read as a string, written out as "(set)",
/// never the secret itself.
public struct ConfigurationSecret: Sendable, Equatable, Codable, CustomStringConvertible, CustomDebugStringConvertible,
                                   CustomReflectable {
    public let value: String

    // Printed, dumped or interpolated, a secret shows that it is set, never itself.
    public var description: String { "(set)" }
    public var debugDescription: String { "(set)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    public init(_ value: String) { self.value = value }

    public init(from decoder: Decoder) throws { value = try decoder.singleValueContainer().decode(String.self) }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode("(set)")
    }
}
