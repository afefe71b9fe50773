import Foundation
import JSON

/// Splits a compact JWS (3 parts) or JWE (5 parts) and decodes the protected header.
struct CompactParts {
    let encoded: [Substring]
    let header: [UInt8]

    init(_ compact: String, count: Int) throws(JOSEError) {
        // Split where the dots are, found in the bytes: a Character split walks grapheme clusters, and even the UTF-8
        // view's generic split goes index by index through a kilobytes-long token.
        var text = compact
        let dots = text.withUTF8 { bytes in
            var dots: [Int] = []
            dots.reserveCapacity(count)
            for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: ".") { dots.append(offset) }
            return dots
        }
        let utf8 = text.utf8
        var parts: [Substring] = []
        parts.reserveCapacity(dots.count + 1)
        var start = 0
        for end in dots + [utf8.count] {
            parts.append(Substring(utf8[utf8.index(utf8.startIndex, offsetBy: start)..<utf8.index(utf8.startIndex, offsetBy: end)]))
            start = end + 1
        }
        guard parts.count == count else {
            throw .malformedCompactSerialization("\(parts.count) parts, expected \(count)")
        }
        encoded = parts
        header = try JOSEError.decodingBase64URL(parts[0], part: "protected header")
    }

    func decode(_ index: Int, _ name: String) throws(JOSEError) -> [UInt8] {
        try JOSEError.decodingBase64URL(encoded[index], part: name)
    }
}
