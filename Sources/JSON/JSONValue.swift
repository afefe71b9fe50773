/// A JSON value with object members kept in received order, so that a message can be
/// checked member by member (duplicates, unknown members) and echoed back unchanged.
///
/// Not `indirect`: arrays and objects already hold their elements on the heap, so boxing
/// every value as well would cost an allocation per value (and ~2x the memory of a message).
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// The number as written: EMV fields are strings, and numbers are only passed through.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a.elementsEqual(b) { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// The member `key` of an object (the first, if duplicated), else nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key.hasSameBytes(as: key) }?.value
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// A number's text as written.
    public var numberText: String? {
        if case .number(let text) = self { return text }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    public var objectMembers: [(key: String, value: JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// A short name of the value's JSON type, for messages ("string", "object"...).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension JSONValue {
    /// An object of the members that have a value: absent optional fields are omitted,
    /// never sent as null or "".
    public static func object(omittingAbsent members: [(String, JSONValue?)]) -> JSONValue {
        .object(members.compactMap { key, value in value.map { (key: key, value: $0) } })
    }

    /// Sets member `key` in place (appended if new); nil removes it. No effect on non-objects.
    public mutating func set(_ key: String, _ value: JSONValue?) {
        guard case .object(var members) = self else { return }
        self = .null // drop the reference so the array is mutated in place
        if let index = members.firstIndex(where: { $0.key.hasSameBytes(as: key) }) {
            if let value { members[index].value = value } else { members.remove(at: index) }
        } else if let value {
            members.append((key, value))
        }
        self = .object(members)
    }

    /// `.string(text)`, or nil when `text` is nil: for optional fields.
    public static func string(_ text: String?) -> JSONValue? { text.map(JSONValue.string) }
}

extension String {
    /// `==` for member names, with the byte counts compared first: most names a look-up passes
    /// differ in length, and `==` of two distinct long strings is a call into the runtime each.
    /// Names of other lengths never match, even canonically equivalent ones: JSON compares names
    /// by their code units (RFC 8259 8.3), and every EMV name is ASCII.
    @inlinable
    public func hasSameBytes(as other: String) -> Bool {
        utf8.count == other.utf8.count && self == other
    }
}
