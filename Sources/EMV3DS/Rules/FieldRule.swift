import JSON

/// When a field must be present.
public enum Presence: Sendable, Equatable {
    case required
    case optional
    /// Required when the condition holds, optional otherwise; `because` says when, for reports.
    case requiredWhen(Condition, because: String)
    /// Must not be present (e.g. `sdkEncData` in the AReq the DS sends to the ACS).
    case absent
}

/// A condition on other fields of the same message.
public enum Condition: Sendable, Equatable {
    case fieldEquals(String, [String])
    /// A field of the message this one answers (e.g. the AReq's `deviceChannel` for an ARes).
    case requestFieldEquals(String, [String])
    case versionAtLeast(MessageVersion)
    indirect case all([Condition])

    func holds(in message: JSONValue, version: MessageVersion, request: JSONValue?) -> Bool {
        switch self {
        case .fieldEquals(let field, let values):
            guard let value = message[field]?.stringValue else { return false }
            return values.contains(value)
        case .requestFieldEquals(let field, let values):
            guard let value = request?[field]?.stringValue else { return false }
            return values.contains(value)
        case .versionAtLeast(let minimum):
            return version >= minimum
        case .all(let conditions):
            return conditions.allSatisfy { $0.holds(in: message, version: version, request: request) }
        }
    }
}

/// One field of one message type: where it exists, whether it must be there, its format.
public struct FieldRule: Sendable {
    public let name: String
    public let presence: Presence
    public let format: FieldFormat
    /// The versions that define the field; elsewhere it is unknown.
    public let versions: Set<MessageVersion>
    /// `versions` as bits, for the check validation makes on every rule.
    private let versionBits: UInt8

    public init(_ name: String, _ presence: Presence, _ format: FieldFormat, versions: Set<MessageVersion> = Set(MessageVersion.allCases)) {
        self.name = name
        self.presence = presence
        self.format = format
        self.versions = versions
        versionBits = versions.reduce(0) { $0 | $1.bit }
    }

    /// True when the field exists in `version`.
    public func applies(to version: MessageVersion) -> Bool { versionBits & version.bit != 0 }

    public static func since(_ version: MessageVersion) -> Set<MessageVersion> {
        Set(MessageVersion.allCases.filter { $0 >= version })
    }
}

/// One thing wrong with a message: the field, what was wrong, the error code to answer.
public struct Violation: Sendable, Equatable, CustomStringConvertible {
    public let field: String
    public let code: ErrorCode
    public let reason: String

    public init(field: String, code: ErrorCode, reason: String) {
        self.field = field
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code.rawValue) \(field): \(reason)" }
}
