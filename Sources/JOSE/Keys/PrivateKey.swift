import COpenSSL

/// An RSA or EC P-256 private key (with its public half).
public struct PrivateKey: Sendable {
    let key: EVPKey

    init(_ key: EVPKey) { self.key = key }

    public var kind: KeyKind { key.kind }

    /// A fresh RSA key of `bits` bits.
    public static func generateRSA(bits: Int = 2048) throws(JOSEError) -> PrivateKey {
        guard let pointer = shim_EVP_RSA_gen(UInt32(bits)) else { throw .openSSLCallFailed() }
        return PrivateKey(try EVPKey(pointer))
    }

    /// A fresh EC P-256 key.
    public static func generateP256() throws(JOSEError) -> PrivateKey {
        guard let pointer = shim_EVP_EC_gen("P-256") else { throw .openSSLCallFailed() }
        return PrivateKey(try EVPKey(pointer))
    }

    /// Reads a PKCS#8 (`PRIVATE KEY`), `RSA PRIVATE KEY` or `EC PRIVATE KEY` PEM.
    public init(pem: String) throws(JOSEError) {
        guard let pointer = try withReadBIO(Array(pem.utf8), { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) else {
            throw .invalidPEM("no private key block\(openSSLError())")
        }
        key = try EVPKey(pointer)
    }

    /// Reads DER PKCS#8 (or the traditional RSA/EC forms).
    public init(der: [UInt8]) throws(JOSEError) {
        let pointer: OpaquePointer? = der.withUnsafeBytes { raw in
            var cursor: UnsafePointer<UInt8>? = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return d2i_AutoPrivateKey(nil, &cursor, raw.count)
        }
        guard let pointer else { throw .invalidDER("not a private key\(openSSLError())") }
        key = try EVPKey(pointer)
    }

    /// Unencrypted PKCS#8 PEM.
    public var pemRepresentation: String {
        String(decoding: (try? withMemoryBIO { PEM_write_bio_PKCS8PrivateKey($0, key.pointer, nil, nil, 0, nil, nil) }) ?? [], as: UTF8.self)
    }

    /// Unencrypted PKCS#8 DER.
    public var derRepresentation: [UInt8] {
        (try? withMemoryBIO { i2d_PKCS8PrivateKey_bio($0, key.pointer, nil, nil, 0, nil, nil) }) ?? []
    }

    public var publicKey: PublicKey {
        // A key without the private part: for P-256 the point in a copy of the template key (the ACS
        // takes an ephemeral key's on every challenge; the SubjectPublicKeyInfo round trip below
        // builds an OpenSSL encoder and decoder, 12 % of a challenge's CPU), for RSA that round trip.
        if key.kind == .ecP256 {
            var point: UnsafeMutablePointer<UInt8>?
            let count = EVP_PKEY_get1_encoded_public_key(key.pointer, &point)
            if count > 0, let point {
                defer { shim_OPENSSL_free(point) }
                if let copy = try? EVPKey.p256Public(point: Array(UnsafeBufferPointer(start: point, count: count))) { return PublicKey(copy) }
            }
        }
        guard let key = try? PublicKey(der: PublicKey(key).derRepresentation) else { preconditionFailure("own public key does not parse") }
        return key
    }

    // MARK: operations

    /// Signs `data`; ES256 signatures come out in JOSE's raw r||s form.
    public func sign(_ data: [UInt8], algorithm: SignatureAlgorithm) throws(JOSEError) -> [UInt8] {
        try algorithm.check(kind)
        guard let context = EVP_MD_CTX_new() else { throw .crypto("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit(context, &keyContext, algorithm.digest.md, nil, key.pointer) == 1 else { throw .openSSLCallFailed() }
        try algorithm.configure(keyContext)
        var length = 0
        guard EVP_DigestSign(context, nil, &length, data, data.count) == 1 else { throw .openSSLCallFailed() }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, data, data.count) == 1 else { throw .openSSLCallFailed() }
        signature = Array(signature.prefix(length))
        if kind == .ecP256 {
            guard let raw = ECDSASignature.raw(fromDER: signature) else { throw .crypto("ECDSA signature conversion") }
            return raw
        }
        return signature
    }

    /// RSA-OAEP decryption. Any failure is ``JOSEError/decryptionFailed``: the reason is
    /// not told to whoever sent the ciphertext.
    public func decryptOAEP(_ ciphertext: [UInt8], digest: DigestAlgorithm) throws(JOSEError) -> [UInt8] {
        guard kind == .rsa else { throw .algorithmKeyMismatch(algorithm: "RSA-OAEP", key: kind.rawValue) }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { throw .openSSLCallFailed() }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_decrypt_init(context) == 1,
              EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING) == 1,
              EVP_PKEY_CTX_set_rsa_oaep_md(context, digest.md) == 1,
              EVP_PKEY_CTX_set_rsa_mgf1_md(context, digest.md) == 1 else { throw .openSSLCallFailed() }
        var length = ciphertext.count
        var output = [UInt8](repeating: 0, count: max(length, 512))
        guard EVP_PKEY_decrypt(context, &output, &length, ciphertext, ciphertext.count) == 1 else {
            ERR_clear_error()
            throw .decryptionFailed(reason: "RSA-OAEP key unwrap failed")
        }
        return Array(output.prefix(length))
    }

    /// Raw ECDH with a P-256 JWK (an `epk`): Z, 32 bytes. The point goes to OpenSSL as it is, not made a public key
    /// first: for a key that makes many agreements (the DS's device-data key) a third of the cost is the
    /// `EVP_PKEY` of the peer and its derive context (`shim_ecdh_p256`). A point off the curve is an invalid key.
    public func sharedSecret(with peer: JWK) throws(JOSEError) -> [UInt8] {
        guard kind == .ecP256 else { throw .algorithmKeyMismatch(algorithm: "ECDH", key: "\(kind.rawValue)/\(peer.kty)") }
        let point = try peer.p256Point()
        var secret = [UInt8](repeating: 0, count: 32)
        try JOSEError.checkP256Agreement(shim_ecdh_p256(key.pointer, point, point.count, &secret))
        return secret
    }

    /// Raw ECDH: the x coordinate of d·Q (Z), 32 bytes for P-256.
    public func sharedSecret(with peer: PublicKey) throws(JOSEError) -> [UInt8] {
        guard kind == .ecP256, peer.kind == .ecP256 else { throw .algorithmKeyMismatch(algorithm: "ECDH", key: "\(kind.rawValue)/\(peer.kind.rawValue)") }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { throw .openSSLCallFailed() }
        defer { EVP_PKEY_CTX_free(context) }
        var length = 0
        // The peer was checked when it was built (see EVPKey.fromData): no second validation here.
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer_ex(context, peer.key.pointer, 0) == 1,
              EVP_PKEY_derive(context, nil, &length) == 1 else { throw .openSSLCallFailed() }
        var secret = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_derive(context, &secret, &length) == 1 else { throw .openSSLCallFailed() }
        return Array(secret.prefix(length))
    }
}
