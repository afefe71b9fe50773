import Foundation
import JSON

/// Splits a compact JWS (3 parts) or JWE (5 parts) and decodes the protected header.
struct CompactParts {
    let encoded: [Substring]
    let header: [UInt8]

    init(_ compact: String, count: Int) throws(JOSEError) {
        // Split on the byte: a Character split walks grapheme clusters, slow on a 1 KB token.
        let parts = compact.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { Substring($0) }
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

func encodeHeader<H: Encodable>(_ header: H) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return Base64URL.encode((try? encoder.encode(header)).map(Array.init) ?? [])
}
