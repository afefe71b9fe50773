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
        // Rules and values are handled by position (a member's index, per rule): copying a
        // value or a rule costs a retain and a release for each of its parts, on every field.
        let index = indexes[context.version.ordinal]
        var values = MemberValues(members: members, index: index, byRule: [Int32](repeating: MemberValues.absent, count: fields.count))
        members.withUnsafeBufferPointer { members in
            for position in members.indices {
                if let rule = index[members[position].key] {
                    if values.byRule[rule] == MemberValues.absent { values.byRule[rule] = Int32(position) }
                } else if members[position].key != "messageType",
                          !members[..<position].contains(where: { $0.key == members[position].key }) {
                    let name = members[position].key
                    warnings.append(knownNames.contains(name)
                        ? "\(path + name) is not a field of \(type) \(context.version.rawValue) (it is in other versions)"
                        : "\(path + name) is not a field of \(type): let through, not checked")
                }
            }
        }
        fields.withUnsafeBufferPointer { rules in
            for index in presenceRules(in: context.version) where values.byRule[index] == MemberValues.absent {
                guard case .required(let because) = rules[index].presence.need(in: values, context: context) else { continue }
                missing.append(Violation(field: path + rules[index].name, code: .requiredElementMissing,
                                         reason: because.map { "is required for \($0)" } ?? "is required"))
            }
            // Formats in table order, so that a report reads as the specification does.
            for index in rules.indices where values.byRule[index] != MemberValues.absent {
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
                let value = values.members[Int(values.byRule[index])].value
                // A field is never sent empty: a required one sent "" or null is missing (201), an optional one is a format error.
                if value.isEmptyValue {
                    if case .required = need {
                        missing.append(Violation(field: path + rules[index].name, code: .requiredElementMissing, reason: "is required, and sent empty"))
                    } else {
                        formats.append(Violation(field: path + rules[index].name, code: .formatInvalid, reason: "is empty; omit an absent field"))
                    }
                } else if case .fields(let inner) = rules[index].format, case .object(let innerMembers) = value {
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
    /// Each rule's member, by the rule's position: the member's index, or `absent`.
    var byRule: [Int32]
    static let absent: Int32 = -1

    /// No members: what the spec view asks a presence about.
    static let empty = MemberValues(members: [], index: [:], byRule: [])

    subscript(name: String) -> JSONValue? {
        if let rule = index[name] { return byRule[rule] == Self.absent ? nil : members[Int(byRule[rule])].value }
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
