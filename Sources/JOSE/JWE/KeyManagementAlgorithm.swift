/// JWE key management (RFC 7518 §4) that 3DS uses.
public enum KeyManagementAlgorithm: String, Sendable, CaseIterable, Codable {
    case rsaOAEP = "RSA-OAEP"
    case rsaOAEP256 = "RSA-OAEP-256"
    /// ECDH-ES direct key agreement: the derived key is the content key.
    case ecdhES = "ECDH-ES"
    /// A shared symmetric key used directly.
    case dir = "dir"

    var oaepDigest: DigestAlgorithm? {
        switch self {
        case .rsaOAEP: .sha1
        case .rsaOAEP256: .sha256
        default: nil
        }
    }
}
