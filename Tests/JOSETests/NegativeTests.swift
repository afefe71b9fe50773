import JSON
import Foundation
import Testing
@testable import JOSE

@Suite("Rejections")
struct NegativeTests {
    private let rsa: PrivateKey
    private let token: String

    init() throws {
        rsa = try PrivateKey.generateRSA()
        token = try JWE.encrypt(Array(#"{"DV":"1.0"}"#.utf8), to: .rsa(rsa.publicKey, .rsaOAEP256), encryption: .a128cbcHS256, kid: "ds-key-1")
    }

    /// Flips the lowest bit of the first byte of part `index` (decoded), re-encodes.
    private func flip(_ index: Int, in compact: String) throws -> String {
        var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var bytes = try Base64URL.decode(parts[index])
        // In the header, flip a letter inside the kid value, so the JSON stays valid.
        let position = index == 0 ? (bytes.lastIndex(of: UInt8(ascii: "1")) ?? 0) : 0
        bytes[position] ^= 0x01
        parts[index] = Base64URL.encode(bytes)
        return parts.joined(separator: ".")
    }

    @Test func eachTamperedJWEPartIsRejected() throws {
        #expect(try JWE(compact: token).decrypt(with: rsa) == Array(#"{"DV":"1.0"}"#.utf8))
        let expected: [Int: String] = [0: "authentication tag mismatch", 1: "RSA-OAEP key unwrap failed",
                                       2: "authentication tag mismatch", 3: "authentication tag mismatch",
                                       4: "authentication tag mismatch"]
        for (index, reason) in expected {
            let tampered = try flip(index, in: token)
            #expect(throws: JOSEError.decryptionFailed(reason: reason), "part \(index)") {
                try JWE(compact: tampered).decrypt(with: rsa)
            }
        }
    }

    @Test func gcmTamperingIsRejectedToo() throws {
        let key = randomBytes(16)
        let sealed = try JWE.encrypt(Array("hello".utf8), to: .direct(key: key), encryption: .a128gcm, kid: "acs-1")
        for index in [0, 2, 3, 4] {
            let tampered = try flip(index, in: sealed)
            #expect(throws: JOSEError.decryptionFailed(reason: "authentication tag mismatch")) {
                try JWE(compact: tampered).decrypt(contentKey: key)
            }
        }
    }

