import JSON

/// What validation found: the violations (the first decides the Erro) and the warnings, which
/// let a message through but are recorded on its transaction (a member the table does not
/// define for this version or channel).
public struct ValidationReport: Sendable, Equatable {
    public var violations: [Violation] = []
    public var warnings: [String] = []
}

/// The field table of one message type, for every version: the single source that validates
/// what the harness receives and builds what it sends.
///
/// Validation reports every violation, in this order: duplicates (204), missing required
/// fields (201), an unrecognised critical extension (202), then formats (203, 304), so that a
/// report can cite each and an Erro can carry the first.
public struct MessageRules: Sendable {
    public let messageType: MessageType
    public let fields: [FieldRule]
    /// Every name the table defines in some version, to tell a field of another version from an unknown one.
    private let knownNames: Set<String>

    public init(_ messageType: MessageType, _ fields: [FieldRule]) {
        self.messageType = messageType
        self.fields = fields
        knownNames = Set(fields.map(\.name))
    }

    /// The rules that apply to `version`.
    public func rules(for version: MessageVersion) -> [FieldRule] { fields.filter { $0.applies(to: version) } }

    /// Checks `message` (already parsed, with the duplicates the reader found) at `version`;
    /// `request` is the message it answers, for rules that depend on it.
    public func validate(_ message: JSONValue, version: MessageVersion, duplicates: [JSONReader.Duplicate] = [],
                         request: JSONValue? = nil) -> [Violation] {
        check(message, context: MessageContext(version: version, request: request), duplicates: duplicates).violations
    }

    /// Checks `message` in `context`: violations and warnings.
    public func check(_ message: JSONValue, context: MessageContext, duplicates: [JSONReader.Duplicate] = []) -> ValidationReport {
        var report = ValidationReport()
        report.violations = duplicates.map { Violation(field: $0.path, code: .duplicateElement, reason: "appears more than once") }
        guard let members = message.objectMembers else {
            report.violations.append(Violation(field: "message", code: .messageNotRecognised, reason: "is not a JSON object"))
            return report
        }
        var formatViolations: [Violation] = []
        Self.check(members, of: message, against: fields, knownNames: knownNames, path: "", in: context, type: messageType.rawValue,
                   missing: &report.violations, formats: &formatViolations, warnings: &report.warnings)
        if let critical = Self.unrecognisedCriticalExtension(in: message["messageExtension"]) {
            report.violations.append(Violation(field: "messageExtension", code: .criticalExtensionNotRecognised,
                                               reason: "\(critical) is marked critical and not recognised"))
        }
        report.violations += formatViolations
        return report
    }

    /// Checks the members of one object (the message, or an object field with member rules).
    private static func check(_ members: [(key: String, value: JSONValue)], of object: JSONValue, against fields: [FieldRule],
                              knownNames: Set<String>, path: String, in context: MessageContext, type: String,
                              missing: inout [Violation], formats: inout [Violation], warnings: inout [String]) {
        // One pass over the members instead of a search per rule; the first of duplicates counts.
        var values: [String: JSONValue] = [:]
        values.reserveCapacity(members.count)
        for member in members where values[member.key] == nil { values[member.key] = member.value }
        var checked = Set<String>()
        for rule in fields where rule.applies(to: context.version) {
            let name = path + rule.name
            let value = values[rule.name]
            if value != nil { checked.insert(rule.name) }
            switch rule.presence.need(in: object, context: context) {
            case .required(let because) where value == nil:
                missing.append(Violation(field: name, code: .requiredElementMissing, reason: because.map { "is required for \($0)" } ?? "is required"))
                continue
            case .absent where value != nil:
                formats.append(Violation(field: name, code: .formatInvalid, reason: "must not be present in this message"))
                continue
            case .notApplicable(let scope) where value != nil:
                warnings.append("\(name) is sent, but \(type) \(context.version.rawValue) uses it for \(scope) only")
            default:
                break
            }
            guard let value else { continue }
            // Optional fields are never sent empty: "" and null are format errors.
            if value == .null || value == .string("") {
                formats.append(Violation(field: name, code: .formatInvalid, reason: "is empty; omit an absent field"))
            } else if case .members(let inner) = rule.format, let innerMembers = value.objectMembers {
                check(innerMembers, of: value, against: inner, knownNames: Set(inner.map(\.name)), path: name + ".", in: context, type: type,
                      missing: &missing, formats: &formats, warnings: &warnings)
            } else if let problem = rule.format.problem(with: value) {
                formats.append(Violation(field: name, code: problem.code, reason: problem.reason))
            }
        }
        for member in members where !checked.contains(member.key) && member.key != "messageType" {
            let name = path + member.key
            if knownNames.contains(member.key) {
                warnings.append("\(name) is not a field of \(type) \(context.version.rawValue) (it is in other versions)")
            } else {
                warnings.append("\(name) is not a field of \(type): let through, not checked")
            }
        }
    }

    /// The id of the first extension flagged critical: this harness recognises none.
    static func unrecognisedCriticalExtension(in extensions: JSONValue?) -> String? {
        guard case .array(let list)? = extensions else { return nil }
        return list.first { $0["criticalityIndicator"] == .bool(true) }.map { $0["id"]?.stringValue ?? "an extension" }
    }

    // MARK: Building

    /// A message of this type at `version`, built through the table: members in the order
    /// given, absent values left out, and fields `version` does not define dropped (a 2.2.0
    /// field never goes out in a 2.1.0 message).
    public func build(_ members: [(String, JSONValue?)], version: MessageVersion) -> JSONValue {
        var kept: [(key: String, value: JSONValue)] = []
        kept.reserveCapacity(members.count)
        for (name, value) in members {
            guard let value else { continue }
            assert(knownNames.contains(name) || name == "messageType", "\(name) is not a field of \(messageType.rawValue)")
            guard name == "messageType" || defines(name, in: version) else { continue }
            kept.append((name, value))
        }
        return .object(kept)
    }

    /// An object field with member rules (`acsRenderingType`), built as `build` builds a message:
    /// members `version` does not define are left out.
    public func buildMember(_ field: String, _ members: [(String, JSONValue?)], version: MessageVersion) -> JSONValue {
        let inner = fields.first { $0.name == field && $0.applies(to: version) }.flatMap { rule -> [FieldRule]? in
            if case .members(let rules) = rule.format { return rules }
            return nil
        }
        assert(inner != nil, "\(field) has no member rules in \(messageType.rawValue) \(version.rawValue)")
        return .object(members.compactMap { name, value in
            guard let value, inner?.contains(where: { $0.name == name && $0.applies(to: version) }) ?? true else { return nil }
            return (name, value)
        })
    }

    /// True when the table has a rule for `name` in `version`.
    public func defines(_ name: String, in version: MessageVersion) -> Bool {
        fields.contains { $0.name == name && $0.applies(to: version) }
    }

    // MARK: The spec view

    /// The table as `threeds-harness spec` and `GET /admin/spec` show it: one row per field
    /// of `version`; with a channel, only the fields that channel uses.
    public func table(version: MessageVersion, channel: DeviceChannel? = nil) -> [(name: String, presence: String, format: String)] {
        let context = MessageContext(version: version, channel: channel)
        return rules(for: version).compactMap { rule in
            if channel != nil, case .notApplicable = rule.presence.need(in: .object([]), context: context) { return nil }
            return (rule.name, rule.presence.summary, rule.format.summary)
        }
    }
}
