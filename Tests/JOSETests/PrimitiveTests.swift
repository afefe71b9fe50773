import Foundation
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

    @Test func base64URLIsFoundationsBase64WithTheURLAlphabetAndNoPadding() throws {
        for length in 0...70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 151 &+ 7) }
            let reference = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == reference)
            #expect(try Base64URL.decode(reference) == bytes)
            #expect(try Base64URL.decode(reference[...]) == bytes, "a substring reads the same")
        }
    }

    @Test func everyByteOutsideTheAlphabetIsRefusedWhereverItStands() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for byte in UInt8.min...UInt8.max where !alphabet.contains(byte) {
            for position in 0..<11 {
                var bytes = Array("abcdefghijk".utf8)   // 11 characters: two whole groups and a rest of three
                bytes[position] = byte
                #expect(throws: Base64URLError(part: "x")) { try Base64URL.decode(String(decoding: bytes, as: UTF8.self), part: "x") }
            }
        }
    }

    @Test(arguments: ["eyJ=", "ab+c", "ab/c", "ab c", "ab\nc", "a", "abcde"])
    func base64URLRejectsWhatSDKsReject(text: String) {
        #expect(throws: Base64URLError(part: "iv")) { try Base64URL.decode(text, part: "iv") }
        #expect(throws: JOSEError.invalidBase64URL(part: "iv")) { try JOSEError.decodingBase64URL(text, part: "iv") }
    }

    /// Headers and keys are written by the harness's JSON writer; Foundation's encoder with sorted keys, which wrote them
    /// before, is the reference: every member present, the bytes must be the same.
    @Test func headersAndKeysAreWrittenAsFoundationsEncoderWroteThem() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        func reference(_ value: some Encodable) throws -> [UInt8] { Array(try encoder.encode(value)) }
        var key = JWK(kty: "EC", crv: "P-256", x: "x-coordinate", y: "y_coordinate", n: "n", e: "AQAB", d: "d", p: "p", q: "q", dp: "dp", dq: "dq",
                      qi: "qi", kid: "key/1", use: "enc", alg: "ECDH-ES", x5c: ["MIIB+/A=", "MIIC"])
        #expect(JSONWriter.write(key.json) == (try reference(key)))
        #expect(key.jsonString == String(decoding: try reference(key), as: UTF8.self))
        var jws = JWSHeader(alg: "PS256", kid: "k", typ: "JOSE", cty: "JWT", x5c: ["MIIB+/A="])
        jws.crit = ["b64"]
        #expect(JSONWriter.write(jws.json) == (try reference(jws)))
        key.x5c = nil
        var jwe = JWEHeader(alg: "ECDH-ES", enc: "A128CBC-HS256", kid: "k", epk: key.publicOnly, apu: "u", apv: "v")
        jwe.zip = "DEF"; jwe.typ = "JOSE"; jwe.cty = "JWT"; jwe.crit = ["exp"]
        #expect(JSONWriter.write(jwe.json) == (try reference(jwe)))
        // Absent members are left out, as the encoder left them.
        let minimal = JWEHeader(alg: "dir", enc: "A128GCM")
        #expect(JSONWriter.write(minimal.json) == (try reference(minimal)))
        #expect(encodeHeader(minimal) == Base64URL.encode(try reference(minimal)))
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
        // The same agreement from the JWK's point (the DS's way with an epk, on OpenSSL's EC_KEY interface), twice: the
        // second reads the key's kept EC_KEY.
        #expect(try sdk.sharedSecret(with: ds.jwk()) == z)
        #expect(try sdk.sharedSecret(with: ds.jwk()) == z)

        // The ACS's way: a key made for one agreement; the SDK computes the same Z from that key's public half.
        let agreement = try EphemeralAgreement(with: sdk.publicKey.jwk())
        #expect(agreement.sharedSecret == (try sdk.sharedSecret(with: PublicKey(jwk: agreement.publicKey))))
        #expect(agreement.publicKey.crv == "P-256" && agreement.publicKey.d == nil)
        #expect(try EphemeralAgreement(with: sdk.publicKey.jwk()).publicKey != agreement.publicKey)
        let key = ConcatKDF.deriveKey(sharedSecret: z, keyBitLength: 256, algorithmID: [],
                                      partyVInfo: Array("F155545342".utf8))
        #expect(key.hexString == "f7c4ee20a0fceb6d1b2cd5da9dcbde07e64396ce5f7d72fb5a793f7d7f4f9f9a")
    }
}
