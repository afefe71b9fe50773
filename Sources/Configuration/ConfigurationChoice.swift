/// A setting of the configuration that is one of a closed set of words (`roleCalls: http`): read as its enum, so that
/// the code compares cases, not strings, and a word outside the set is refused with the set named.
public protocol ConfigurationChoice: RawRepresentable, CaseIterable, Codable, Sendable where RawValue == String {}

extension ConfigurationChoice {
    /// "a or b", "a, b or c": the words this setting takes, in declaration order.
    public static var choices: String {
        let words = allCases.map(\.rawValue)
        return words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + (words.last ?? "")
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let word = try container.decode(String.self)
        guard let choice = Self(rawValue: word) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\"\(word)\" is not \(Self.choices)"))
        }
        self = choice
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
