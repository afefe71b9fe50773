import Foundation
import JOSE
import Testing
import JSON
@testable import EMV3DS
@testable import EMVCrypto

@Suite("EMV crypto: device data and identifiers")
struct EMVCryptoTests {
    private static let rsa = Result { try PrivateKey.generateRSA() }
    private static let ec = Result { try PrivateKey.generateP256() }

    @Test(arguments: DeviceDataStyle.allCases, [ContentEncryptionAlgorithm.a128cbcHS256, .a128gcm])
    func deviceDataRoundTrips(style: DeviceDataStyle, encryption: ContentEncryptionAlgorithm) throws {
        let keys = DirectoryServerKeys(rsa: try Self.rsa.get(), ec: try Self.ec.get())
        let target = style == .rsa ? try Self.rsa.get().publicKey : try Self.ec.get().publicKey
        let plaintext = Array(#"{"DV":"1.0","DD":{"C001":"Android"}}"#.utf8)
        let token = try DeviceData.encrypt(plaintext, to: target, directoryServerID: "A000000003", style: style, encryption: encryption)
        let header = try JWE(compact: token).header
        #expect(header.alg == ["rsa": "RSA-OAEP-256", "android": "dir", "ios-ec": "ECDH-ES"][style.rawValue])
        #expect(header.epk != nil || style == .rsa)
        #expect(try DeviceData.decrypt(token, keys: keys, directoryServerID: "A000000003") == plaintext)
    }

    @Test(arguments: [DeviceDataStyle.android, .iosEC])
    func theECKeyDependsOnTheDirectoryServerID(style: DeviceDataStyle) throws {
        let keys = DirectoryServerKeys(rsa: nil, ec: try Self.ec.get())
        let token = try DeviceData.encrypt(Array("{}".utf8), to: try Self.ec.get().publicKey, directoryServerID: "A000000003", style: style)
        #expect(throws: DeviceDataError.self) { try DeviceData.decrypt(token, keys: keys, directoryServerID: "A000000004") }
    }

    @Test func aStockECDHESTokenIsRefused() throws {
        // RFC 7518 ECDH-ES puts enc into AlgorithmID: not what EMV SDKs derive.
        let token = try JWE.encrypt(Array("{}".utf8), to: .ecdhES(try Self.ec.get().publicKey, partyVInfo: Array("A000000003".utf8)),
                                    encryption: .a128cbcHS256)
        let keys = DirectoryServerKeys(rsa: nil, ec: try Self.ec.get())
        #expect(throws: DeviceDataError.self) { try DeviceData.decrypt(token, keys: keys, directoryServerID: "A000000003") }
    }

    @Test func aMissingKeyIsNamed() throws {
        let token = try DeviceData.encrypt(Array("{}".utf8), to: try Self.rsa.get().publicKey, directoryServerID: "X", style: .rsa)
        let error = try #require(throws: DeviceDataError.self) {
            try DeviceData.decrypt(token, keys: DirectoryServerKeys(rsa: nil, ec: nil), directoryServerID: "X")
        }
        #expect(error.reason.contains("needs an RSA DS key"))
    }

    /// EMV ids are "as defined in RFC 4122, any of the specified versions": version 1 is, and its
    /// random node (multicast bit set, RFC 4122 4.5) and clock sequence keep ids unique.
    @Test func identifiersAreVersion1UUIDsAndValuesAre28Base64Characters() {
        var seen = Set<String>()
        for _ in 0..<200 {
            let id = TransactionIdentifier.make()
            let bytes = Array(id.utf8)
            #expect(FieldFormat.isCanonicalUUID(id) && id == id.lowercased())
            #expect(bytes[14] == UInt8(ascii: "1"))
            #expect("89ab".utf8.contains(bytes[19]))
            #expect(Int(String(decoding: bytes[24...25], as: UTF8.self), radix: 16).map { $0 & 1 == 1 } == true)
            seen.insert(id)
            let value = TransactionIdentifier.authenticationValue()
            #expect(value.count == 28 && Data(base64Encoded: value)?.count == 20)
        }
        #expect(seen.count == 200)
    }

