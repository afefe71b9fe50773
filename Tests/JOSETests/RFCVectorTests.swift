import JSON
import Foundation
import Testing
@testable import JOSE

@Suite("RFC 7515, 7516, 7520 and 7638 examples")
struct RFCVectorTests {
    @Test func rs256SignatureIsProducedByteForByte() throws {
        let vector = "rfc7515_A2_RS256"
        let key = try PrivateKey(jwk: Vectors.jwk(vector))
        let input = Array("\(Vectors.string(vector, "protected")).\(Vectors.string(vector, "payload"))".utf8)
        let signature = try key.sign(input, algorithm: .rs256)
        #expect(Base64URL.encode(signature) == Vectors.string(vector, "signature"))
        let compact = "\(Vectors.string(vector, "protected")).\(Vectors.string(vector, "payload")).\(Vectors.string(vector, "signature"))"
        try JWS(compact: compact).verify(with: key.publicKey)
    }

    @Test func es256ExampleVerifies() throws {
        let vector = "rfc7515_A3_ES256"
        let key = try PublicKey(jwk: Vectors.jwk(vector))
        let jws = try JWS(compact: "\(Vectors.string(vector, "protected")).\(Vectors.string(vector, "payload")).\(Vectors.string(vector, "signature"))")
        try jws.verify(with: key)
        #expect(String(decoding: jws.payload, as: UTF8.self).contains("\"iss\":\"joe\""))
    }

    @Test(arguments: ["rfc7516_A1_RSA-OAEP_A256GCM", "rfc7520_5.2_RSA-OAEP_A256GCM", "rfc7520_5.5_ECDH-ES_A128CBC-HS256"])
    func examplesDecryptToTheirPlaintext(vector: String) throws {
        let key = try PrivateKey(jwk: Vectors.jwk(vector))
        let plaintext = try JWE(compact: Vectors.string(vector, "compact")).decrypt(with: key)
        #expect(String(decoding: plaintext, as: UTF8.self) == Vectors.string(vector, "plaintext"))
    }

    @Test func a256gcmContentLayerIsProducedByteForByte() throws {
        let vector = "rfc7516_A1_RSA-OAEP_A256GCM"
        let jwe = try JWE(compact: Vectors.string(vector, "compact"))
        let cek = try Base64URL.decode(Vectors.string(vector, "cek"))
        let sealed = try ContentEncryptionAlgorithm.a256gcm.seal(Array(Vectors.string(vector, "plaintext").utf8), key: cek,
                                                                 iv: jwe.iv, aad: Array(jwe.encodedHeader.utf8))
        #expect(sealed.ciphertext == jwe.ciphertext)
        #expect(sealed.tag == jwe.tag)
    }

    @Test func a128cbcHS256ContentLayerIsProducedByteForByte() throws {
        let vector = "rfc7520_5.1_A128CBC-HS256"
        let sealed = try ContentEncryptionAlgorithm.a128cbcHS256.seal(
            Array(Vectors.string(vector, "plaintext").utf8), key: Base64URL.decode(Vectors.string(vector, "cek")),
            iv: Base64URL.decode(Vectors.string(vector, "iv")), aad: Array(Vectors.string(vector, "protected").utf8))
        #expect(Base64URL.encode(sealed.ciphertext) == Vectors.string(vector, "ciphertext"))
        #expect(Base64URL.encode(sealed.tag) == Vectors.string(vector, "tag"))
    }

    @Test func thumbprintMatchesRFC7638() throws {
        let jwk = try Vectors.jwk("rfc7638_3.1_thumbprint")
        #expect(try jwk.thumbprint() == Vectors.string("rfc7638_3.1_thumbprint", "thumbprint"))
        #expect(try PublicKey(jwk: jwk).jwk().thumbprint() == Vectors.string("rfc7638_3.1_thumbprint", "thumbprint"))
    }
}