    @Test func wrongKeyIsRejectedWithoutSayingWhy() throws {
        let other = try PrivateKey.generateRSA()
        #expect {
            try JWE(compact: token).decrypt(with: other)
        } throws: { error in
            guard let error = error as? JOSEError, case .decryptionFailed = error else { return false }
            return error.description == "decryption failed"  // the peer learns nothing more
        }
        let ec = try PrivateKey.generateP256()
        #expect(throws: JOSEError.algorithmKeyMismatch(algorithm: "RSA-OAEP-256", key: "EC P-256")) {
            try JWE(compact: token).decrypt(with: ec)
        }
    }

    @Test func truncatedAndMalformedTokensAreRejected() throws {
        let parts = token.split(separator: ".")
        #expect(throws: JOSEError.malformedCompactSerialization("4 parts, expected 5")) {
            try JWE(compact: parts.prefix(4).joined(separator: "."))
        }
        #expect(throws: JOSEError.invalidBase64URL(part: "ciphertext")) {
            try JWE(compact: token.replacingOccurrences(of: ".\(parts[3]).", with: ".\(parts[3])=."))
        }
        let shortTag = parts.prefix(4).joined(separator: ".") + "." + Base64URL.encode([1, 2, 3])
        #expect(throws: JOSEError.decryptionFailed(reason: "tag is 3 bytes, A128CBC-HS256 needs 16")) {
            try JWE(compact: shortTag).decrypt(with: rsa)
        }
    }

    @Test func unknownAlgorithmsAndCriticalHeadersAreRejected() throws {
        func compact(_ header: String) -> String { Base64URL.encode(header) + ".." + Base64URL.encode([0]) + ".AA.AA" }
        #expect(throws: JOSEError.unsupportedAlgorithm("A128KW")) { try JWE(compact: compact(#"{"alg":"A128KW","enc":"A128GCM"}"#)) }
        #expect(throws: JOSEError.unsupportedAlgorithm("A192GCM")) { try JWE(compact: compact(#"{"alg":"dir","enc":"A192GCM"}"#)) }
        #expect(throws: JOSEError.invalidHeader("critical header parameter exp is not understood")) {
            try JWE(compact: compact(#"{"alg":"dir","enc":"A128GCM","crit":["exp"],"exp":1}"#))
        }
    }

    @Test func jwsAlgNoneAndMismatchedKeysAreRejected() throws {
        let ec = try PrivateKey.generateP256()
        let signed = try JWS.sign(payload: Array("{}".utf8), key: ec, algorithm: .es256)
        let parts = signed.split(separator: ".")
        let none = Base64URL.encode(#"{"alg":"none"}"#) + "." + parts[1] + "."
        #expect(throws: JOSEError.algorithmNotAllowed("none")) { try JWS(compact: none).verify(with: ec.publicKey) }
        #expect(throws: JOSEError.algorithmKeyMismatch(algorithm: "ES256", key: "RSA")) {
            try JWS(compact: signed).verify(with: rsa.publicKey)
        }
        #expect(throws: JOSEError.algorithmKeyMismatch(algorithm: "PS256", key: "EC P-256")) {
            _ = try JWS.sign(payload: [], key: ec, algorithm: .ps256)
        }
        #expect(throws: JOSEError.algorithmNotAllowed("RS256")) {
            let rs = try JWS.sign(payload: [], key: rsa, algorithm: .rs256)
            try JWS(compact: rs).verify(with: rsa.publicKey, allowed: [.ps256, .es256])
        }
        var bytes = Array(signed.utf8)
        bytes[bytes.count - 3] = bytes[bytes.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: JOSEError.signatureInvalid) { try JWS(compact: String(decoding: bytes, as: UTF8.self)).verify(with: ec.publicKey) }
    }

    @Test func invalidJWKsAreRejected() throws {
        let point = try PrivateKey.generateP256().publicKey.jwk()
        var offCurve = point
        offCurve.y = point.x
        #expect { try PublicKey(jwk: offCurve) } throws: { error in
            if case .invalidKey = error as? JOSEError { return true }
            return false
        }
        var p384 = point
        p384.crv = "P-384"
        #expect(throws: JOSEError.invalidJWK("EC curve P-384 is not P-256")) { try PublicKey(jwk: p384) }
        var short = point
        short.x = Base64URL.encode([1, 2, 3])
        #expect(throws: JOSEError.invalidJWK("x is 3 bytes, expected 32")) { try PublicKey(jwk: short) }
        #expect(throws: JOSEError.invalidJWK("unsupported kty OKP")) { try PublicKey(jwk: JWK(kty: "OKP")) }
    }

    /// An agreement straight from a JWK's point refuses what the public key refuses: a point off the curve (an
    /// invalid-curve attack on the DS's key), another curve, a short coordinate; and an epk so broken fails the JWE's
    /// decryption as an invalid header.
    @Test func anAgreementWithAJWKsPointRefusesWhatThePublicKeyRefuses() throws {
        let ds = try PrivateKey.generateP256()
        let point = try PrivateKey.generateP256().publicKey.jwk()
        var offCurve = point
        offCurve.y = point.x
        #expect(throws: JOSEError.invalidKey("the point is not on the curve P-256")) { try ds.sharedSecret(with: offCurve) }
        #expect(throws: JOSEError.invalidKey("the point is not on the curve P-256")) { try EphemeralAgreement(with: offCurve) }
        var p384 = point
        p384.crv = "P-384"
        #expect(throws: JOSEError.invalidJWK("EC curve P-384 is not P-256")) { try ds.sharedSecret(with: p384) }
        var short = point
        short.y = Base64URL.encode([1, 2, 3])
        #expect(throws: JOSEError.invalidJWK("y is 3 bytes, expected 32")) { try ds.sharedSecret(with: short) }
        let rsa = try PrivateKey.generateRSA(bits: 2048)
        #expect(throws: JOSEError.algorithmKeyMismatch(algorithm: "ECDH", key: "RSA/EC")) { try rsa.sharedSecret(with: point) }

        let header = JWEHeader(alg: "ECDH-ES", enc: "A128CBC-HS256", epk: offCurve)
        let compact = try JWE.seal([1, 2, 3], header: header, contentKey: [UInt8](repeating: 7, count: 32))
        #expect(throws: JOSEError.invalidHeader("epk: invalid key: the point is not on the curve P-256")) {
            _ = try JWE(compact: compact).ephemeralSecret(ds)
        }
    }
}

