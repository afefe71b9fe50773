import COpenSSL

/// JWS signature algorithms (RFC 7518 §3) that 3DS uses: PS256 and ES256 for
/// `acsSignedContent`, RS256 for completeness.
public enum SignatureAlgorithm: String, Sendable, CaseIterable, Codable {
    case rs256 = "RS256"
    case ps256 = "PS256"
    case es256 = "ES256"

    var digest: DigestAlgorithm { .sha256 }

    var keyKind: KeyKind { self == .es256 ? .ecP256 : .rsa }

    func check(_ kind: KeyKind) throws(JOSEError) {
        guard kind == keyKind else { throw .algorithmKeyMismatch(algorithm: rawValue, key: kind.rawValue) }
    }

    /// PSS with MGF1-SHA-256 and a salt as long as the hash (RFC 7518 §3.5).
    func configure(_ context: OpaquePointer?) throws(JOSEError) {
        guard self == .ps256 else { return }
        guard EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1,
              EVP_PKEY_CTX_set_rsa_pss_saltlen(context, 32) == 1,
              EVP_PKEY_CTX_set_rsa_mgf1_md(context, EVP_sha256()) == 1 else { throw .openSSLCallFailed() }
    }
}
