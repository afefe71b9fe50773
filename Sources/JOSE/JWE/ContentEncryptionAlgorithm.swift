import COpenSSL

/// JWE content encryption (RFC 7518 §5): AES-CBC with HMAC-SHA-2, and AES-GCM.
public enum ContentEncryptionAlgorithm: String, Sendable, CaseIterable, Codable {
    case a128cbcHS256 = "A128CBC-HS256"
    case a256cbcHS512 = "A256CBC-HS512"
    case a128gcm = "A128GCM"
    case a256gcm = "A256GCM"

    /// Length of the content encryption key in bytes (MAC and AES keys together for CBC).
    public var keyLength: Int {
        switch self {
        case .a128cbcHS256: 32
        case .a256cbcHS512: 64
        case .a128gcm: 16
        case .a256gcm: 32
        }
    }

    public var ivLength: Int { isGCM ? 12 : 16 }
    var isGCM: Bool { self == .a128gcm || self == .a256gcm }
    var tagLength: Int { self == .a256cbcHS512 ? 32 : 16 }
    private var hmac: DigestAlgorithm { self == .a256cbcHS512 ? .sha512 : .sha256 }

    private var cipher: OpaquePointer {
        switch self {
        case .a128cbcHS256: EVP_aes_128_cbc()
        case .a256cbcHS512: EVP_aes_256_cbc()
        case .a128gcm: EVP_aes_128_gcm()
        case .a256gcm: EVP_aes_256_gcm()
        }
    }

    /// Encrypts; returns ciphertext and authentication tag.
    public func seal(_ plaintext: [UInt8], key: [UInt8], iv: [UInt8], aad: [UInt8]) throws(JOSEError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        guard key.count == keyLength else { throw .invalidKeyLength(expected: keyLength, actual: key.count) }
        guard iv.count == ivLength else { throw .invalidIVLength(expected: ivLength, actual: iv.count) }
        if isGCM {
            return try gcm(encrypt: true, plaintext, key: key, iv: iv, aad: aad, tag: nil)
        }
        let half = keyLength / 2
        let ciphertext = try cbc(encrypt: true, plaintext, key: Array(key[half...]), iv: iv)
        let tag = cbcTag(macKey: Array(key[..<half]), aad: aad, iv: iv, ciphertext: ciphertext)
        return (ciphertext, tag)
    }

    /// Decrypts after checking the tag in constant time. Every failure, tag or padding,
    /// is ``JOSEError/decryptionFailed(reason:)``; for CBC the tag is checked before any
    /// decryption, so no padding oracle exists.
    public func open(_ ciphertext: [UInt8], key: [UInt8], iv: [UInt8], aad: [UInt8], tag: [UInt8]) throws(JOSEError) -> [UInt8] {
        guard key.count == keyLength else { throw .decryptionFailed(reason: "content key is \(key.count) bytes, \(rawValue) needs \(keyLength)") }
        guard iv.count == ivLength else { throw .decryptionFailed(reason: "IV is \(iv.count) bytes, \(rawValue) needs \(ivLength)") }
        guard tag.count == tagLength else { throw .decryptionFailed(reason: "tag is \(tag.count) bytes, \(rawValue) needs \(tagLength)") }
        if isGCM {
            return try gcm(encrypt: false, ciphertext, key: key, iv: iv, aad: aad, tag: tag).ciphertext
        }
        let half = keyLength / 2
        let expected = cbcTag(macKey: Array(key[..<half]), aad: aad, iv: iv, ciphertext: ciphertext)
        guard constantTimeEquals(expected, tag) else { throw .decryptionFailed(reason: "authentication tag mismatch") }
        do { return try cbc(encrypt: false, ciphertext, key: Array(key[half...]), iv: iv) } catch {
            throw .decryptionFailed(reason: "padding invalid")
        }
    }

    /// RFC 7518 §5.2.2.1: HMAC over AAD || IV || ciphertext || AL, truncated to half.
    private func cbcTag(macKey: [UInt8], aad: [UInt8], iv: [UInt8], ciphertext: [UInt8]) -> [UInt8] {
        let bits = UInt64(aad.count) * 8
        let al = (0..<8).map { UInt8((bits >> (56 - 8 * UInt64($0))) & 0xff) }
        return Array(hmac.hmac(key: macKey, aad + iv + ciphertext + al).prefix(tagLength))
    }

    private func cbc(encrypt: Bool, _ input: [UInt8], key: [UInt8], iv: [UInt8]) throws(JOSEError) -> [UInt8] {
        guard let context = EVP_CIPHER_CTX_new() else { throw .crypto("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_CipherInit_ex(context, cipher, nil, key, iv, encrypt ? 1 : 0) == 1 else { throw .openSSLCallFailed() }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        var final: Int32 = 0
        guard EVP_CipherUpdate(context, &output, &written, input, Int32(input.count)) == 1,
              output.withUnsafeMutableBufferPointer({ EVP_CipherFinal_ex(context, $0.baseAddress! + Int(written), &final) }) == 1 else {
            ERR_clear_error()
            throw .crypto("AES-CBC failed")
        }
        return Array(output.prefix(Int(written + final)))
    }

    private func gcm(encrypt: Bool, _ input: [UInt8], key: [UInt8], iv: [UInt8], aad: [UInt8], tag: [UInt8]?) throws(JOSEError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        guard let context = EVP_CIPHER_CTX_new() else { throw .crypto("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        var written: Int32 = 0
        guard EVP_CipherInit_ex(context, cipher, nil, nil, nil, encrypt ? 1 : 0) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_IVLEN, Int32(iv.count), nil) == 1,
              EVP_CipherInit_ex(context, nil, nil, key, iv, -1) == 1,
              EVP_CipherUpdate(context, nil, &written, aad, Int32(aad.count)) == 1 else { throw .openSSLCallFailed() }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        guard EVP_CipherUpdate(context, &output, &written, input, Int32(input.count)) == 1 else { throw .openSSLCallFailed() }
        if var tag {
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tag.count), &tag) == 1 else { throw .openSSLCallFailed() }
        }
        var final: Int32 = 0
        let finished = output.withUnsafeMutableBufferPointer { EVP_CipherFinal_ex(context, $0.baseAddress! + Int(written), &final) }
        guard finished == 1 else {
            ERR_clear_error()
            throw .decryptionFailed(reason: "authentication tag mismatch")
        }
        var outputTag = tag ?? []
        if encrypt {
            outputTag = [UInt8](repeating: 0, count: 16)
            guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &outputTag) == 1 else { throw .openSSLCallFailed() }
        }
        return (Array(output.prefix(Int(written + final))), outputTag)
    }
}
