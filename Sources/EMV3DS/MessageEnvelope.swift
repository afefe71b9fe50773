public import JSON

/// A message read off the wire: parsed strictly, its type and version recognised.
public struct MessageEnvelope: Sendable {
    public let json: JSONValue
    public let type: MessageType
    public let version: MessageVersion
    /// Duplicate members the reader found (answered with 204 by validation).
    public let duplicates: [JSONReader.Duplicate]
    /// What validation let through but a certification rehearsal should show: members the
    /// message's table does not define for its version or channel.
    public var warnings: [String] = []

    /// Why a body is not a message this harness can process, with the Erro code to answer.
    public struct Rejection: Error, Equatable, Sendable {
        public let code: ErrorCode
        public let field: String
        public let reason: String
        /// The version the message claimed, echoed in the Erro when it is readable.
        public let claimedVersion: String?
    }

    /// Reads `bytes` as an EMV 3DS message of one of `expected` types.
    public init(bytes: [UInt8], expected: Set<MessageType>) throws(Rejection) {
        let parsed: (value: JSONValue, duplicates: [JSONReader.Duplicate])
        do { parsed = try JSONReader.parse(bytes) } catch {
            throw Rejection(code: .messageNotRecognised, field: "message", reason: "body is not JSON: \(error.description)", claimedVersion: nil)
        }
        try self.init(parsed: parsed, expected: expected)
    }

    /// Reads a message as `bytes` would be read, from the value they were written from (``WrittenJSON``: a role of this
    /// process called in process), without parsing them again.
    public init(written json: JSONValue, expected: Set<MessageType>) throws(Rejection) {
        try self.init(parsed: (json, []), expected: expected)
    }

    private init(parsed: (value: JSONValue, duplicates: [JSONReader.Duplicate]), expected: Set<MessageType>) throws(Rejection) {
        guard parsed.value.objectMembers != nil else {
            throw Rejection(code: .messageNotRecognised, field: "message", reason: "body is not a JSON object", claimedVersion: nil)
        }
        let claimed = parsed.value["messageVersion"]?.stringValue
        guard let typeName = parsed.value["messageType"]?.stringValue, let type = MessageType(rawValue: typeName), expected.contains(type) else {
            let found = parsed.value["messageType"]?.stringValue.map { "\"\($0)\"" } ?? "none"
            throw Rejection(code: .messageNotRecognised, field: "messageType",
                            reason: "expected \(expected.map(\.rawValue).sorted().joined(separator: " or ")), got \(found)", claimedVersion: claimed)
        }
        guard let claimed else {
            throw Rejection(code: .requiredElementMissing, field: "messageVersion", reason: "is required", claimedVersion: nil)
        }
        guard let version = MessageVersion(rawValue: claimed) else {
            throw Rejection(code: .versionNotSupported, field: "messageVersion",
                            reason: "\(claimed) is not one of \(MessageVersion.allCases.map(\.rawValue).joined(separator: ", "))", claimedVersion: claimed)
        }
        json = parsed.value
        self.type = type
        self.version = version
        duplicates = parsed.duplicates
    }
}
