/// A strict RFC 8259 JSON reader that keeps member order and reports duplicate members,
/// which EMV 3DS answers with error 204 (a general-purpose parser silently keeps one).
public struct JSONReader {
    /// Why a text is not JSON, with the byte offset where reading stopped.
    public struct SyntaxError: Error, Equatable, CustomStringConvertible {
        public let offset: Int
        public let reason: String
        public var description: String { "\(reason) at byte \(offset)" }
    }

    /// A member name repeated within one object, with its path ("acsRenderingType.acsUiTemplate").
    public struct Duplicate: Equatable, Sendable {
        public let path: String
        public init(path: String) { self.path = path }
    }

    /// How deep a document may nest unless the caller says otherwise: well beyond any EMV message's.
    public static let defaultMaxDepth = 32

    /// The value and every duplicate member found in it.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(SyntaxError) -> (value: JSONValue, duplicates: [Duplicate]) {
        var reader = JSONReader(bytes: bytes, maxDepth: maxDepth)
        reader.skipWhitespace()
        let value = try reader.readValue(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else { throw reader.error("unexpected data after the JSON value") }
        return (value, reader.duplicates)
    }

    private let bytes: [UInt8]
    private let maxDepth: Int
    private var index = 0
    private var duplicates: [Duplicate] = []
    /// Where the reader is, kept as parts and joined only when a duplicate needs its path.
    private var path: [PathComponent] = []

    private enum PathComponent {
        case member(String)
        case element(Int)
    }

    private init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private func error(_ reason: String) -> SyntaxError { SyntaxError(offset: index, reason: reason) }

    private mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    private mutating func expect(_ literal: String, _ value: JSONValue) throws(SyntaxError) -> JSONValue {
        let expected = Array(literal.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw error("invalid literal")
        }
        index += expected.count
        return value
    }

    /// The value at `place` (a member or element) of the container being read; the place joins the
    /// path only while a container is read in it, where a duplicate can be.
    private mutating func readValue(depth: Int, at place: PathComponent? = nil) throws(SyntaxError) -> JSONValue {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth)") }
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            if let place { path.append(place) }
            defer { if place != nil { path.removeLast() } }
            if bytes[index] == UInt8(ascii: "{") { return try readObject(depth: depth) }
            return try readArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber()
        default: throw error("unexpected character")
        }
    }

    private func pathText(adding last: PathComponent) -> String {
        (path + [last]).enumerated().map { offset, component in
            switch component {
            case .member(let name): offset == 0 ? name : "." + name
            case .element(let position): "[\(position)]"
            }
        }.joined()
    }

    private mutating func readObject(depth: Int) throws(SyntaxError) -> JSONValue {
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        // Small objects are searched in place; a set only pays for itself on larger ones.
        var seen: Set<String>?
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try readString()
            if members.count == 16 {
                // Sized for a whole message (an AReq has about 40 members), so it is not rehashed as it grows.
                var names = Set<String>(minimumCapacity: 64)
                for member in members { names.insert(member.key) }
                seen = names
            }
            // One hash of the name: inserting it says whether it was there.
            let inserted = seen?.insert(key).inserted
            if inserted.map({ !$0 }) ?? members.contains(where: { $0.key.hasSameBytes(as: key) }) {
                duplicates.append(Duplicate(path: pathText(adding: .member(key))))
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            members.append((key, try readValue(depth: depth + 1, at: .member(key))))
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func readArray(depth: Int) throws(SyntaxError) -> JSONValue {
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try readValue(depth: depth + 1, at: .element(elements.count)))
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            } else {
                throw error("expected ',' or ']'")
            }
        }
    }

    private mutating func readNumber() throws(SyntaxError) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits(_ reader: inout JSONReader) -> Int {
            let from = reader.index
            while reader.index < reader.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(reader.bytes[reader.index]) { reader.index += 1 }
            return reader.index - from
        }
        guard index < bytes.count else { throw error("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits(&self) == 0 {
            throw error("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw error("invalid number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw error("invalid number") }
        }
        return .number(String(decoding: bytes[start..<index], as: UTF8.self))
    }

    private mutating func readString() throws(SyntaxError) -> String {
        index += 1
        // Nearly every string of a message has no escape: found in one pass over the bytes and
        // made at once. Anything else (an escape, a control character, bad UTF-8, the end of the
        // input) is read again from the start by the loop below, which says what is wrong where.
        let first = index
        let (end, ascii) = bytes.withUnsafeBufferPointer { buffer -> (Int, Bool) in
            var position = first
            var bits: UInt8 = 0
            while position < buffer.count {
                let byte = buffer[position]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                bits |= byte
                position += 1
            }
            return (position, bits < 0x80)
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            if ascii {
                index = end + 1
                return String(decoding: bytes[first..<end], as: UTF8.self)
            }
            if let text = String(validating: bytes[first..<end], as: UTF8.self) {
                index = end + 1
                return text
            }
        }
        var start = index
        var output = ""
        /// A run of bytes with one of 0x80 or more: checked as UTF-8 (RFC 8259 section 8.1) instead of repaired.
        var runIsASCII = true
        func flush(_ reader: JSONReader, _ output: inout String, _ start: Int, ascii: Bool) throws(SyntaxError) {
            guard reader.index > start else { return }
            let run = reader.bytes[start..<reader.index]
            if ascii {
                output += String(decoding: run, as: UTF8.self)
            } else {
                guard let text = String(validating: run, as: UTF8.self) else { throw reader.error("invalid UTF-8 in string") }
                output += text
            }
        }
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            if byte >= 0x80 { runIsASCII = false }
            if byte == UInt8(ascii: "\"") {
                try flush(self, &output, start, ascii: runIsASCII)
                index += 1
                return output
            }
            if byte < 0x20 { throw error("control character in string") }
            if byte == UInt8(ascii: "\\") {
                try flush(self, &output, start, ascii: runIsASCII)
                runIsASCII = true
                output.unicodeScalars.append(try readEscape())
                start = index
                continue
            }
            index += 1
        }
    }

    /// The character a backslash escape stands for; `index` is at the backslash.
    private mutating func readEscape() throws(SyntaxError) -> Unicode.Scalar {
        index += 1
        guard index < bytes.count else { throw error("unterminated escape") }
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(escape)
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            var code = try readHex4()
            if (0xD800...0xDBFF).contains(code) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("unpaired surrogate")
                }
                index += 2
                let low = try readHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate") }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(code) {
                throw error("unpaired surrogate")
            }
            guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
            return scalar
        default:
            throw error("invalid escape")
        }
    }

    /// Exactly four hex digits (UInt32(_:radix:) alone would take "+041").
    private mutating func readHex4() throws(SyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("invalid \\u escape") }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }
}
