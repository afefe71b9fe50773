import Foundation
import JSON

/// The protected header of a JWE.
public struct JWEHeader: Codable, Sendable, Equatable {
    public var alg: String
    public var enc: String
    public var kid: String?
    public var epk: JWK?
    public var apu: String?
    public var apv: String?
    public var zip: String?
    public var typ: String?
    public var cty: String?
    public var crit: [String]?

    public init(alg: String, enc: String, kid: String? = nil, epk: JWK? = nil, apu: String? = nil, apv: String? = nil) {
        self.alg = alg
        self.enc = enc
        self.kid = kid
        self.epk = epk
        self.apu = apu
        self.apv = apv
    }
}

/// Whom a JWE is encrypted to.
public enum JWERecipient: Sendable {
    /// RSA-OAEP or RSA-OAEP-256 key transport.
    case rsa(PublicKey, KeyManagementAlgorithm)
    /// ECDH-ES direct agreement with a fresh ephemeral key (apu/apv go into the header).
    case ecdhES(PublicKey, partyUInfo: [UInt8] = [], partyVInfo: [UInt8] = [])
    /// A content key both sides already share (`alg` "dir").
    case direct(key: [UInt8])
}

/// A JWE in compact serialization (RFC 7516).
public struct JWE: Sendable {
    public let header: JWEHeader
    public let encodedHeader: Substring
    public let encryptedKey: [UInt8]
    public let iv: [UInt8]
    public let ciphertext: [UInt8]
    public let tag: [UInt8]

    /// The protected header's `kid` of a compact JWE's bytes, read without parsing the rest: where the secure channel's
    /// CReq names its transaction (its acsTransID). Nil when there is none to read.
    public static func keyID(compact bytes: [UInt8]) -> String? {
        guard let dot = bytes.firstIndex(of: UInt8(ascii: ".")),
              let header = try? Base64URL.decode(String(decoding: bytes[..<dot], as: UTF8.self)) else { return nil }
        return (try? JSONReader.parse(header).value)?["kid"]?.stringValue
    }

    /// Parses without decrypting; unknown `alg`/`enc` and `zip` are refused here.
    public init(compact: String) throws(JOSEError) {
        let parts = try CompactParts(compact, count: 5)
        header = try decodeHeader(parts.header, as: JWEHeader.self, understood: [])
        guard KeyManagementAlgorithm(rawValue: header.alg) != nil else { throw .unsupportedAlgorithm(header.alg) }
        guard ContentEncryptionAlgorithm(rawValue: header.enc) != nil else { throw .unsupportedAlgorithm(header.enc) }
        guard header.zip == nil else { throw .unsupportedAlgorithm("zip \(header.zip ?? "")") }
        encodedHeader = parts.encoded[0]
        encryptedKey = try parts.decode(1, "encrypted key")
        iv = try parts.decode(2, "iv")
        ciphertext = try parts.decode(3, "ciphertext")
        tag = try parts.decode(4, "authentication tag")
    }

    public var keyManagement: KeyManagementAlgorithm { KeyManagementAlgorithm(rawValue: header.alg) ?? .dir }
    public var contentEncryption: ContentEncryptionAlgorithm { ContentEncryptionAlgorithm(rawValue: header.enc) ?? .a128cbcHS256 }

    /// Encrypts `plaintext` to `recipient`. `iv` and `contentKey` are for known-answer tests;
    /// leave them nil to get fresh random values.
    public static func encrypt(_ plaintext: [UInt8], to recipient: JWERecipient, encryption: ContentEncryptionAlgorithm,
                               kid: String? = nil, iv: [UInt8]? = nil, contentKey: [UInt8]? = nil) throws(JOSEError) -> String {
        var header: JWEHeader
        var key: [UInt8]
        var encryptedKey: [UInt8] = []
        switch recipient {
        case .rsa(let publicKey, let algorithm):
            guard let digest = algorithm.oaepDigest else { throw .algorithmKeyMismatch(algorithm: algorithm.rawValue, key: "RSA") }
            header = JWEHeader(alg: algorithm.rawValue, enc: encryption.rawValue, kid: kid)
            key = contentKey ?? randomBytes(encryption.keyLength)
            encryptedKey = try publicKey.encryptOAEP(key, digest: digest)
        case .ecdhES(let publicKey, let partyU, let partyV):
            let ephemeral = try PrivateKey.generateP256()
            header = JWEHeader(alg: KeyManagementAlgorithm.ecdhES.rawValue, enc: encryption.rawValue, kid: kid,
                               epk: ephemeral.publicKey.jwk(),
                               apu: partyU.isEmpty ? nil : Base64URL.encode(partyU),
                               apv: partyV.isEmpty ? nil : Base64URL.encode(partyV))
            key = ConcatKDF.deriveKey(sharedSecret: try ephemeral.sharedSecret(with: publicKey), keyBitLength: encryption.keyLength * 8,
                                      algorithmID: Array(encryption.rawValue.utf8), partyUInfo: partyU, partyVInfo: partyV)
        case .direct(let shared):
            header = JWEHeader(alg: KeyManagementAlgorithm.dir.rawValue, enc: encryption.rawValue, kid: kid)
            key = shared
        }
        return try seal(plaintext, header: header, contentKey: key, encryptedKey: encryptedKey, iv: iv)
    }

