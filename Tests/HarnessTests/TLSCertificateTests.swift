import Configuration
import Foundation
import Harness
import JOSE
import TestSupport
import Testing

/// The TLS server certificate a phone accepts: issued anew under the committed TLS root with
/// the names it reaches the harness by, for at most 397 days, and nothing else touched.
@Suite("TLS server certificate for devices", .serialized)
struct TLSCertificateTests {
    /// A copy of the committed test PKI in a temporary folder, removed after the test.
    private func leaf(_ directory: String) throws -> Certificate {
        try #require(try Certificate.chain(pem: String(contentsOfFile: directory + "/tls/server-chain.pem", encoding: .utf8)).first)
    }

    private func fileContents(_ directory: String) throws -> [String: Data] {
        var contents: [String: Data] = [:]
        for case let file as String in FileManager.default.enumerator(atPath: directory)! where file.hasSuffix(".pem") {
            contents[file] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + file))
        }
        return contents
    }

    @Test func pkiTLSIssuesOnlyTheServerCertificateWithTheNamesForAtMost397Days() throws {
        let directory = try copyOfTheTestPKI("tls")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let before = try fileContents(directory)
        let result = try ChildProcess.run(harnessBinary, ["pki", "tls", "--dir", directory, "--name", "192.168.1.20", "--name", "harness"])
        #expect(result.status == 0, "\(result.output)")
        let certificate = try leaf(directory)
        for host in ["localhost", "127.0.0.1", "::1", "192.168.1.20", "harness"] { #expect(certificate.covers(host: host), "\(host)") }
        #expect(!certificate.covers(host: "192.168.1.21"))
        #expect(certificate.notAfter.timeIntervalSince(certificate.notBefore) <= 397 * 86_400)
        let root = try Certificate(pem: String(contentsOfFile: directory + "/tls/root-ca.pem", encoding: .utf8))
        try CertificateVerifier(trustAnchors: [root]).verify(leaf: certificate)
        // Every other file byte for byte: the DS and ACS keys an SDK is configured with stay valid.
        let after = try fileContents(directory)
        let changed = Set(after.keys.filter { after[$0] != before[$0] })
        #expect(changed == ["tls/server-chain.pem", "tls/server-key.pem"])
        #expect(after.count == before.count)
    }

    @Test func aCertificateThatExpiredOrLacksANameIsAProblemAndAFreshOneIsNot() throws {
        let directory = try copyOfTheTestPKI("tls")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pki = TestPKI(directory: directory)
        let path = pki.tlsServerCertificatePath
        _ = try pki.issueTLSServerCertificate(names: [], now: Date().addingTimeInterval(-400 * 86_400))
        #expect(TestPKI.tlsServerCertificateProblem(at: path, names: [])?.hasPrefix("it expired on") == true)
        _ = try pki.issueTLSServerCertificate(names: [], now: Date().addingTimeInterval(-380 * 86_400))
        #expect(TestPKI.tlsServerCertificateProblem(at: path, names: [])?.contains("within 30 days") == true)
        _ = try pki.issueTLSServerCertificate(names: ["10.0.2.2"])
        #expect(TestPKI.tlsServerCertificateProblem(at: path, names: ["10.0.2.2"]) == nil)
        #expect(TestPKI.tlsServerCertificateProblem(at: path, names: ["harness"]) == "it does not name harness")
        #expect(TestPKI.tlsServerCertificateProblem(at: directory + "/nothing.pem", names: [])?.hasSuffix("is missing") == true)
    }

    @Test func serveIssuesAnExpiredCertificateAnewAtStartAndServesIt() throws {
        let directory = try copyOfTheTestPKI("tls")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try TestPKI(directory: directory).issueTLSServerCertificate(names: [], now: Date().addingTimeInterval(-400 * 86_400))
        let config = directory + "/harness.yaml"
        try """
            pkiDirectory: \(directory)
            tls: {certificate: \(directory)/tls/server-chain.pem, privateKey: \(directory)/tls/server-key.pem, names: [harness.test]}
            scenarios: \(repositoryRoot)/config/scenarios.yaml
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let serve = try ChildProcess(harnessBinary, ["serve", "--config", config, "--http-port", "0", "--https-port", "0", "--loops", "1"])
        let log = serve.awaitOutput { $0.contains("listening") ? $0 : nil } ?? ""
        #expect(log.contains("re-issued the TLS server certificate"), "\(serve.output)")
        #expect(log.contains("reason=it expired on"), "\(log)")
        let certificate = try leaf(directory)
        #expect(certificate.notAfter > Date().addingTimeInterval(395 * 86_400) && certificate.covers(host: "harness.test"))
        let https = log.range(of: "https=127.0.0.1:").map { Int(log[$0.upperBound...].prefix { $0.isNumber }) ?? 0 } ?? 0
        let health = try ChildProcess.run("/usr/bin/curl", ["-sS", "--max-time", "10", "--cacert", directory + "/tls/root-ca.pem",
                                                           "--resolve", "harness.test:\(https):127.0.0.1", "https://harness.test:\(https)/health"])
        #expect(health.output.hasPrefix(#"{"status":"ok""#), "\(health.output)")
        serve.signal(SIGTERM)
        #expect(serve.wait() == 0)
    }

    @Test func aCertificateTheUserBroughtIsNeverOverwritten() throws {
        let directory = try copyOfTheTestPKI("tls")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Their own: self-signed, ten years, no names of ours.
        let key = try PrivateKey.generateP256()
        let own = try CertificateBuilder.issue(CertificateProfile(commonName: "their.example", validFor: 3650, extendedKeyUsage: ["serverAuth"],
                                                                  dnsNames: ["their.example"]),
                                               publicKey: key.publicKey, issuer: nil, issuerKey: key)
        try own.pemRepresentation.write(toFile: directory + "/own.pem", atomically: true, encoding: .utf8)
        try key.pemRepresentation.write(toFile: directory + "/own-key.pem", atomically: true, encoding: .utf8)
        let config = directory + "/harness.yaml"
        try """
            pkiDirectory: \(directory)
            tls: {certificate: \(directory)/own.pem, privateKey: \(directory)/own-key.pem}
            scenarios: \(repositoryRoot)/config/scenarios.yaml
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let serve = try ChildProcess(harnessBinary, ["serve", "--config", config, "--http-port", "0", "--https-port", "0", "--loops", "1"])
        let log = serve.awaitOutput { $0.contains("listening") ? $0 : nil } ?? ""
        serve.signal(SIGTERM)
        #expect(serve.wait() == 0)
        #expect(log.contains("it is not the test PKI's, so it stays"), "\(log)")
        #expect(try String(contentsOfFile: directory + "/own.pem", encoding: .utf8) == own.pemRepresentation)
    }

    @Test func urlsPrintsWhatAnEmulatorMustUse() throws {
        let result = try ChildProcess.run(harnessBinary, ["urls", "--host", "10.0.2.2"], directory: repositoryRoot)
        #expect(result.status == 0)
        #expect(result.output.contains("https://10.0.2.2:8443/3ds-server/authenticate"))
        #expect(result.output.contains("challengeURL: https://10.0.2.2:8443/acs/challenge"))
        #expect(result.output.contains(#"names: ["10.0.2.2"]"#))
        #expect(!result.output.contains("host: 0.0.0.0"))  // the emulator reaches the host's loopback
        let phone = try ChildProcess.run(harnessBinary, ["urls", "--host", "192.168.1.20"], directory: repositoryRoot)
        #expect(phone.output.contains("host: 0.0.0.0"))
    }

    @Test func versionIsPrinted() throws {
        let result = try ChildProcess.run(harnessBinary, ["--version"])
        #expect(result.status == 0 && result.output.trimmingCharacters(in: .whitespacesAndNewlines) == HarnessVersion.current)
    }

    @Test func aCommandRunElsewhereFindsTheConfigurationOfItsBinarysCheckout() throws {
        let elsewhere = FileManager.default.temporaryDirectory.path
        let location = try ConfigurationLocation.find(explicit: nil, workingDirectory: elsewhere,
                                                      executable: repositoryRoot + "/.build/debug/threeds-harness")
        #expect(location.baseDirectory == repositoryRoot)
        #expect(location.resolve(location.configuration.pkiDirectory) == repositoryRoot + "/certs")
        let nowhere = try ConfigurationLocation.find(explicit: nil, workingDirectory: elsewhere, executable: "/usr/bin/true")
        #expect(nowhere.path == nil && nowhere.baseDirectory == elsewhere)
    }
}
