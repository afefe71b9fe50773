import Foundation
import JOSE
import Testing
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

    @Test func identifiersAreVersion4UUIDsAndValuesAre28Base64Characters() {
        var seen = Set<String>()
        for _ in 0..<200 {
            let id = TransactionIdentifier.make()
            #expect(FieldFormat.isCanonicalUUID(id) && id == id.lowercased())
            #expect(Array(id.utf8)[14] == UInt8(ascii: "4"))
            #expect("89ab".utf8.contains(Array(id.utf8)[19]))
            seen.insert(id)
            let value = TransactionIdentifier.authenticationValue()
            #expect(value.count == 28 && Data(base64Encoded: value)?.count == 20)
        }
        #expect(seen.count == 200)
    }
}
