/// The part of CBOR (RFC 8949) WebAuthn uses: an attestation object and a COSE key are maps of
/// integers, text and byte strings, in definite lengths (CTAP2's canonical form). Indefinite
/// lengths, tags and floats are refused; nesting is bounded, so a hostile enrolment cannot
/// exhaust the stack.
public indirect enum CBOR: Sendable, Equatable {
    case unsigned(UInt64)
    /// -1 - n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    case map([Pair])
    case bool(Bool)
    case null

    public struct Pair: Sendable, Equatable {
        public var key: CBOR
        public var value: CBOR
        public init(_ key: CBOR, _ value: CBOR) { (self.key, self.value) = (key, value) }
    }

    public struct DecodingError: Error, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { "CBOR: \(reason)" }
    }

    public static func int(_ value: Int) -> CBOR { value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value)) }

    /// The member under an integer key (COSE) or a text key (the attestation object).
    public subscript(key: Int) -> CBOR? { member { $0 == .int(key) } }
    public subscript(key: String) -> CBOR? { member { $0 == .text(key) } }

    private func member(_ matches: (CBOR) -> Bool) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { matches($0.key) }?.value
    }

    public var bytesValue: [UInt8]? { if case .bytes(let bytes) = self { bytes } else { nil } }
    public var textValue: String? { if case .text(let text) = self { text } else { nil } }
    public var intValue: Int? {
        switch self {
        case .unsigned(let n) where n <= UInt64(Int.max): Int(n)
        case .negative(let n) where n < UInt64(Int.max): -1 - Int(n)
        default: nil
        }
    }

    // MARK: Reading

    /// The one item `bytes` hold; bytes after it are an error.
    public static func decode(_ bytes: [UInt8]) throws(DecodingError) -> CBOR {
        var reader = Reader(bytes: bytes)
        let item = try reader.item(depth: 0)
        guard reader.offset == bytes.count else { throw DecodingError(reason: "\(bytes.count - reader.offset) bytes after the item") }
        return item
    }

    /// The item starting at `offset`, and where it ends: authenticator data holds a COSE key followed by extensions.
    public static func decodePrefix(_ bytes: [UInt8], at offset: Int) throws(DecodingError) -> (item: CBOR, end: Int) {
        var reader = Reader(bytes: bytes, offset: offset)
        let item = try reader.item(depth: 0)
        return (item, reader.offset)
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0
        static let maximumDepth = 16

        mutating func take(_ count: Int) throws(DecodingError) -> ArraySlice<UInt8> {
            guard count >= 0, count <= bytes.count - offset else { throw DecodingError(reason: "ends inside an item at byte \(offset)") }
            defer { offset += count }
            return bytes[offset..<offset + count]
        }

        mutating func argument(_ info: UInt8) throws(DecodingError) -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27: return try take(1 << Int(info - 24)).reduce(0) { $0 << 8 | UInt64($1) }
            default: throw DecodingError(reason: "indefinite or reserved length (additional information \(info)) at byte \(offset - 1)")
            }
        }

        mutating func length(_ info: UInt8) throws(DecodingError) -> Int {
            let length = try argument(info)
            // Each element takes a byte at least: a longer claim cannot be true.
            guard length <= UInt64(bytes.count - offset) else { throw DecodingError(reason: "a length of \(length) past the end") }
            return Int(length)
        }

        mutating func item(depth: Int) throws(DecodingError) -> CBOR {
            guard depth < Self.maximumDepth else { throw DecodingError(reason: "nested deeper than \(Self.maximumDepth)") }
            let initial = try take(1).first!
            let info = initial & 0x1F
            switch initial >> 5 {
            case 0: return .unsigned(try argument(info))
            case 1: return .negative(try argument(info))
            case 2: return .bytes(Array(try take(try length(info))))
            case 3:
                guard let text = String(validating: try take(try length(info)), as: UTF8.self) else { throw DecodingError(reason: "a text string that is not UTF-8") }
                return .text(text)
            case 4:
                var items: [CBOR] = []
                for _ in 0..<(try length(info)) { items.append(try item(depth: depth + 1)) }
                return .array(items)
            case 5:
                var pairs: [Pair] = []
                for _ in 0..<(try length(info)) {
                    let key = try item(depth: depth + 1)
                    pairs.append(Pair(key, try item(depth: depth + 1)))
                }
                return .map(pairs)
            case 7:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                default: throw DecodingError(reason: "simple value or float \(info) is not used by WebAuthn")
                }
            default: throw DecodingError(reason: "a tag (major type 6) is not used by WebAuthn")
            }
        }
    }

    // MARK: Writing

    /// The item in definite lengths, as an authenticator writes it.
    public var encoded: [UInt8] {
        var output: [UInt8] = []
        write(to: &output)
        return output
    }

    private func write(to output: inout [UInt8]) {
        func head(_ major: UInt8, _ value: UInt64) {
            switch value {
            case 0..<24: output.append(major << 5 | UInt8(value))
            case 24...0xFF: output += [major << 5 | 24, UInt8(value)]
            case 0x100...0xFFFF: output += [major << 5 | 25, UInt8(value >> 8), UInt8(value & 0xFF)]
            case 0x10000...0xFFFF_FFFF: output.append(major << 5 | 26); output += (0..<4).reversed().map { UInt8(value >> ($0 * 8) & 0xFF) }
            default: output.append(major << 5 | 27); output += (0..<8).reversed().map { UInt8(value >> ($0 * 8) & 0xFF) }
            }
        }
        switch self {
        case .unsigned(let n): head(0, n)
        case .negative(let n): head(1, n)
        case .bytes(let bytes): head(2, UInt64(bytes.count)); output += bytes
        case .text(let text): head(3, UInt64(text.utf8.count)); output += text.utf8
        case .array(let items): head(4, UInt64(items.count)); for item in items { item.write(to: &output) }
        case .map(let pairs): head(5, UInt64(pairs.count)); for pair in pairs { pair.key.write(to: &output); pair.value.write(to: &output) }
        case .bool(let value): output.append(value ? 0xF5 : 0xF4)
        case .null: output.append(0xF6)
        }
    }
}