    /// The time leads, so that ids made one after the other are neighbours in the store's index.
    @Test func idsMadeLaterSortAfterEarlierOnes() throws {
        // 2026-11-22T00:00:00Z in 100 ns intervals since 1582-10-15.
        let time: UInt64 = 1_795_305_600 * 10_000_000 + 0x01B2_1DD2_1381_4000
        let ids = [0, 1, 10_000, 10_000_000].map { TransactionIdentifier.make(time: time + $0) }
        #expect(ids == ids.sorted())
        // The id made now carries the time now: its fields read back as the RFC lays them out.
        let fields = TransactionIdentifier.make().split(separator: "-").map { UInt64($0, radix: 16) ?? 0 }
        let made = (fields[2] & 0x0FFF) << 48 | fields[1] << 32 | fields[0]
        let seconds = Double(made - 0x01B2_1DD2_1381_4000) / 10_000_000
        #expect(abs(seconds - Date().timeIntervalSince1970) < 60)
    }
}

@Suite("EMV crypto: secure channel")
struct SecureChannelTests {
    @Test func theKeyMatchesTheEMVCoExample() throws {
        let sdk = try PrivateKey(jwk: JWK(kty: "EC", crv: "P-256", x: "C1PL42i6kmNkM61aupEAgLJ4gF1ZRzcV7lqo1TG0mL4",
                                          y: "cNToWLSdcFQKG--PGVEUQrIHP8w6TcRyj0pyFx4-ZMc", d: "iyn--IbkBeNoPu8cN245L6pOQWt2lTH8V0Ds92jQmWA"))
        let peer = try PublicKey(jwk: JWK(kty: "EC", crv: "P-256", x: "2_v-MuNZccqwM7PXlakW9oHLP5XyrjMG1UVS8OxYrgA",
                                          y: "rm1ktLmFIsP2R0YyJGXtsCbaTUesUK31Xc04tHJRolc"))
        let channel = try SecureChannel(privateKey: sdk, peerPublicKey: peer, sdkReferenceNumber: "F155545342")
        #expect(channel.key.hexString == "f7c4ee20a0fceb6d1b2cd5da9dcbde07e64396ce5f7d72fb5a793f7d7f4f9f9a")
    }

    @Test(arguments: [ContentEncryptionAlgorithm.a128cbcHS256, .a128gcm])
    func bothSidesAgreeAndGCMUsesAHalfEachWay(encryption: ContentEncryptionAlgorithm) throws {
        let sdkKey = try PrivateKey.generateP256()
        let acsKey = try PrivateKey.generateP256()
        let sdk = try SecureChannel(privateKey: sdkKey, peerPublicKey: acsKey.publicKey, sdkReferenceNumber: "3DS_LOA_SDK_X")
        let acs = try SecureChannel(privateKey: acsKey, peerPublicKey: sdkKey.publicKey, sdkReferenceNumber: "3DS_LOA_SDK_X")
        #expect(sdk.key == acs.key)
        // Android style: a zero IV ending in the counter.
        let iv = [UInt8](repeating: 0, count: encryption == .a128gcm ? 11 : 15) + [3]
        let creq = try sdk.seal(Array(#"{"messageType":"CReq"}"#.utf8), encryption: encryption, kid: "acs-id", direction: .sdkToACS, iv: iv)
        let opened = try acs.open(creq, direction: .sdkToACS)
        #expect(opened.plaintext == Array(#"{"messageType":"CReq"}"#.utf8))
        #expect(opened.jwe.header.kid == "acs-id")
        if encryption == .a128gcm {
            #expect(throws: JOSEError.self) { _ = try acs.open(creq, direction: .acsToSDK) }
        }
    }

    @Test func anotherReferenceNumberIsAnotherKey() throws {
        let secret = randomBytes(32)
        #expect(SecureChannel(sharedSecret: secret, sdkReferenceNumber: "A").key != SecureChannel(sharedSecret: secret, sdkReferenceNumber: "B").key)
    }
}