@Suite("x5c chain validation")
struct ChainTests {
    private func signed(_ chain: TestChain, certificates: [Certificate]? = nil, algorithm: SignatureAlgorithm = .es256) throws -> JWS {
        let compact = try JWS.sign(payload: Array(#"{"acsURL":"https://localhost:8443/acs/challenge"}"#.utf8), key: chain.leafKey,
                                   algorithm: algorithm, certificates: certificates ?? [chain.leaf, chain.intermediate])
        return try JWS(compact: compact)
    }

    @Test(arguments: [KeyKind.ecP256, .rsa])
    func validChainVerifies(kind: KeyKind) throws {
        let chain = try TestChain(leafKind: kind)
        let jws = try signed(chain, algorithm: kind == .rsa ? .ps256 : .es256)
        let leaf = try jws.verifyWithCertificateChain(CertificateVerifier(trustAnchors: [chain.root]))
        #expect(leaf == chain.leaf)
        #expect(jws.header.x5c?.first?.contains("-") == false)  // standard base64, not url
    }

    @Test func expiredAndNotYetValidLeavesAreRejected() throws {
        let expired = try TestChain(leafNotBefore: Date().addingTimeInterval(-10 * 86_400), leafDays: 1)
        #expect(throws: JOSEError.certificateExpired(subject: "CN=Test ACS,O=3DS Test Harness")) {
            try signed(expired).verifyWithCertificateChain(CertificateVerifier(trustAnchors: [expired.root]))
        }
        let future = try TestChain(leafNotBefore: Date().addingTimeInterval(5 * 86_400))
        #expect(throws: JOSEError.certificateNotYetValid(subject: "CN=Test ACS,O=3DS Test Harness")) {
            try signed(future).verifyWithCertificateChain(CertificateVerifier(trustAnchors: [future.root]))
        }
    }

    @Test func missingLinkAndOtherRootAreRejected() throws {
        let chain = try TestChain()
        #expect(throws: JOSEError.untrustedRoot(subject: "CN=Test ACS,O=3DS Test Harness")) {
            try signed(chain, certificates: [chain.leaf]).verifyWithCertificateChain(CertificateVerifier(trustAnchors: [chain.root]))
        }
        let stranger = try TestChain()
        #expect(throws: JOSEError.untrustedRoot(subject: "CN=Test Intermediate,O=3DS Test Harness")) {
            try signed(chain).verifyWithCertificateChain(CertificateVerifier(trustAnchors: [stranger.root]))
        }
    }

    @Test func wrongLinkIsRejected() throws {
        let chain = try TestChain()
        let other = try TestChain()
        // The intermediate names the root as issuer but was signed by another root's key.
        let impostor = try CertificateBuilder.issue(CertificateProfile(commonName: "Test Intermediate", isCA: true),
                                                    publicKey: chain.intermediateKey.publicKey, issuer: chain.root, issuerKey: other.rootKey)
        #expect(throws: JOSEError.chainSignatureInvalid(subject: "CN=Test Intermediate,O=3DS Test Harness")) {
            try signed(chain, certificates: [chain.leaf, impostor]).verifyWithCertificateChain(CertificateVerifier(trustAnchors: [chain.root]))
        }
    }

    @Test func issuerThatIsNotACAIsRejected() throws {
        let chain = try TestChain(intermediateIsCA: false)
        #expect(throws: JOSEError.issuerNotCA(subject: "CN=Test Intermediate,O=3DS Test Harness")) {
            try signed(chain).verifyWithCertificateChain(CertificateVerifier(trustAnchors: [chain.root]))
        }
    }

    @Test func missingX5CAndSignerOutsideTheChainAreRejected() throws {
        let chain = try TestChain()
        let bare = try JWS(compact: JWS.sign(payload: [1], key: chain.leafKey, algorithm: .es256))
        #expect(throws: JOSEError.missingCertificateChain) { try bare.verifyWithCertificateChain(CertificateVerifier(trustAnchors: [chain.root])) }
        // Signed by a key that is not the leaf's: the chain is fine, the signature is not.
        let outsider = try PrivateKey.generateP256()
        let forged = try JWS(compact: JWS.sign(payload: [1], key: outsider, algorithm: .es256, certificates: [chain.leaf, chain.intermediate]))
        #expect(throws: JOSEError.signatureInvalid) { try forged.verifyWithCertificateChain(CertificateVerifier(trustAnchors: [chain.root])) }
    }
}

