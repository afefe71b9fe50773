import JSON
import Foundation
@testable import JOSE
import TestSupport
import Testing

/// Runs the joserfc peer (Interop/joserfc_peer.py); returns its trimmed output.
private func peer(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let result = try ChildProcess.run("python3", [repositoryRoot + "/Tests/JOSETests/Interop/joserfc_peer.py"] + arguments)
    return (result.status, result.output.trimmingCharacters(in: .whitespacesAndNewlines))
}

private struct Case: CustomTestStringConvertible, Sendable {
    let alg: KeyManagementAlgorithm
    let enc: ContentEncryptionAlgorithm
    var testDescription: String { "\(alg.rawValue) + \(enc.rawValue)" }
}

private let jweCases = KeyManagementAlgorithm.allCases.flatMap { alg in ContentEncryptionAlgorithm.allCases.map { Case(alg: alg, enc: $0) } }

@Suite("Interoperability with joserfc (Python)")
struct InteropTests {
    private static let plaintext = #"{"DV":"1.0","DD":{"C001":"Android"},"SW":[]}"#

    /// The key the peer and we use for a case, as (our key or content key, the peer's JWK).
    private func keys(_ testCase: Case) throws -> (privateKey: PrivateKey?, contentKey: [UInt8], peerJWK: String) {
        switch testCase.alg {
        case .rsaOAEP, .rsaOAEP256:
            let key = try PrivateKey.generateRSA()
            return (key, [], key.jwk().jsonString)
        case .ecdhES:
            let key = try PrivateKey.generateP256()
            return (key, [], key.jwk().jsonString)
        case .dir:
            let key = randomBytes(testCase.enc.keyLength)
            return (nil, key, #"{"kty":"oct","k":"\#(Base64URL.encode(key))"}"#)
        }
    }

    @Test(arguments: jweCases)
    fileprivate func peerDecryptsWhatWeEncrypt(_ testCase: Case) throws {
        let (privateKey, contentKey, peerJWK) = try keys(testCase)
        let recipient: JWERecipient = switch testCase.alg {
        case .rsaOAEP, .rsaOAEP256: .rsa(privateKey!.publicKey, testCase.alg)
        case .ecdhES: .ecdhES(privateKey!.publicKey, partyUInfo: Array("Alice".utf8), partyVInfo: Array("Bob".utf8))
        case .dir: .direct(key: contentKey)
        }
        let compact = try JWE.encrypt(Array(Self.plaintext.utf8), to: recipient, encryption: testCase.enc)
        let result = try peer(["decrypt", peerJWK, testCase.alg.rawValue, testCase.enc.rawValue, compact])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output == Self.plaintext)
    }

    @Test(arguments: jweCases)
    fileprivate func weDecryptWhatPeerEncrypts(_ testCase: Case) throws {
        let (privateKey, contentKey, peerJWK) = try keys(testCase)
        var arguments = ["encrypt", peerJWK, testCase.alg.rawValue, testCase.enc.rawValue, Self.plaintext]
        if testCase.alg == .ecdhES { arguments += [Base64URL.encode("Alice"), Base64URL.encode("Bob")] }
        let result = try peer(arguments)
        #expect(result.status == 0, "\(result.output)")
        let jwe = try JWE(compact: result.output)
        let plaintext = try privateKey.map { try jwe.decrypt(with: $0) } ?? jwe.decrypt(contentKey: contentKey)
        #expect(String(decoding: plaintext, as: UTF8.self) == Self.plaintext)
        if testCase.alg == .ecdhES { #expect(jwe.header.apv == Base64URL.encode("Bob")) }
    }

    @Test(arguments: SignatureAlgorithm.allCases)
    func signaturesVerifyBothWays(algorithm: SignatureAlgorithm) throws {
        let key = algorithm == .es256 ? try PrivateKey.generateP256() : try PrivateKey.generateRSA()
        let ours = try JWS.sign(payload: Array(Self.plaintext.utf8), key: key, algorithm: algorithm)
        let verified = try peer(["verify", key.publicKey.jwk().jsonString, algorithm.rawValue, ours])
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.output == Self.plaintext)

        let theirs = try peer(["sign", key.jwk().jsonString, algorithm.rawValue, Self.plaintext])
        #expect(theirs.status == 0, "\(theirs.output)")
        let jws = try JWS(compact: theirs.output)
        try jws.verify(with: key.publicKey)
        #expect(String(decoding: jws.payload, as: UTF8.self) == Self.plaintext)
    }
}
