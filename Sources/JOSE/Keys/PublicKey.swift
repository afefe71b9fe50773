import COpenSSL

/// An RSA or EC P-256 public key.
public struct PublicKey: Sendable, Equatable {
    let key: EVPKey

    init(_ key: EVPKey) { self.key = key }

    public var kind: KeyKind { key.kind }
    /// Modulus size for RSA, 256 for P-256.
    public var bitLength: Int { key.bits }

    /// Reads a `PUBLIC KEY` (SubjectPublicKeyInfo) PEM, or takes the key of a certificate PEM.
    public init(pem: String) throws(JOSEError) {
        let bytes = Array(pem.utf8)
        if pem.contains("BEGIN CERTIFICATE") {
            self = try Certificate(pem: pem).publicKey
            return
        }
        guard let pointer = try withReadBIO(bytes, { PEM_read_bio_PUBKEY($0, nil, nil, nil) }) else {
            throw .invalidPEM("no PUBLIC KEY block\(openSSLError())")
        }
        key = try EVPKey(pointer)
    }

    /// Reads DER SubjectPublicKeyInfo.
    public init(der: [UInt8]) throws(JOSEError) {
        let pointer: OpaquePointer? = der.withUnsafeBytes { raw in
            var cursor: UnsafePointer<UInt8>? = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return d2i_PUBKEY(nil, &cursor, raw.count)
        }
        guard let pointer else { throw .invalidDER("not a SubjectPublicKeyInfo\(openSSLError())") }
        key = try EVPKey(pointer)
    }

    /// DER SubjectPublicKeyInfo.
    public var derRepresentation: [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let count = i2d_PUBKEY(key.pointer, &output)
        guard count > 0, let output else { return [] }
        defer { shim_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(count)))
    }

    public var pemRepresentation: String {
        String(decoding: (try? withMemoryBIO { PEM_write_bio_PUBKEY($0, key.pointer) }) ?? [], as: UTF8.self)
    }

    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
        EVP_PKEY_eq(lhs.key.pointer, rhs.key.pointer) == 1
    }

    // MARK: operations

    /// Verifies a JOSE-form signature (raw r||s for ES256).
    public func verify(signature: [UInt8], of data: [UInt8], algorithm: SignatureAlgorithm) throws(JOSEError) -> Bool {
        try algorithm.check(kind)
        var der = signature
        if kind == .ecP256 {
            guard let converted = ECDSASignature.der(fromRaw: signature) else { return false }
            der = converted
        }
        guard let context = EVP_MD_CTX_new() else { throw .crypto("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context, &keyContext, algorithm.digest.md, nil, key.pointer) == 1 else { throw .openSSLCallFailed() }
        try algorithm.configure(keyContext)
        let result = EVP_DigestVerify(context, der, der.count, data, data.count)
        ERR_clear_error()
        return result == 1
    }

    /// RSA-OAEP encryption with the given hash (SHA-1 for RSA-OAEP, SHA-256 for RSA-OAEP-256).
    public func encryptOAEP(_ plaintext: [UInt8], digest: DigestAlgorithm) throws(JOSEError) -> [UInt8] {
        guard kind == .rsa else { throw .algorithmKeyMismatch(algorithm: "RSA-OAEP", key: kind.rawValue) }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { throw .openSSLCallFailed() }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_encrypt_init(context) == 1,
              EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING) == 1,
              EVP_PKEY_CTX_set_rsa_oaep_md(context, digest.md) == 1,
              EVP_PKEY_CTX_set_rsa_mgf1_md(context, digest.md) == 1 else { throw .openSSLCallFailed() }
        var length = 0
        guard EVP_PKEY_encrypt(context, nil, &length, plaintext, plaintext.count) == 1 else { throw .openSSLCallFailed() }
        var output = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_encrypt(context, &output, &length, plaintext, plaintext.count) == 1 else { throw .openSSLCallFailed() }
        return Array(output.prefix(length))
    }
}

/// Conversions between DER ECDSA signatures (X.509, WebAuthn) and JOSE's raw r||s (RFC 7518 §3.4).
public enum ECDSASignature {
    public static func raw(fromDER der: [UInt8], coordinateLength: Int = 32) -> [UInt8]? {
        let signature: OpaquePointer? = der.withUnsafeBytes { raw in
            var cursor: UnsafePointer<UInt8>? = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return d2i_ECDSA_SIG(nil, &cursor, raw.count)
        }
        guard let signature else { return nil }
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        var output = [UInt8](repeating: 0, count: coordinateLength * 2)
        guard BN_bn2binpad(r, &output, Int32(coordinateLength)) == coordinateLength,
              output.withUnsafeMutableBufferPointer({ BN_bn2binpad(s, $0.baseAddress! + coordinateLength, Int32(coordinateLength)) }) == coordinateLength
        else { return nil }
        return output
    }

    public static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let r = BN_bin2bn(raw, 32, nil)
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        var output: UnsafeMutablePointer<UInt8>?
        let count = i2d_ECDSA_SIG(signature, &output)
        guard count > 0, let output else { return nil }
        defer { shim_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(count)))
    }
}
