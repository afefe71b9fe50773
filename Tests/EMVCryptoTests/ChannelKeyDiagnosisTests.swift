import JOSE
import Testing
@testable import EMVCrypto

/// A CReq sealed with a key derived the ways SDKs get wrong names its mistake; one sealed with an unrelated key names none,
/// so the ACS never blames an input that was right.
@Suite("Channel key mistakes")
struct ChannelKeyDiagnosisTests {
    static let secret = [UInt8](repeating: 7, count: 32)
    static let reference = "3DS_LOA_SDK_HARN_020200_00001"
    static let inputs = ChannelKeyInputs(sharedSecret: secret, sdkReferenceNumber: reference)
    static let creq = Array(#"{"messageType":"CReq"}"#.utf8)

    func sealed(_ key: [UInt8], _ encryption: ContentEncryptionAlgorithm = .a128cbcHS256, direction: SecureChannel.Direction = .sdkToACS) throws -> String {
        try #require(SecureChannel(key: key)).seal(Self.creq, encryption: encryption, kid: "acs", direction: direction)
    }

    func derived(partyU: String = "", partyV: String) -> [UInt8] {
        ConcatKDF.deriveKey(sharedSecret: Self.secret, keyBitLength: 256, algorithmID: [], partyUInfo: Array(partyU.utf8), partyVInfo: Array(partyV.utf8))
    }

    @Test(arguments: [ContentEncryptionAlgorithm.a128cbcHS256, .a128gcm])
    func eachWrongDerivationIsNamed(encryption: ContentEncryptionAlgorithm) throws {
        #expect(Self.inputs.mistake(opening: try sealed(derived(partyV: ""), encryption)) == .withoutSDKReferenceNumber)
        #expect(Self.inputs.mistake(opening: try sealed(derived(partyU: Self.reference, partyV: ""), encryption)) == .sdkReferenceNumberAsPartyUInfo)
        #expect(Self.inputs.mistake(opening: try sealed(derived(partyV: "3DS_LOA_SDK_OTHR_020200_00002"), encryption),
                                    otherReferences: ["3DS_LOA_SDK_OTHR_020200_00002"]) == .otherSDKReferenceNumber("3DS_LOA_SDK_OTHR_020200_00002"))
        // RFC 7518 §4.6.2: AlgorithmID is the enc, the key the enc's length.
        let jose = ConcatKDF.deriveKey(sharedSecret: Self.secret, keyBitLength: encryption.keyLength * 8, algorithmID: Array(encryption.rawValue.utf8))
        let header = JWEHeader(alg: KeyManagementAlgorithm.dir.rawValue, enc: encryption.rawValue, kid: "acs")
        #expect(Self.inputs.mistake(opening: try JWE.seal(Self.creq, header: header, contentKey: jose)) == .joseECDHES)
        let other = SecureChannel(sharedSecret: [UInt8](repeating: 9, count: 32), sdkReferenceNumber: Self.reference)
        #expect(Self.inputs.mistake(opening: try sealed(other.key, encryption), otherChannels: [("earlier", other)]) == .otherTransaction("earlier"))
        // A key nothing here derives names no mistake.
        #expect(Self.inputs.mistake(opening: try sealed([UInt8](repeating: 1, count: 32), encryption), otherChannels: [("earlier", other)]) == nil)
    }

    /// A128GCM: the SDK seals with bytes 0-15 and the ACS with 16-31; a CReq under the ACS's half is that mistake.
    @Test func aCReqUnderTheACSsHalfOfTheKeyIsNamed() throws {
        #expect(Self.inputs.mistake(opening: try sealed(Self.inputs.channel.key, .a128gcm, direction: .acsToSDK)) == .acsHalf)
    }
}
