public import JOSE

/// The 3DS app-channel secure channel between SDK and ACS: one 256-bit key from ECDH of the
/// two ephemeral keys, Concat KDF with an empty AlgorithmID and PartyUInfo and PartyVInfo =
/// the AReq's `sdkReferenceNumber`; CReq and CRes are JWEs with `alg` "dir" under it.
public struct SecureChannel: Sendable {
    /// Who encrypted a message: A128GCM uses a different half of the key each way.
    public enum Direction: Sendable {
        case sdkToACS
        case acsToSDK
    }

    /// The 32-byte key (A128CBC-HS256 uses all of it both ways).
    public let key: [UInt8]

    public init(sharedSecret: [UInt8], sdkReferenceNumber: String) {
        key = ConcatKDF.deriveKey(sharedSecret: sharedSecret, keyBitLength: 256, algorithmID: [],
                                  partyUInfo: [], partyVInfo: Array(sdkReferenceNumber.utf8))
    }

    /// The channel from its key as kept (another instance of a cluster going on with the challenge).
    public init?(key: [UInt8]) {
        guard key.count == 32 else { return nil }
        self.key = key
    }

    /// The channel as one side computes it: its ephemeral private key, the other side's public key.
    public init(privateKey: PrivateKey, peerPublicKey: PublicKey, sdkReferenceNumber: String) throws(JOSEError) {
        self.init(sharedSecret: try privateKey.sharedSecret(with: peerPublicKey), sdkReferenceNumber: sdkReferenceNumber)
    }

    /// The content key for `encryption` in `direction`: A128CBC-HS256 the whole key;
    /// A128GCM bytes 0-15 from the SDK, 16-31 from the ACS.
    public func contentKey(_ encryption: ContentEncryptionAlgorithm, _ direction: Direction) throws(JOSEError) -> [UInt8] {
        switch encryption {
        case .a128cbcHS256: return key
        case .a128gcm: return Array(direction == .sdkToACS ? key[0..<16] : key[16..<32])
        default: throw .unsupportedAlgorithm("\(encryption.rawValue) on the 3DS secure channel")
        }
    }

    /// Encrypts a CReq or CRes; `kid` is the `acsTransID`. `iv` nil means a random one.
    public func seal(_ plaintext: [UInt8], encryption: ContentEncryptionAlgorithm, kid: String, direction: Direction,
                     iv: [UInt8]? = nil) throws(JOSEError) -> String {
        let header = JWEHeader(alg: KeyManagementAlgorithm.dir.rawValue, enc: encryption.rawValue, kid: kid)
        return try JWE.seal(plaintext, header: header, contentKey: try contentKey(encryption, direction), iv: iv)
    }

    /// Decrypts a CReq or CRes sent in `direction`; returns the JWE too, for its `kid` and `enc`.
    public func open(_ compact: String, direction: Direction) throws(JOSEError) -> (plaintext: [UInt8], jwe: JWE) {
        let jwe = try JWE(compact: compact)
        guard jwe.keyManagement == .dir, jwe.encryptedKey.isEmpty else { throw .invalidHeader("the secure channel uses alg dir with no encrypted key") }
        return (try jwe.decrypt(contentKey: try contentKey(jwe.contentEncryption, direction)), jwe)
    }
}
