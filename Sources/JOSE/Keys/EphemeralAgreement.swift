import COpenSSL
import JSON

/// ECDH with a P-256 key made for this one agreement and let go at once: the ACS's side of the 3DS secure channel,
/// whose ephemeral private key serves no later message. Made and used on OpenSSL's EC_KEY interface
/// (`shim_ecdh_p256_ephemeral`), which costs about half of a key made as an `EVP_PKEY`, the peer imported as one,
/// and an `EVP_PKEY_derive`.
public struct EphemeralAgreement: Sendable {
    /// The ephemeral key's public half (kty, crv, x, y).
    public let publicKey: JWK
    /// Z: the x coordinate of the agreed point, 32 bytes.
    public let sharedSecret: [UInt8]

    /// Makes a key and agrees with `peer`, an EC P-256 public JWK; a peer off the curve is an invalid key.
    public init(with peer: JWK) throws(JOSEError) {
        let point = try peer.p256Point()
        var secret = [UInt8](repeating: 0, count: 32)
        var own = [UInt8](repeating: 0, count: 65)
        try JOSEError.checkP256Agreement(shim_ecdh_p256_ephemeral(point, point.count, &secret, &own))
        publicKey = JWK(kty: "EC", crv: "P-256", x: Base64URL.encode(own[1..<33]), y: Base64URL.encode(own[33..<65]))
        sharedSecret = secret
    }
}

extension JOSEError {
    /// What a P-256 agreement of `COpenSSL/shim.c` answered, as both ways of agreeing report it: 1 done; 0 the peer's
    /// point is not on the curve (an invalid key, OpenSSL's queue cleared); anything else a failure of OpenSSL.
    static func checkP256Agreement(_ result: Int32) throws(JOSEError) {
        switch result {
        case 1: return
        case 0:
            ERR_clear_error()
            throw .invalidKey("the point is not on the curve P-256")
        default: throw .openSSLCallFailed()
        }
    }
}
