import JOSE
import JSON

/// Fresh transaction ids and authentication values from OpenSSL's generator: Foundation's
/// `UUID()` and `UInt8.random` each cost a system call, a cost the AReq path pays several times.
public enum TransactionIdentifier {
    /// A random (version 4) UUID in the canonical lower-case form EMV ids use.
    public static func make() -> String {
        var bytes = randomBytes(16)
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.hexString
        let utf8 = Array(hex.utf8)
        let groups = [utf8[0..<8], utf8[8..<12], utf8[12..<16], utf8[16..<20], utf8[20..<32]]
        return groups.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "-")
    }

    /// A CAVV-like authentication value: 20 random bytes in standard base64, 28 characters.
    public static func authenticationValue() -> String {
        Base64URL.encode(randomBytes(20)).standardBase64Padded
    }
}

private extension String {
    /// Base64url without padding turned into standard base64 with padding.
    var standardBase64Padded: String {
        let standard = String(decoding: utf8.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "+") : $0 == UInt8(ascii: "_") ? UInt8(ascii: "/") : $0 },
                              as: UTF8.self)
        return standard + String(repeating: "=", count: (4 - utf8.count % 4) % 4)
    }
}
