public import EMVCrypto
import JOSE
import SDKSimulator

/// The harness's server-side crypto as operations for ``RateMeter``.
public enum ServerCrypto {
    /// The DS opening the same device data.
    public static func deviceDataDecryption(pki: String, style: DeviceDataStyle) throws -> @Sendable () throws -> Void {
        let (sdk, keys) = try BenchTransaction.deviceData(pki: pki, style: style)
        let deviceData = sdk.deviceData
        return { _ = try DeviceData.decrypt(deviceData, keys: keys, directoryServerID: BenchTransaction.directoryServerID) }
    }

    /// One app challenge: the DS's device-data decryption, the ACS's ephemeral key, key agreement and `acsSignedContent`
    /// signature, and two CReq/CRes rounds.
    public static func challenge(pki directory: String, style: DeviceDataStyle) throws -> @Sendable () throws -> Void {
        let (sdk, keys) = try BenchTransaction.deviceData(pki: directory, style: style)
        let pki = TestPKI(directory: directory)
        let rid = BenchTransaction.directoryServerID
        let identity = ACSSigningIdentity(key: try pki.acsPrivateKey(rid, .rsa), chain: [try pki.acsCertificate(rid, .rsa), try pki.rootCertificate(rid)])
        let sdkKey = sdk.ephemeralKey.publicKey.jwk()
        let sdkKeyJSON = sdk.ephemeralPublicKeyJSON
        let deviceData = sdk.deviceData
        let creq = Array(#"{"messageType":"CReq","messageVersion":"2.2.0","sdkCounterStoA":"000"}"#.utf8)
        let cres = Array(String(repeating: "x", count: 600).utf8)
        return {
            _ = try DeviceData.decrypt(deviceData, keys: keys, directoryServerID: rid)
            let agreement = try EphemeralAgreement(with: sdkKey)
            let channel = SecureChannel(sharedSecret: agreement.sharedSecret, sdkReferenceNumber: SimulatedSDKTransaction.sdkReferenceNumber)
            _ = try AcsSignedContent.sign(acsURL: "https://localhost:8443/acs/challenge", acsEphemeralKey: agreement.publicKey,
                                          sdkEphemPubKey: sdkKeyJSON, identity: identity)
            for _ in 0..<2 {
                // The ACS opens what the SDK sealed, and seals its answer.
                let sealed = try channel.seal(creq, encryption: .a128cbcHS256, kid: "k", direction: .sdkToACS)
                _ = try channel.open(sealed, direction: .sdkToACS)
                _ = try channel.seal(cres, encryption: .a128cbcHS256, kid: "k", direction: .acsToSDK)
            }
        }
    }
}
