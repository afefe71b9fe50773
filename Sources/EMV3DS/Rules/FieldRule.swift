public import JSON

/// A condition on the message, its request or its transaction.
public indirect enum Condition: Sendable, Equatable {
    case channel(Set<DeviceChannel>)
    case category(Set<MessageCategory>)
    /// A string field of this message has one of these values.
    case fieldEquals(String, [String])
    /// A boolean field of this message is true (`browserJavascriptEnabled`).
    case fieldIsTrue(String)
    case fieldPresent(String)
    /// A field of the message this one answers (e.g. the AReq's `messageCategory` for an ARes).
    case requestFieldEquals(String, [String])
    case all([Condition])
    case any([Condition])
    case not(Condition)

    /// Whether the condition holds for an object whose members are `values`.
    func holds(in values: MemberValues, context: MessageContext) -> Bool {
        switch self {
        case .channel(let channels):
            return context.channel.map(channels.contains) ?? false
        case .category(let categories):
            return context.category.map(categories.contains) ?? false
        case .fieldEquals(let field, _):
            return values[field]?.stringValue.map(self.values.contains) ?? false
        case .fieldIsTrue(let field):
            return values[field] == .bool(true)
        case .fieldPresent(let field):
            return values[field] != nil
        case .requestFieldEquals(let field, let values):
            return context.request?[field]?.stringValue.map(values.contains) ?? false
        case .all(let conditions):
            return conditions.allSatisfy { $0.holds(in: values, context: context) }
        case .any(let conditions):
            return conditions.contains { $0.holds(in: values, context: context) }
        case .not(let condition):
            return !condition.holds(in: values, context: context)
        }
    }

    /// The values of a `fieldEquals` condition.
    private var values: [String] {
        if case .fieldEquals(_, let values) = self { return values }
        return []
    }

    static let app = Condition.channel([.app])
    static let browser = Condition.channel([.browser])
    static let threeRI = Condition.channel([.threeRI])
    static let payment = Condition.category([.payment])
}

/// When a field must be present (Annex A "Inclusion").
public indirect enum Presence: Sendable, Equatable {
    case required
    case optional
    /// Required when the condition holds, optional otherwise; `because` says when, for reports.
    case requiredWhen(Condition, because: String)
    /// Must not be present (e.g. `sdkEncData` in the AReq the DS sends to the ACS): 203.
    case absent
    /// The field is used only where the condition holds (e.g. app-channel fields), with the
    /// inner presence there; elsewhere one sent anyway is let through with a warning.
    case only(Condition, Presence, where: String)

    /// What this presence asks of `message`.
    func need(in values: MemberValues, context: MessageContext) -> Need {
        switch self {
        case .required: return .required(nil)
        case .optional: return .optional
        case .absent: return .absent
        case .requiredWhen(let condition, let because):
            return condition.holds(in: values, context: context) ? .required(because) : .optional
        case .only(let condition, let inner, let scope):
            guard condition.holds(in: values, context: context) else { return .notApplicable(scope) }
            let need = inner.need(in: values, context: context)
            if case .required(nil) = need { return .required(scope) }
            return need
        }
    }

    enum Need: Equatable {
        case required(String?)
        case optional
        case absent
        case notApplicable(String)
    }

    /// Whether a condition decides it (``requiredWhen(_:because:)``, ``only(_:_:where:)``).
    var isConditional: Bool {
        switch self {
        case .requiredWhen, .only: true
        case .required, .optional, .absent: false
        }
    }

    /// The presence as the spec view prints it.
    public var summary: String {
        switch self {
        case .required: "required"
        case .optional: "optional"
        case .absent: "absent (must not be sent)"
        case .requiredWhen(_, let because): "required for \(because), else optional"
        case .only(_, let inner, let scope): "\(scope) only: \(inner.summary)"
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
    /// Why the harness requires what Annex A leaves optional (common parsers refuse without it), when it does: a negative
    /// case never fails a party for leaving such an element out.
    public let beyondAnnexA: String?
    /// Where a rule of the specification has the receiver ignore this conditional element sent where its condition does
    /// not hold, that rule: a negative case sends it there, and a party that refuses it or acts on it fails. Elsewhere
    /// which answer such an element calls for is not settled (docs/negative.md), and it makes no case.
    public let ignoredOutsideItsCondition: String?

    public init(_ name: String, _ presence: Presence, _ format: FieldFormat, versions: Set<MessageVersion> = Set(MessageVersion.allCases),
                beyondAnnexA: String? = nil, ignoredOutsideItsCondition: String? = nil) {
        self.name = name
        self.presence = presence
        self.format = format
        self.versions = versions
        self.beyondAnnexA = beyondAnnexA
        self.ignoredOutsideItsCondition = ignoredOutsideItsCondition
        versionBits = versions.reduce(0) { $0 | $1.bit }
    }

    /// True when the field exists in `version`.
    public func applies(to version: MessageVersion) -> Bool { versionBits & version.bit != 0 }

    public static func since(_ version: MessageVersion) -> Set<MessageVersion> {
        Set(MessageVersion.allCases.filter { $0 >= version })
    }

    public static func until(_ version: MessageVersion) -> Set<MessageVersion> {
        Set(MessageVersion.allCases.filter { $0 <= version })
    }

    /// `messageExtension`, in every message but Erro: at most 10 extensions up to 2.2.0, 15 in 2.3.1.
    static let messageExtension = [
        FieldRule("messageExtension", .optional, .arrayOf(.object, count: 1...10), versions: until(.v2_2_0)),
        FieldRule("messageExtension", .optional, .arrayOf(.object, count: 1...15), versions: [.v2_3_1]),
    ]
}

/// One thing wrong with a message: the field, what was wrong, the error code to answer.
public struct Violation: Sendable, Equatable, CustomStringConvertible {
    public let field: String
    public let code: ErrorCode
    public let reason: String
    /// What an Erro's `errorDetail` says of it when that is not the field's name (``ErrorDetail``: 202's extension ID).
    public let detail: String?

    public init(field: String, code: ErrorCode, reason: String, detail: String? = nil) {
        self.field = field
        self.code = code
        self.reason = reason
        self.detail = detail
    }

    public var description: String { "\(code.rawValue) \(field): \(reason)" }
}
