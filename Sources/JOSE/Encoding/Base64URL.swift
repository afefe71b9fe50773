import Foundation

/// Base64url without padding (RFC 7515 §2), strict: padding, `+`, `/`, white space and
/// impossible lengths are rejected, as EMV 3DS SDKs reject them.
public enum Base64URL {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public static func encode(_ text: String) -> String { encode(Array(text.utf8)) }

    /// Decodes; `part` names the input in the error ("protected header", "iv"...).
    public static func decode(_ text: some StringProtocol, part: String = "value") throws(JOSEError) -> [UInt8] {
        guard text.utf8.count % 4 != 1,
              text.utf8.allSatisfy({ isAlphabet($0) }) else { throw .invalidBase64URL(part: part) }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: standard) else { throw .invalidBase64URL(part: part) }
        return Array(data)
    }

    private static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }
}

extension Array where Element == UInt8 {
    /// Lower-case hex, for logs and tests.
    public var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
