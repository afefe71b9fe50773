/// How every section of the configuration and scenario files is read: a table of its keys,
/// each bound to a member. A key that is absent keeps the member's default (or fails when
/// required), an unknown key fails naming the known ones, so a typo is reported instead of
/// silently ignored. The type gives the table and its defaults; `init(from:)` comes from here.
public protocol KeyTableDecodable: Decodable {
    /// The defaults that absent keys keep.
    init()
    static var keys: [TableKey<Self>] { get }
}

/// One key of a ``KeyTableDecodable`` section and how it sets its member.
public struct TableKey<Root> {
    public let name: String
    public let isRequired: Bool
    private let read: (inout Root, KeyedDecodingContainer<AnyKey>, AnyKey) throws -> Void

    /// A key read by `read` (values with more than one form).
    public init(_ name: String, required: Bool = false, read: @escaping (inout Root, KeyedDecodingContainer<AnyKey>, AnyKey) throws -> Void) {
        self.name = name
        self.isRequired = required
        self.read = read
    }

    /// A member with a default: absent or null keeps it.
    public static func key<Value: Decodable>(_ name: String, _ member: WritableKeyPath<Root, Value>, required: Bool = false) -> Self {
        Self(name, required: required) { root, container, key in
            if let value = try container.decodeIfPresent(Value.self, forKey: key) { root[keyPath: member] = value }
        }
    }

    /// An optional member: null sets it to nil (`httpPort: null` turns a listener off).
    public static func key<Value: Decodable>(_ name: String, _ member: WritableKeyPath<Root, Value?>) -> Self {
        Self(name) { root, container, key in root[keyPath: member] = try container.decodeIfPresent(Value.self, forKey: key) }
    }

    func read(into root: inout Root, from container: KeyedDecodingContainer<AnyKey>) throws {
        try read(&root, container, AnyKey(stringValue: name))
    }
}

extension KeyTableDecodable {
    public init(from decoder: Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: AnyKey.self)
        let keys = Self.keys
        if let unknown = container.allKeys.first(where: { key in !keys.contains { $0.name == key.stringValue } }) {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath + [unknown],
                debugDescription: "unknown key (known: \(keys.map(\.name).sorted().joined(separator: ", ")))"))
        }
        for key in keys {
            guard container.contains(AnyKey(stringValue: key.name)) else {
                guard !key.isRequired else {
                    throw DecodingError.keyNotFound(AnyKey(stringValue: key.name),
                                                    .init(codingPath: decoder.codingPath, debugDescription: "required"))
                }
                continue
            }
            try key.read(into: &self, from: container)
        }
    }
}

/// Any key of a mapping, as the file spells it.
public struct AnyKey: CodingKey {
    public let stringValue: String
    public var intValue: Int? { nil }
    public init(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}