    /// Encrypts with a given header and content key (the 3DS secure channel derives its own).
    public static func seal(_ plaintext: [UInt8], header: JWEHeader, contentKey: [UInt8], encryptedKey: [UInt8] = [],
                            iv: [UInt8]? = nil) throws(JOSEError) -> String {
        guard let encryption = ContentEncryptionAlgorithm(rawValue: header.enc) else { throw .unsupportedAlgorithm(header.enc) }
        let encodedHeader = encodeHeader(header)
        let iv = iv ?? randomBytes(encryption.ivLength)
        let sealed = try encryption.seal(plaintext, key: contentKey, iv: iv, aad: Array(encodedHeader.utf8))
        return [encodedHeader, Base64URL.encode(encryptedKey), Base64URL.encode(iv),
                Base64URL.encode(sealed.ciphertext), Base64URL.encode(sealed.tag)].joined(separator: ".")
    }

    /// Decrypts with a private key (RSA-OAEP, RSA-OAEP-256, ECDH-ES with the header's apu/apv).
    /// Every failure after parsing is ``JOSEError/decryptionFailed(reason:)``.
    public func decrypt(with privateKey: PrivateKey) throws(JOSEError) -> [UInt8] {
        let encryption = contentEncryption
        let key: [UInt8]
        switch keyManagement {
        case .rsaOAEP, .rsaOAEP256:
            guard privateKey.kind == .rsa else { throw .algorithmKeyMismatch(algorithm: header.alg, key: privateKey.kind.rawValue) }
            key = try privateKey.decryptOAEP(encryptedKey, digest: keyManagement.oaepDigest ?? .sha256)
        case .ecdhES:
            guard privateKey.kind == .ecP256 else { throw .algorithmKeyMismatch(algorithm: header.alg, key: privateKey.kind.rawValue) }
            guard encryptedKey.isEmpty else { throw .decryptionFailed(reason: "ECDH-ES carries no encrypted key") }
            let partyU = try header.apu.map { value throws(JOSEError) in try JOSEError.decodingBase64URL(value, part: "apu") } ?? []
            let partyV = try header.apv.map { value throws(JOSEError) in try JOSEError.decodingBase64URL(value, part: "apv") } ?? []
            key = ConcatKDF.deriveKey(sharedSecret: try ephemeralSecret(privateKey), keyBitLength: encryption.keyLength * 8,
                                      algorithmID: Array(encryption.rawValue.utf8), partyUInfo: partyU, partyVInfo: partyV)
        case .dir:
            throw .algorithmKeyMismatch(algorithm: "dir", key: "private")
        }
        return try decrypt(contentKey: key)
    }

    /// ECDH with the header's `epk`: for callers that derive the content key their own
    /// way (3DS device data uses PartyVInfo = DS id and an empty AlgorithmID).
    public func ephemeralSecret(_ privateKey: PrivateKey) throws(JOSEError) -> [UInt8] {
        guard let epk = header.epk else { throw .invalidHeader("ECDH needs an epk") }
        do { return try privateKey.sharedSecret(with: epk) } catch {
            switch error {
            case .crypto, .algorithmKeyMismatch: throw error
            default: throw .invalidHeader("epk: \(error.description)")
            }
        }
    }

    /// Decrypts with the content key itself (`dir`, or a key derived by the caller).
    public func decrypt(contentKey: [UInt8]) throws(JOSEError) -> [UInt8] {
        try contentEncryption.open(ciphertext, key: contentKey, iv: iv, aad: Array(encodedHeader.utf8), tag: tag)
    }
}
