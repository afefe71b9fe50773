import EMV3DS
public import JOSE

/// How an SDK encrypts its device data (AReq `sdkEncData`) to the DS key.
public enum DeviceDataStyle: String, Sendable, CaseIterable {
    /// Android SDKs with an EC DS key: `alg` "dir" with an `epk`, EMV Concat KDF.
    case android
    /// iOS SDKs with an EC DS key: `alg` "ECDH-ES", EMV Concat KDF.
    case iosEC = "ios-ec"
    /// Either platform with an RSA DS key: RSA-OAEP-256.
    case rsa

    public var keyVariant: TestPKI.KeyVariant { self == .rsa ? .rsa : .ec }
}

/// The DS's private keys for device data.
public struct DirectoryServerKeys: Sendable {
    public let rsa: PrivateKey?
    public let ec: PrivateKey?

    public init(rsa: PrivateKey?, ec: PrivateKey?) {
        self.rsa = rsa
        self.ec = ec
    }
}

/// Why `sdkEncData` could not be decrypted (answered with Erro 302).
public struct DeviceDataError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public init(reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Device data encryption as the EMV 3DS SDK specification has it. The EC variants derive
/// the content key with the Concat KDF using an empty AlgorithmID and PartyVInfo = the DS id
/// (RID), which a stock JOSE ECDH-ES does not: the derivation lives here, for both sides.
public enum DeviceData {
    /// Encrypts `plaintext` as an SDK of `style` does, to the DS key `dsKey`.
    public static func encrypt(_ plaintext: [UInt8], to dsKey: PublicKey, directoryServerID: String, style: DeviceDataStyle,
                               encryption: ContentEncryptionAlgorithm = .a128cbcHS256, kid: String? = nil) throws(JOSEError) -> String {
        switch style {
        case .rsa:
            return try JWE.encrypt(plaintext, to: .rsa(dsKey, .rsaOAEP256), encryption: encryption, kid: kid)
        case .android, .iosEC:
            let ephemeral = try PrivateKey.generateP256()
            let key = contentKey(sharedSecret: try ephemeral.sharedSecret(with: dsKey), directoryServerID: directoryServerID, encryption: encryption)
            let alg: KeyManagementAlgorithm = style == .android ? .dir : .ecdhES
            let header = JWEHeader(alg: alg.rawValue, enc: encryption.rawValue, kid: kid, epk: ephemeral.publicKey.jwk())
            return try JWE.seal(plaintext, header: header, contentKey: key)
        }
    }

    /// Decrypts `sdkEncData` with the DS key its `alg` calls for.
    public static func decrypt(_ compact: String, keys: DirectoryServerKeys, directoryServerID: String) throws(DeviceDataError) -> [UInt8] {
        do {
            let jwe = try JWE(compact: compact)
            switch jwe.keyManagement {
            case .rsaOAEP, .rsaOAEP256:
                guard let key = keys.rsa else { throw DeviceDataError(reason: "\(jwe.header.alg) needs an RSA DS key; this DS has none") }
                return try jwe.decrypt(with: key)
            case .ecdhES, .dir:
                guard let key = keys.ec else { throw DeviceDataError(reason: "\(jwe.header.alg) needs an EC DS key; this DS has none") }
                guard jwe.encryptedKey.isEmpty else { throw DeviceDataError(reason: "\(jwe.header.alg) must have an empty encrypted key") }
                let secret = try jwe.ephemeralSecret(key)
                return try jwe.decrypt(contentKey: contentKey(sharedSecret: secret, directoryServerID: directoryServerID,
                                                              encryption: jwe.contentEncryption))
            }
        } catch let error as DeviceDataError {
            throw error
        } catch let error as JOSEError {
            throw DeviceDataError(reason: "sdkEncData: \(error.description)")
        } catch {
            throw DeviceDataError(reason: "sdkEncData: \(error)")
        }
    }

    static func contentKey(sharedSecret: [UInt8], directoryServerID: String, encryption: ContentEncryptionAlgorithm) -> [UInt8] {
        ConcatKDF.deriveKey(sharedSecret: sharedSecret, keyBitLength: encryption.keyLength * 8, algorithmID: [],
                            partyUInfo: [], partyVInfo: Array(directoryServerID.utf8))
    }
}
