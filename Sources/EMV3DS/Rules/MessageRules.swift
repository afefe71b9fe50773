import JSON

/// The field rules of one message type, and validation against them.
///
/// Validation reports every violation, in this order: duplicates (204), missing required
/// fields (201), an unrecognised critical extension (202), then formats (203), so that a
/// report can cite each and an Erro can carry the first.
public struct MessageRules: Sendable {
    public let messageType: MessageType
    public let fields: [FieldRule]

    public init(_ messageType: MessageType, _ fields: [FieldRule]) {
        self.messageType = messageType
        self.fields = fields
    }

    /// Checks `message` (already parsed, with the duplicates the reader found) at `version`;
    /// `request` is the message it answers, for rules that depend on it.
    public func validate(_ message: JSONValue, version: MessageVersion, duplicates: [JSONReader.Duplicate] = [],
                         request: JSONValue? = nil) -> [Violation] {
        var violations = duplicates.map { Violation(field: $0.path, code: .duplicateElement, reason: "appears more than once") }
        guard message.objectMembers != nil else {
            return violations + [Violation(field: "message", code: .messageNotRecognised, reason: "is not a JSON object")]
        }
        var formatViolations: [Violation] = []
        // One pass over the members instead of a search per rule; the first of duplicates counts.
        var members: [String: JSONValue] = [:]
        members.reserveCapacity(message.objectMembers?.count ?? 0)
        for member in message.objectMembers ?? [] where members[member.key] == nil { members[member.key] = member.value }
        for rule in fields where rule.applies(to: version) {
            let value = members[rule.name]
            switch rule.presence {
            case .required where value == nil:
                violations.append(Violation(field: rule.name, code: .requiredElementMissing, reason: "is required"))
                continue
            case .requiredWhen(let condition, let because) where value == nil && condition.holds(in: message, version: version, request: request):
                violations.append(Violation(field: rule.name, code: .requiredElementMissing, reason: "is required \(because)"))
                continue
            case .absent where value != nil:
                formatViolations.append(Violation(field: rule.name, code: .formatInvalid, reason: "must not be present in this message"))
                continue
            default:
                break
            }
            guard let value else { continue }
            // Optional fields are never sent empty: "" and null are format errors.
            if value == .null || value == .string("") {
                formatViolations.append(Violation(field: rule.name, code: .formatInvalid, reason: "is empty; omit an absent field"))
            } else if let problem = rule.format.problem(with: value) {
                formatViolations.append(Violation(field: rule.name, code: .formatInvalid, reason: problem))
            }
        }
        if let critical = Self.unrecognisedCriticalExtension(in: members["messageExtension"]) {
            violations.append(Violation(field: "messageExtension", code: .criticalExtensionNotRecognised,
                                        reason: "\(critical) is marked critical and not recognised"))
        }
        return violations + formatViolations
    }

    /// The id of the first extension flagged critical: this harness recognises none.
    static func unrecognisedCriticalExtension(in extensions: JSONValue?) -> String? {
        guard case .array(let list)? = extensions else { return nil }
        return list.first { $0["criticalityIndicator"] == .bool(true) }.map { $0["id"]?.stringValue ?? "an extension" }
    }
}
