import JSON

/// The rules of one object (a message, or an object field such as `deviceRenderOptions`),
/// indexed per version so that validation reads each member once: the rule of each name, and
/// the rules that can require a field, in table order.
public struct FieldTable: Sendable {
    public let fields: [FieldRule]
    /// Every name the table defines in some version, to tell a field of another version from an unknown one.
    let knownNames: Set<String>
    /// Per version (by ordinal): each name's rule, as an index into `fields`.
    private let indexes: [[String: Int]]
    /// Per version (by ordinal): the rules whose presence is more than optional, in table order.
    private let presenceRules: [[Int]]

    public init(_ fields: [FieldRule]) {
        self.fields = fields
        knownNames = Set(fields.map(\.name))
        indexes = MessageVersion.allCases.map { version in
            var index: [String: Int] = [:]
            for (position, rule) in fields.enumerated() where rule.applies(to: version) {
                precondition(index[rule.name] == nil, "\(rule.name) has two rules in \(version.rawValue)")
                index[rule.name] = position
            }
            return index
        }
        presenceRules = MessageVersion.allCases.map { version in
            fields.indices.filter { fields[$0].applies(to: version) && fields[$0].presence != .optional }
        }
    }

    /// The position of `name`'s rule in `version`, or nil when the version does not define it.
    func index(of name: String, in version: MessageVersion) -> Int? { indexes[version.ordinal][name] }

    func presenceRules(in version: MessageVersion) -> [Int] { presenceRules[version.ordinal] }

    /// Checks the members of one object; object fields with rules of their own are checked
    /// the same way, their violations named `object.member`.
    func check(_ members: [(key: String, value: JSONValue)], path: String, in context: MessageContext, type: String,
               missing: inout [Violation], formats: inout [Violation], warnings: inout [String]) {
        // One pass over the members, one look-up of each name; the first of duplicates counts (204 is reported apart).
        let index = indexes[context.version.ordinal]
        var values = MemberValues(members: members, index: index, byRule: Array(repeating: nil, count: fields.count))
        var present: [(index: Int, value: JSONValue)] = []
        present.reserveCapacity(members.count)
        for (position, member) in members.enumerated() {
            if let rule = index[member.key] {
                guard values.byRule[rule] == nil else { continue }
                values.byRule[rule] = member.value
                present.append((rule, member.value))
            } else if member.key != "messageType", !members[..<position].contains(where: { $0.key == member.key }) {
                warnings.append(knownNames.contains(member.key)
                    ? "\(path + member.key) is not a field of \(type) \(context.version.rawValue) (it is in other versions)"
                    : "\(path + member.key) is not a field of \(type): let through, not checked")
            }
        }
        // The rules are read in place: copying one (its name, presence and format) costs retains on every field.
        fields.withUnsafeBufferPointer { rules in
            for index in presenceRules(in: context.version) where values.byRule[index] == nil {
                guard case .required(let because) = rules[index].presence.need(in: values, context: context) else { continue }
                missing.append(Violation(field: path + rules[index].name, code: .requiredElementMissing,
                                         reason: because.map { "is required for \($0)" } ?? "is required"))
            }
            // Formats in table order, so that a report reads as the specification does.
            present.sort { $0.index < $1.index }
            for (index, value) in present {
                let need = rules[index].presence.need(in: values, context: context)
                switch need {
                case .absent:
                    formats.append(Violation(field: path + rules[index].name, code: .formatInvalid, reason: "must not be present in this message"))
                    continue
                case .notApplicable(let scope):
                    warnings.append("\(path + rules[index].name) is sent, but \(type) \(context.version.rawValue) uses it for \(scope) only")
                default:
                    break
                }
                // A field is never sent empty: a required one sent "" or null is missing (201), an optional one is a format error.
                if value.isEmptyValue {
                    if case .required = need {
                        missing.append(Violation(field: path + rules[index].name, code: .requiredElementMissing, reason: "is required, and sent empty"))
                    } else {
                        formats.append(Violation(field: path + rules[index].name, code: .formatInvalid, reason: "is empty; omit an absent field"))
                    }
                } else if case .fields(let inner) = rules[index].format, let innerMembers = value.objectMembers {
                    inner.check(innerMembers, path: path + rules[index].name + ".", in: context, type: type,
                                missing: &missing, formats: &formats, warnings: &warnings)
                } else if let problem = rules[index].format.problem(with: value) {
                    formats.append(Violation(field: path + rules[index].name, code: problem.code, reason: problem.reason))
                }
            }
        }
    }
}

/// The members of one object as the rules' conditions read them, by name: the first of
/// duplicates. Validation finds a member by its rule's position, hashing each name once; a name
/// the version does not define is looked for among the members.
struct MemberValues {
    let members: [(key: String, value: JSONValue)]
    /// The version's position of each name in its table.
    let index: [String: Int]
    /// Each rule's value, by position; nil when the member is absent.
    var byRule: [JSONValue?]

    /// No members: what the spec view asks a presence about.
    static let empty = MemberValues(members: [], index: [:], byRule: [])

    subscript(name: String) -> JSONValue? {
        if let position = index[name] { return byRule[position] }
        return members.first { $0.key.hasSameBytes(as: name) }?.value
    }
}

private extension JSONValue {
    /// null or "": a field sent empty.
    var isEmptyValue: Bool {
        switch self {
        case .null: true
        case .string(let text): text.isEmpty
        default: false
        }
    }
}
