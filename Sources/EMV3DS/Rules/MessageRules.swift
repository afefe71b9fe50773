public import JSON

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
    /// The rules, indexed per version.
    public let table: FieldTable

    public var fields: [FieldRule] { table.fields }

    public init(_ messageType: MessageType, _ fields: [FieldRule]) {
        self.messageType = messageType
        table = FieldTable(fields)
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
        table.check(members, path: "", in: context.resolved(for: message), type: messageType.rawValue,
                    missing: &report.violations, formats: &formatViolations, warnings: &report.warnings)
        if let critical = Self.unrecognisedCriticalExtension(in: message["messageExtension"]) {
            report.violations.append(Violation(field: "messageExtension", code: .criticalExtensionNotRecognised,
                                               reason: "\(critical) is marked critical and not recognised", detail: critical))
        }
        report.violations += formatViolations
        return report
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
            assert(table.knownNames.contains(name) || name == "messageType", "\(name) is not a field of \(messageType.rawValue)")
            guard name == "messageType" || defines(name, in: version) else { continue }
            kept.append((name, value))
        }
        return .object(kept)
    }

    /// An object field with member rules (`acsRenderingType`), built as `build` builds a message:
    /// members `version` does not define are left out.
    public func buildMember(_ field: String, _ members: [(String, JSONValue?)], version: MessageVersion) -> JSONValue {
        let inner = table.index(of: field, in: version).flatMap { index -> FieldTable? in
            if case .fields(let inner) = fields[index].format { return inner }
            return nil
        }
        assert(inner != nil, "\(field) has no member rules in \(messageType.rawValue) \(version.rawValue)")
        return .object(members.compactMap { name, value in
            guard let value, inner.map({ $0.index(of: name, in: version) != nil }) ?? true else { return nil }
            return (name, value)
        })
    }

    /// True when the table has a rule for `name` in `version`.
    public func defines(_ name: String, in version: MessageVersion) -> Bool { table.index(of: name, in: version) != nil }

    // MARK: The spec view

    /// The table as `threeds-harness spec` and `GET /admin/spec` show it: one row per field
    /// of `version`; with a channel, only the fields that channel uses.
    public func table(version: MessageVersion, channel: DeviceChannel? = nil) -> [(name: String, presence: String, format: String)] {
        // A field is shown when the channel uses it in either category.
        let contexts = MessageCategory.allCases.map { MessageContext(version: version, channel: channel, category: $0) }
        return rules(for: version).compactMap { rule in
            let unused = contexts.allSatisfy { context in
                if case .notApplicable = rule.presence.need(in: .empty, context: context) { return true }
                return false
            }
            if channel != nil, unused { return nil }
            return (rule.name, rule.presence.summary, rule.format.summary(in: version))
        }
    }
}
