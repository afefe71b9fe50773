import Foundation
import Testing
@testable import Net

private func router() -> Router {
    var router = Router()
    router.get("/health") { _, context in .text(context.isSecure ? "secure" : "plain") }
    router.get("/whoami") { _, context in .text(context.clientCertificateSubject ?? "anonymous") }
    return router
}

@Suite("TLS")
struct TLSTests {
    @Test func curlVerifiesTheServerAgainstTheTestRoot() throws {
        let server = try TestServer(router: router(), tls: TestCerts.server)
        defer { server.stop() }
        let result = try run("/usr/bin/curl", ["-sS", "--cacert", TestCerts.root, "https://localhost:\(server.tlsPort)/health",
                                               "-w", " %{ssl_verify_result}"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output == "secure 0")
        // Plain HTTP keeps working beside HTTPS.
        let plain = try run("/usr/bin/curl", ["-sS", "http://127.0.0.1:\(server.port)/health"])
        #expect(plain.output == "plain")
    }

    @Test func curlWithoutTheRootRefusesTheServer() throws {
        let server = try TestServer(router: router(), tls: TestCerts.server)
        defer { server.stop() }
        let result = try run("/usr/bin/curl", ["-sS", "https://localhost:\(server.tlsPort)/health"])
        #expect(result.status == 60, "\(result.output)")  // curl: peer certificate cannot be authenticated
    }

    @Test(arguments: ["-tls1_2", "-tls1_3"])
    func opensslClientNegotiatesP256AndAES128GCM(version: String) throws {
        let server = try TestServer(router: router(), tls: TestCerts.server)
        defer { server.stop() }
        let result = try run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(server.tlsPort)", version,
                                                  "-CAfile", TestCerts.root, "-verify_return_error", "-brief", "-ign_eof"],
                             input: "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("Verification: OK"))
        #expect(result.output.contains("AES128-GCM") || result.output.contains("TLS_AES_128_GCM_SHA256"))
        #expect(result.output.contains("P-256") || result.output.contains("prime256v1"))
        #expect(result.output.contains("secure"))
    }

    @Test func tls11IsRefused() throws {
        let server = try TestServer(router: router(), tls: TestCerts.server)
        defer { server.stop() }
        let result = try run("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(server.tlsPort)", "-tls1_1", "-brief"], input: "")
        #expect(result.status != 0)
    }

    @Test func mutualTLSAcceptsAClientCertificateFromTheCAAndRejectsOthers() throws {
        var tls = TestCerts.server
        tls.trustRootsFile = TestCerts.root
        tls.requireClientCertificate = true
        let server = try TestServer(router: router(), tls: tls)
        defer { server.stop() }
        let url = "https://localhost:\(server.tlsPort)/whoami"
        let accepted = try run("/usr/bin/curl", ["-sS", "--cacert", TestCerts.root, "--cert", TestCerts.clientChain, "--key", TestCerts.clientKey, url])
        #expect(accepted.status == 0, "\(accepted.output)")
        #expect(accepted.output.contains("CN=Harness Test Client"))

        let none = try run("/usr/bin/curl", ["-sS", "--cacert", TestCerts.root, url])
        #expect(none.status != 0)

        // A certificate from another CA: a fresh self-signed one.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mtls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let made = try run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                "-subj", "/CN=Stranger", "-days", "1",
                                                "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem"])
        #expect(made.status == 0, "\(made.output)")
        let stranger = try run("/usr/bin/curl", ["-sS", "--cacert", TestCerts.root, "--cert", directory + "/cert.pem", "--key", directory + "/key.pem", url])
        #expect(stranger.status != 0)
        #expect(!stranger.output.contains("Stranger"))
    }

    @Test func serverRefusesToStartWithAKeyThatDoesNotMatch() {
        let mismatched = TLSConfiguration(certificateChainFile: TestCerts.serverChain, privateKeyFile: TestCerts.clientKey)
        #expect(throws: NetError.tls("private key \(TestCerts.clientKey) does not match certificate \(TestCerts.serverChain)")) {
            _ = try TLSContext(server: mismatched)
        }
    }
}
