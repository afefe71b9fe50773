public import EMVCrypto
public import JOSE
import JSON

/// A CRes sealed under the secure channel, or broken on purpose one way per
/// `CResEncryptionFault`; SDKs must answer each with Erro 302.
public enum FaultyCRes {
    public static func seal(_ plaintext: [UInt8], channel: SecureChannel, encryption: ContentEncryptionAlgorithm, kid: String,
                     faults: [CResEncryptionFault]) throws(JOSEError) -> String {
        let key = faults.contains(.wrongKey) ? SecureChannel(sharedSecret: randomBytes(32), sdkReferenceNumber: "harness-wrong-key") : channel
        let sealedKid = faults.contains(.wrongKid) ? TransactionIdentifier.make() : kid
        var sealed = try key.seal(plaintext, encryption: encryption, kid: sealedKid, direction: .acsToSDK)
        if faults.contains(.badTag) { sealed = try alteringPart(4, of: sealed) }
        if faults.contains(.base64Padding) {
            // Base64 padding on every part that would have it: the 16-byte tag always does.
            sealed = sealed.split(separator: ".", omittingEmptySubsequences: false)
                .map { $0.isEmpty ? String($0) : $0 + String(repeating: "=", count: (4 - $0.count % 4) % 4) }
                .joined(separator: ".")
        }
        return sealed
    }
}

/// A JOSE compact serialization with one bit of part `index` (a signature or a tag) flipped.
func alteringPart(_ index: Int, of compact: String) throws(JOSEError) -> String {
    var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    var bytes = try JOSEError.decodingBase64URL(parts[index])
    bytes[bytes.count / 2] ^= 0x01
    parts[index] = Base64URL.encode(bytes)
    return parts.joined(separator: ".")
}