@Suite("Key formats")
struct KeyFormatTests {
    @Test(arguments: [KeyKind.ecP256, .rsa])
    func keysRoundTripThroughPEMDERAndJWK(kind: KeyKind) throws {
        let key = kind == .rsa ? try PrivateKey.generateRSA() : try PrivateKey.generateP256()
        let fromPEM = try PrivateKey(pem: key.pemRepresentation)
        let fromDER = try PrivateKey(der: key.derRepresentation)
        let fromJWK = try PrivateKey(jwk: key.jwk())
        for copy in [fromPEM, fromDER, fromJWK] {
            #expect(copy.publicKey == key.publicKey)
            #expect(copy.jwk() == key.jwk())
        }
        #expect(try PublicKey(pem: key.publicKey.pemRepresentation) == key.publicKey)
        #expect(try PublicKey(der: key.publicKey.derRepresentation) == key.publicKey)
        #expect(try PublicKey(jwk: key.publicKey.jwk()) == key.publicKey)
        #expect(key.publicKey.jwk().d == nil)
        #expect(key.jwk().publicOnly == key.publicKey.jwk())
    }

    @Test func certificatesRoundTripAndCarryTheirKey() throws {
        let chain = try TestChain()
        let pem = chain.leaf.pemRepresentation + chain.intermediate.pemRepresentation
        let parsed = try Certificate.chain(pem: pem)
        #expect(parsed == [chain.leaf, chain.intermediate])
        #expect(try Certificate(der: chain.leaf.derRepresentation) == chain.leaf)
        #expect(parsed[0].publicKey == chain.leafKey.publicKey)
        #expect(chain.root.isCA && !chain.leaf.isCA)
        #expect(chain.leaf.issuer == chain.intermediate.subject)
    }
}

@Suite("Protected headers read strictly")
struct HeaderStrictnessTests {
    private func token(header: String) -> String {
        Base64URL.encode(header) + "..AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA"
    }

    @Test(arguments: [
        (#"{"alg":"dir","enc":"A128GCM","alg":"dir"}"#, "member alg appears more than once"),
        (#"{"alg":"dir","enc":"A128GCM","kid":5}"#, "kid must be a string"),
        (#"{"alg":"dir"}"#, "enc is required"),
        (#"{"alg":"dir","enc":"A128GCM","epk":"key"}"#, "epk must be an object"),
        (#"["alg"]"#, "not a JSON object"),
    ])
    func malformedHeadersAreRefusedWithTheReason(header: String, reason: String) {
        #expect(throws: JOSEError.invalidHeader(reason)) { _ = try JWE(compact: token(header: header)) }
    }
}
