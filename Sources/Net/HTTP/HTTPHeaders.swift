/// HTTP header fields in received order; names compare case-insensitively.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    // The heads of the common answers, made once: a literal per answer is an allocation per answer.
    public static let json: HTTPHeaders = ["Content-Type": "application/json"]
    public static let plainText: HTTPHeaders = ["Content-Type": "text/plain; charset=utf-8"]
    public static let html: HTTPHeaders = ["Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"]

    /// The first value of `name`, or nil.
    public subscript(name: String) -> String? {
        fields.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Replaces every value of `name` with `value`.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) { fields.removeAll { $0.name.equalsIgnoringASCIICase(name) } }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// The media type of Content-Type, lower-cased, without parameters ("application/json").
    public var mediaType: String? {
        guard let value = self["Content-Type"] else { return nil }
        // The common case, already a bare lower-case type, without the allocations of splitting.
        if value.utf8.allSatisfy({ $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: " ") && !(0x41...0x5A).contains($0) }) { return value }
        return value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingSpaces.lowercased() }
    }
}

extension StringProtocol {
    func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return zip(utf8, other.utf8).allSatisfy { a, b in a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= 0x61 && (a | 0x20) <= 0x7a) }
    }

    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
