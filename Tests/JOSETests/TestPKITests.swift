import Foundation
@testable import JOSE
import TestSupport
import Testing

@Suite("Test PKI")
struct TestPKITests {
    private func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pki-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func generatedSetChainsAndSignsLikeAnACS() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let profile = DirectoryServerProfile(rid: "A000000003", name: "Visa")
        let pki = TestPKI(directory: directory)
        let written = try pki.generate(profiles: [profile], tlsNames: ["harness.test", "10.0.0.5"])
        #expect(written.count == TestPKI.files(for: [profile]).count)

        let verifier = CertificateVerifier(trustAnchors: [try pki.rootCertificate("A000000003")])
        for variant in TestPKI.KeyVariant.allCases {
            try verifier.verify(leaf: pki.dsCertificate("A000000003", variant))
            // An acsSignedContent as an SDK receives it: x5c leaf first, chaining to the DS CA root.
            let key = try pki.acsPrivateKey("A000000003", variant)
            let certificate = try pki.acsCertificate("A000000003", variant)
            #expect(certificate.publicKey == key.publicKey)
            let compact = try JWS.sign(payload: Array("{}".utf8), key: key, algorithm: variant == .rsa ? .ps256 : .es256,
                                       certificates: [certificate])
            try JWS(compact: compact).verifyWithCertificateChain(verifier)
            // Still valid in ten years, as an SDK set up once expects.
            try verifier.verify(leaf: certificate, at: Date().addingTimeInterval(10 * 365 * 86_400))
            // DS keys decrypt what is encrypted to their certificate's key.
            let dsKey = try pki.dsPrivateKey("A000000003", variant)
            let recipient: JWERecipient = variant == .rsa
                ? .rsa(try pki.dsCertificate("A000000003", variant).publicKey, .rsaOAEP256)
                : .ecdhES(try pki.dsCertificate("A000000003", variant).publicKey)
            let jwe = try JWE.encrypt(Array("device data".utf8), to: recipient, encryption: .a128cbcHS256)
            #expect(try JWE(compact: jwe).decrypt(with: dsKey) == Array("device data".utf8))
        }
        let tls = try String(contentsOfFile: directory + "/tls/server-chain.pem", encoding: .utf8)
        let server = try Certificate(pem: tls)
        try CertificateVerifier(trustAnchors: [try Certificate(pem: String(contentsOfFile: directory + "/tls/root-ca.pem", encoding: .utf8))])
            .verify(leaf: server)
        #expect(server.subject == "CN=localhost,O=3DS Test Harness")
    }

    @Test func generateRefusesToOverwriteWithoutForce() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pki = TestPKI(directory: directory)
        let profiles = [DirectoryServerProfile(rid: "F000000001", name: "Harness Test")]
        _ = try pki.generate(profiles: profiles)
        let before = try String(contentsOfFile: pki.rootCertificatePath("F000000001"), encoding: .utf8)
        #expect(throws: TestPKIError.wouldOverwrite(directory + "/tls/root-ca.pem", count: 16)) {
            _ = try pki.generate(profiles: profiles)
        }
        #expect(try String(contentsOfFile: pki.rootCertificatePath("F000000001"), encoding: .utf8) == before)
        _ = try pki.generate(profiles: profiles, overwrite: true)
        #expect(try String(contentsOfFile: pki.rootCertificatePath("F000000001"), encoding: .utf8) != before)
    }

    @Test(arguments: DirectoryServerProfile.defaults)
    func committedSetIsCompleteAndValidForTenYears(profile: DirectoryServerProfile) throws {
        let pki = TestPKI(directory: repositoryRoot + "/certs")
        let verifier = CertificateVerifier(trustAnchors: [try pki.rootCertificate(profile.rid)])
        let inTenYears = Date().addingTimeInterval(10 * 365 * 86_400)
        for variant in TestPKI.KeyVariant.allCases {
            try verifier.verify(leaf: pki.dsCertificate(profile.rid, variant), at: inTenYears)
            try verifier.verify(leaf: pki.acsCertificate(profile.rid, variant), at: inTenYears)
            #expect(try pki.dsPrivateKey(profile.rid, variant).publicKey == pki.dsCertificate(profile.rid, variant).publicKey)
            #expect(try pki.acsPrivateKey(profile.rid, variant).publicKey == pki.acsCertificate(profile.rid, variant).publicKey)
        }
    }

    @Test func exportFormatsCarryTheDSIdKeyIdsCertificatesAndRoot() throws {
        let pki = TestPKI(directory: repositoryRoot + "/certs")
        let configuration = try SDKConfiguration(pki: pki, profile: DirectoryServerProfile(rid: "A000000004", name: "Mastercard"))
        let pem = configuration.render(.pem)
        #expect(pem.contains("DS id (RID) A000000004"))
        #expect(pem.contains("key id A000000004-ds-rsa") && pem.contains("key id A000000004-ds-ec"))
        #expect(try Certificate.chain(pem: pem).count == 3)
        let jwks = try JSONSerialization.jsonObject(with: Data(configuration.render(.jwk).utf8)) as? [String: [[String: Any]]]
        #expect(jwks?["keys"]?.map { $0["kid"] as? String } == ["A000000004-ds-rsa", "A000000004-ds-ec"])
        let json = try JSONSerialization.jsonObject(with: Data(configuration.render(.json).utf8)) as? [String: Any]
        #expect(json?["dsId"] as? String == "A000000004")
        let der = configuration.render(.der)
        let rootLine = try #require(der.split(separator: "\n").first { $0.hasPrefix("dsCARoot: ") })
        let rootDER = try #require(Data(base64Encoded: String(rootLine.dropFirst("dsCARoot: ".count))))
        #expect(try Certificate(der: Array(rootDER)) == configuration.root)
    }
}
