import JOSE
import JSON

/// Fresh transaction ids and authentication values from OpenSSL's generator: Foundation's
/// `UUID()` and `UInt8.random` each cost a system call, a cost the AReq path pays several times.
public enum TransactionIdentifier {
    /// A random (version 4) UUID in the canonical lower-case form EMV ids use.
    public static func make() -> String {
        var bytes = randomPublicBytes(16)
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        // Written digit by digit into the 36 bytes: hex text, five groups and a join cost ten allocations.
        return String(unsafeUninitializedCapacity: 36) { out in
            var position = 0
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    out[position] = UInt8(ascii: "-")
                    position += 1
                }
                out[position] = hexDigits[Int(byte >> 4)]
                out[position + 1] = hexDigits[Int(byte & 0x0F)]
                position += 2
            }
            return position
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A CAVV-like authentication value: 20 random bytes in standard base64, 28 characters.
    public static func authenticationValue() -> String {
        Base64URL.encode(randomPublicBytes(20)).standardBase64Padded
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
