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
        if let encoded = bytes.withContiguousStorageIfAvailable(encode(buffer:)) { return encoded }
        return Array(bytes).withUnsafeBufferPointer(encode(buffer:))
    }

    public static func encode(_ text: String) -> String { encode(text.utf8) }

    /// Written straight into the string's storage: a signed content, a CRes, a device-data JWE are kilobytes.
    private static func encode(buffer input: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: (input.count * 4 + 2) / 3) { output in
            alphabet.withUnsafeBufferPointer { alphabet in
                var index = 0, position = 0
                while index + 3 <= input.count {
                    let chunk = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
                    output[position] = alphabet[Int(chunk >> 18 & 63)]
                    output[position + 1] = alphabet[Int(chunk >> 12 & 63)]
                    output[position + 2] = alphabet[Int(chunk >> 6 & 63)]
                    output[position + 3] = alphabet[Int(chunk & 63)]
                    index += 3
                    position += 4
                }
                let rest = input.count - index
                if rest > 0 {
                    let chunk = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
                    output[position] = alphabet[Int(chunk >> 18 & 63)]
                    output[position + 1] = alphabet[Int(chunk >> 12 & 63)]
                    position += 2
                    if rest == 2 {
                        output[position] = alphabet[Int(chunk >> 6 & 63)]
                        position += 1
                    }
                }
                return position
            }
        }
    }

    /// Decodes; `part` names the input in the error ("protected header", "iv"...).
    public static func decode(_ text: some StringProtocol, part: String = "value") throws(Base64URLError) -> [UInt8] {
        let decoded = text.utf8.withContiguousStorageIfAvailable(decode(buffer:)) ?? Array(text.utf8).withUnsafeBufferPointer(decode(buffer:))
        guard let decoded else { throw Base64URLError(part: part) }
        return decoded
    }

    /// Four characters at a time into the array's storage; nil for a byte outside the alphabet or an impossible length.
    private static func decode(buffer input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let rest = input.count % 4
        guard rest != 1 else { return nil }
        var outside: UInt8 = 0
        let output = [UInt8](unsafeUninitializedCapacity: input.count / 4 * 3 + max(0, rest - 1)) { output, count in
            values.withUnsafeBufferPointer { values in
                // A byte outside the alphabet reads 0xFF: its high bits, or-ed into `outside`, say so after the loop.
                func value(_ index: Int) -> UInt32 {
                    let value = values[Int(input[index])]
                    outside |= value
                    return UInt32(value)
                }
                var index = 0, position = 0
                while index + 4 <= input.count {
                    let chunk = value(index) << 18 | value(index + 1) << 12 | value(index + 2) << 6 | value(index + 3)
                    output[position] = UInt8(truncatingIfNeeded: chunk >> 16)
                    output[position + 1] = UInt8(truncatingIfNeeded: chunk >> 8)
                    output[position + 2] = UInt8(truncatingIfNeeded: chunk)
                    index += 4
                    position += 3
                }
                if rest == 2 {
                    output[position] = UInt8(truncatingIfNeeded: (value(index) << 6 | value(index + 1)) >> 4)
                    position += 1
                } else if rest == 3 {
                    let chunk = value(index) << 12 | value(index + 1) << 6 | value(index + 2)
                    output[position] = UInt8(truncatingIfNeeded: chunk >> 10)
                    output[position + 1] = UInt8(truncatingIfNeeded: chunk >> 2)
                    position += 2
                }
                count = position
            }
        }
        return outside & 0xC0 == 0 ? output : nil
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
