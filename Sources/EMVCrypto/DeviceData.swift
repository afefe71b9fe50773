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
    /// The DS CA root: what a Split-SDK server's certificate chains to (`sdkServerSignedContent`).
    public let caRoot: Certificate?

    public init(rsa: PrivateKey?, ec: PrivateKey?, caRoot: Certificate? = nil) {
        self.rsa = rsa
        self.ec = ec
        self.caRoot = caRoot
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
            // The SDK's ephemeral key serves this one agreement.
            let agreement = try EphemeralAgreement(with: dsKey.jwk())
            let key = contentKey(sharedSecret: agreement.sharedSecret, directoryServerID: directoryServerID, encryption: encryption)
            let alg: KeyManagementAlgorithm = style == .android ? .dir : .ecdhES
            let header = JWEHeader(alg: alg.rawValue, enc: encryption.rawValue, kid: kid, epk: agreement.publicKey)
            return try JWE.seal(plaintext, header: header, contentKey: key)
        }
    }

    /// Decrypts `sdkEncData` with the DS key its `alg` calls for.
    public static func decrypt(_ compact: String, keys: DirectoryServerKeys, directoryServerID: String) throws(DeviceDataError) -> [UInt8] {
        try open(compact, keys: keys, directoryServerID: directoryServerID).plaintext
    }

    /// Decrypts `sdkEncData` and gives its header beside the plaintext, for `headerProblems`.
    public static func open(_ compact: String, keys: DirectoryServerKeys, directoryServerID: String) throws(DeviceDataError)
        -> (plaintext: [UInt8], header: JWEHeader) {
        do {
            let jwe = try JWE(compact: compact)
            return (try plaintext(of: jwe, keys: keys, directoryServerID: directoryServerID), jwe.header)
        } catch let error as DeviceDataError {
            throw error
        } catch let error as JOSEError {
            throw DeviceDataError(reason: "sdkEncData: \(error.description)")
        } catch {
            throw DeviceDataError(reason: "sdkEncData: \(error)")
        }
    }

    /// The algorithms the SDK specification names for the device data: RSA-OAEP-256 to an RSA DS key,
    /// ECDH-ES (P-256) to an EC one, with A128CBC-HS256 or A128GCM. What the DS decrypts besides them
    /// (RSA-OAEP with SHA-1, 256-bit content encryption) is not the specification's.
    public static let allowedKeyManagement: Set<String> = [KeyManagementAlgorithm.rsaOAEP256.rawValue, KeyManagementAlgorithm.ecdhES.rawValue]
    public static let allowedContentEncryption: Set<String> = [ContentEncryptionAlgorithm.a128cbcHS256.rawValue, ContentEncryptionAlgorithm.a128gcm.rawValue]

    /// What in a device-data header the specification does not allow. `alg` "dir" with an `epk` is
    /// ECDH-ES as Android SDKs write it (Stripe's 3ds2sdk; shared/PROTOCOL.md): read so, not failed.
    public static func headerProblems(_ header: JWEHeader) -> [String] {
        var failures: [String] = []
        if header.alg == KeyManagementAlgorithm.dir.rawValue, header.epk != nil {
            // ECDH-ES under Android's name.
        } else if !allowedKeyManagement.contains(header.alg) {
            failures.append("alg \(header.alg): the specification allows \(allowedKeyManagement.sorted().joined(separator: " or "))")
        }
        if !allowedContentEncryption.contains(header.enc) {
            failures.append("enc \(header.enc): the specification allows \(allowedContentEncryption.sorted().joined(separator: " or "))")
        }
        if let curve = header.epk?.crv, curve != "P-256" { failures.append("epk on curve \(curve): the SDK's ephemeral key is P-256") }
        return failures
    }

    private static func plaintext(of jwe: JWE, keys: DirectoryServerKeys, directoryServerID: String) throws -> [UInt8] {
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
    }

    static func contentKey(sharedSecret: [UInt8], directoryServerID: String, encryption: ContentEncryptionAlgorithm) -> [UInt8] {
        ConcatKDF.deriveKey(sharedSecret: sharedSecret, keyBitLength: encryption.keyLength * 8, algorithmID: [],
                            partyUInfo: [], partyVInfo: Array(directoryServerID.utf8))
    }
}
