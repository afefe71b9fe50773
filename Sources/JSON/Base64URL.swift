/// Base64url without padding (RFC 7515 §2), strict: padding, `+`, `/`, white space and
/// impossible lengths are rejected, as EMV 3DS SDKs reject them.
///
/// A table codec of its own: Foundation's base64 needs the standard alphabet, and the
/// character replacements that takes cost more than the decryption of device data.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// Value of each byte, 0xFF for bytes outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(chunk >> 18 & 63)])
            output.append(alphabet[Int(chunk >> 12 & 63)])
            output.append(alphabet[Int(chunk >> 6 & 63)])
            output.append(alphabet[Int(chunk & 63)])
            index += 3
        }
        let rest = input.count - index
        if rest > 0 {
            let chunk = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
            output.append(alphabet[Int(chunk >> 18 & 63)])
            output.append(alphabet[Int(chunk >> 12 & 63)])
            if rest == 2 { output.append(alphabet[Int(chunk >> 6 & 63)]) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    public static func encode(_ text: String) -> String { encode(Array(text.utf8)) }

    /// Decodes; `part` names the input in the error ("protected header", "iv"...).
    public static func decode(_ text: some StringProtocol, part: String = "value") throws(Base64URLError) -> [UInt8] {
        var output: [UInt8] = []
        var accumulator: UInt32 = 0
        var count = 0
        output.reserveCapacity(text.utf8.count * 3 / 4)
        for byte in text.utf8 {
            let value = values[Int(byte)]
            guard value != 0xFF else { throw Base64URLError(part: part) }
            accumulator = accumulator << 6 | UInt32(value)
            count += 1
            if count == 4 {
                output.append(UInt8(accumulator >> 16 & 0xFF))
                output.append(UInt8(accumulator >> 8 & 0xFF))
                output.append(UInt8(accumulator & 0xFF))
                accumulator = 0
                count = 0
            }
        }
        switch count {
        case 0: break
        case 2: output.append(UInt8(accumulator >> 4 & 0xFF))
        case 3:
            output.append(UInt8(accumulator >> 10 & 0xFF))
            output.append(UInt8(accumulator >> 2 & 0xFF))
        default: throw Base64URLError(part: part)
        }
        return output
    }
}

extension Base64URL {
    /// base64url as forms and tokens carry it (`creq`, `cres`, `threeDSMethodData`,
    /// `threeDSSessionData`): the specification says unpadded, and some senders pad anyway,
    /// so up to two trailing `=` are let through.
    public static func decodeLeniently(_ text: some StringProtocol, part: String = "value") throws(Base64URLError) -> [UInt8] {
        var unpadded = Substring(text)
        while unpadded.hasSuffix("="), text.count - unpadded.count < 2 { unpadded = unpadded.dropLast() }
        return try decode(unpadded, part: part)
    }

    /// Why ``decodeObject(_:)`` could not read a JSON object.
    public enum ObjectFailure: Error, Equatable { case notBase64URL, notJSONObject }

    /// The JSON object such a field or token carries, and its bytes as they came.
    public static func decodeObject(_ text: some StringProtocol) throws(ObjectFailure) -> (object: JSONValue, bytes: [UInt8]) {
        guard let bytes = try? decodeLeniently(text) else { throw .notBase64URL }
        guard let json = try? JSONReader.parse(bytes).value, json.objectMembers != nil else { throw .notJSONObject }
        return (json, bytes)
    }
}

/// Text that is not unpadded base64url; `part` names it.
public struct Base64URLError: Error, Equatable, CustomStringConvertible {
    public let part: String
    public init(part: String) { self.part = part }
    public var description: String { "\(part) is not unpadded base64url" }
}

extension Array where Element == UInt8 {
    /// Lower-case hex, for logs and tests.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }
}
