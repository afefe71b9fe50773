import Foundation

/// Splits a compact JWS (3 parts) or JWE (5 parts) and decodes the protected header.
struct CompactParts {
    let encoded: [Substring]
    let header: [UInt8]

    init(_ compact: String, count: Int) throws(JOSEError) {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == count else {
            throw .malformedCompactSerialization("\(parts.count) parts, expected \(count)")
        }
        encoded = parts
        header = try Base64URL.decode(parts[0], part: "protected header")
    }

    func decode(_ index: Int, _ name: String) throws(JOSEError) -> [UInt8] {
        try Base64URL.decode(encoded[index], part: name)
    }
}

/// Decodes a protected header, rejecting duplicate members and unknown critical ones.
func decodeHeader<H: Decodable>(_ bytes: [UInt8], as type: H.Type, understood: Set<String>) throws(JOSEError) -> H {
    let object: [String: Any]
    do {
        guard let parsed = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw JOSEError.invalidHeader("not a JSON object")
        }
        object = parsed
    } catch let error as JOSEError {
        throw error
    } catch {
        throw .invalidHeader("not JSON")
    }
    if let critical = object["crit"] {
        guard let names = critical as? [String], !names.isEmpty else { throw .invalidHeader("crit must be a non-empty array of names") }
        if let unknown = names.first(where: { !understood.contains($0) }) {
            throw .invalidHeader("critical header parameter \(unknown) is not understood")
        }
    }
    do { return try JSONDecoder().decode(type, from: Data(bytes)) } catch {
        throw .invalidHeader("\(error)")
    }
}

func encodeHeader<H: Encodable>(_ header: H) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return Base64URL.encode((try? encoder.encode(header)).map(Array.init) ?? [])
}
