import EMVCrypto
import JOSE
import Scenarios

/// A CRes sealed under the secure channel, or broken on purpose one way per
/// `CResEncryptionFault`; SDKs must answer each with Erro 302.
enum FaultyCRes {
    static func seal(_ plaintext: [UInt8], channel: SecureChannel, encryption: ContentEncryptionAlgorithm, kid: String,
                     faults: [CResEncryptionFault]) throws(JOSEError) -> String {
        let key = faults.contains(.wrongKey) ? SecureChannel(sharedSecret: randomBytes(32), sdkReferenceNumber: "harness-wrong-key") : channel
        let sealedKid = faults.contains(.wrongKid) ? TransactionIdentifier.make() : kid
        var parts = try key.seal(plaintext, encryption: encryption, kid: sealedKid, direction: .acsToSDK)
            .split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if faults.contains(.badTag) {
            var tag = try Base64URL.decode(parts[4])
            tag[0] ^= 0x01
            parts[4] = Base64URL.encode(tag)
        }
        if faults.contains(.base64Padding) {
            // Padding where base64 would have it (some part always needs it), and the IV padded as a marker.
            parts = parts.map { $0.isEmpty ? $0 : $0 + String(repeating: "=", count: (4 - $0.count % 4) % 4) }
            if parts.allSatisfy({ !$0.hasSuffix("=") }) { parts[2] += "==" }
        }
        return parts.joined(separator: ".")
    }
}
