import Foundation
import JOSE
import JSON
import Testing
@testable import EMVCrypto

/// A root and an ACS certificate under it, made once for these tests.
private let testChain = Result { () throws -> (root: Certificate, identities: [ACSSigningIdentity]) in
    let rootKey = try PrivateKey.generateP256()
    let now = Date()
    let root = try CertificateBuilder.issue(CertificateProfile(commonName: "Test DS CA", notBefore: now.addingTimeInterval(-3600), validFor: 365, isCA: true),
                                            publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
    let identities = try [PrivateKey.generateRSA(), PrivateKey.generateP256()].map { key in
        let leaf = try CertificateBuilder.issue(CertificateProfile(commonName: "Test ACS", notBefore: now.addingTimeInterval(-3600), validFor: 30,
                                                                   keyUsage: ["digitalSignature"]),
                                                publicKey: key.publicKey, issuer: root, issuerKey: rootKey)
        return ACSSigningIdentity(key: key, chain: [leaf, root])
    }
    return (root, identities)
}

@Suite("acsSignedContent: signed by the ACS, verified as SDKs do")
struct AcsSignedContentTests {
    @Test(arguments: [0, 1])
    func roundTrip(identity index: Int) throws {
        let (root, identities) = try testChain.get()
        let acsKey = try PrivateKey.generateP256()
        let sdkKey = try PrivateKey.generateP256().publicKey.emvJWK
        let compact = try AcsSignedContent.sign(acsURL: "https://localhost:8443/acs/challenge", acsEphemeralKey: acsKey.publicKey.jwk(),
                                                sdkEphemPubKey: sdkKey, identity: identities[index])
        let jws = try JWS(compact: compact)
        #expect(jws.header.alg == (index == 0 ? "PS256" : "ES256"))
        if index == 1 { #expect(jws.signature.count == 64) }  // raw R||S, not DER
        #expect(jws.header.x5c?.count == 2)
        let content = try AcsSignedContent(verifying: compact, with: CertificateVerifier(trustAnchors: [root]))
        #expect(content.acsURL == "https://localhost:8443/acs/challenge")
        #expect(content.acsEphemPubKey == acsKey.publicKey)
        #expect(content.sdkEphemPubKey == sdkKey)
        #expect(try JSONReader.parse(jws.payload).value.objectMembers?.map(\.key) == ["acsURL", "acsEphemPubKey", "sdkEphemPubKey"])
    }

    @Test func sdkChecksAreFailures() throws {
        let (root, identities) = try testChain.get()
        let compact = try AcsSignedContent.sign(acsURL: "https://acs.example/challenge", acsEphemeralKey: try PrivateKey.generateP256().publicKey.jwk(),
                                                sdkEphemPubKey: try PrivateKey.generateP256().publicKey.emvJWK, identity: identities[1])
        let verifier = CertificateVerifier(trustAnchors: [root])
        // Tampered payload: the signature fails.
        var parts = compact.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(#"{"acsURL":"https://evil.example","acsEphemPubKey":{},"sdkEphemPubKey":{}}"#)
        #expect(throws: AcsSignedContent.Failure.signature(.signatureInvalid)) {
            try AcsSignedContent(verifying: parts.joined(separator: "."), with: verifier)
        }
        // Past the leaf's validity, and under a root the SDK does not know.
        #expect(throws: AcsSignedContent.Failure.self) { try AcsSignedContent(verifying: compact, with: verifier, at: Date().addingTimeInterval(86_400 * 400)) }
        let stranger = try CertificateBuilder.issue(CertificateProfile(commonName: "Other", notBefore: Date().addingTimeInterval(-60), validFor: 10, isCA: true),
                                                    publicKey: try PrivateKey.generateP256().publicKey, issuer: nil, issuerKey: try PrivateKey.generateP256())
        #expect(throws: AcsSignedContent.Failure.self) { try AcsSignedContent(verifying: compact, with: CertificateVerifier(trustAnchors: [stranger])) }
        // A payload without acsURL, properly signed, is still refused.
        let bare = try JWS.sign(payload: Array(#"{"acsEphemPubKey":{}}"#.utf8), key: identities[1].key, algorithm: .es256, certificates: identities[1].chain)
        #expect(throws: AcsSignedContent.Failure.payload("acsURL is required")) { try AcsSignedContent(verifying: bare, with: verifier) }
    }
}
