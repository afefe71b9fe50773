import JSON
import Testing
@testable import JOSE

@Suite("Base64url and Concat KDF")
struct PrimitiveTests {
    @Test func base64URLRoundTripsWithoutPadding() throws {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 250) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(try Base64URL.decode(text) == bytes)
        }
    }

    @Test(arguments: ["eyJ=", "ab+c", "ab/c", "ab c", "ab\nc", "a", "abcde"])
    func base64URLRejectsWhatSDKsReject(text: String) {
        #expect(throws: Base64URLError(part: "iv")) { try Base64URL.decode(text, part: "iv") }
        #expect(throws: JOSEError.invalidBase64URL(part: "iv")) { try JOSEError.decodingBase64URL(text, part: "iv") }
    }

    /// RFC 7518 Appendix C: ECDH-ES key agreement computation.
    @Test func concatKDFMatchesRFC7518AppendixC() throws {
        let z: [UInt8] = [158, 86, 217, 29, 129, 113, 53, 211, 114, 131, 66, 131, 191, 132, 38, 156, 251, 49, 110, 163, 218, 128, 106, 72, 246, 218, 167, 121, 140, 254, 144, 196]
        let key = ConcatKDF.deriveKey(sharedSecret: z, keyBitLength: 128, algorithmID: Array("A128GCM".utf8),
                                      partyUInfo: Array("Alice".utf8), partyVInfo: Array("Bob".utf8))
        #expect(Base64URL.encode(key) == "VqqN6vgjbSBcIijNcacQGg")
    }

    /// EMVCo app-based crypto example (PROTOCOL.md): Z, then the 3DS secure-channel key
    /// with empty AlgorithmID and PartyUInfo and PartyVInfo = the ASCII bytes of the
    /// reference number "F155545342" (not its hex decoding: that gives f3bac435...).
    @Test func secureChannelKeyMatchesTheEMVCoExample() throws {
        let sdk = try PrivateKey(jwk: JWK(kty: "EC", crv: "P-256",
                                          x: "C1PL42i6kmNkM61aupEAgLJ4gF1ZRzcV7lqo1TG0mL4",
                                          y: "cNToWLSdcFQKG--PGVEUQrIHP8w6TcRyj0pyFx4-ZMc",
                                          d: "iyn--IbkBeNoPu8cN245L6pOQWt2lTH8V0Ds92jQmWA"))
        let ds = try PublicKey(jwk: JWK(kty: "EC", crv: "P-256",
                                        x: "2_v-MuNZccqwM7PXlakW9oHLP5XyrjMG1UVS8OxYrgA",
                                        y: "rm1ktLmFIsP2R0YyJGXtsCbaTUesUK31Xc04tHJRolc"))
        let z = try sdk.sharedSecret(with: ds)
        #expect(z.hexString.hasPrefix("5c32bc13"))
        #expect(z.hexString.hasSuffix("a59e8ca2"))
        let key = ConcatKDF.deriveKey(sharedSecret: z, keyBitLength: 256, algorithmID: [],
                                      partyVInfo: Array("F155545342".utf8))
        #expect(key.hexString == "f7c4ee20a0fceb6d1b2cd5da9dcbde07e64396ce5f7d72fb5a793f7d7f4f9f9a")
    }
}
