import Configuration
import EMV3DS
import EventLoops
import Foundation
import Harness
import JSON
import Net
import SDKSimulator
import Testing
import TestSupport
import EMVCrypto

@Suite("Security model: mutual TLS, the admin token, what clients are told")
struct SecurityTests {
    @Test func withOnlyHTTPSAndClientCertificatesRequiredTheRolesStillReachEachOther() async throws {
        try await withHarness(configure: {
            $0.server.httpPort = nil
            $0.server.httpsPort = 0
            $0.tls.clientCA = "certs/tls/root-ca.pem"
            $0.tls.requireClientCertificate = true
        }) { harness in
            #expect(harness.baseURL.hasPrefix("https://"))
            let group = EventLoopGroup(loopCount: 1)
            defer { group.shutdown() }
            let certs = repositoryRoot + "/certs/tls/"
            let withCertificate = try HTTPClient(group: group, configuration: HTTPClientConfiguration(tls: TLSConfiguration(
                certificateChainFile: certs + "client-chain.pem", privateKeyFile: certs + "client-key.pem", trustRootsFile: certs + "root-ca.pem")))
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
            // The 3DS Server calls the DS, the DS the ACS: each over HTTPS, each with the harness's client certificate.
            let result = try await Simulator(client: withCertificate, baseURL: harness.baseURL).authenticate(sdk, pan: "4000000000001000")
            #expect(result.transStatus == "Y", "\(result.summary)")

            let withoutCertificate = try HTTPClient(group: group, configuration: HTTPClientConfiguration(tls: TLSConfiguration(trustRootsFile: certs + "root-ca.pem")))
            await #expect(throws: HTTPClientError.self) { _ = try await withoutCertificate.get(harness.baseURL + "/health") }
        }
    }

    @Test func aConfiguredAdminTokenGuardsEveryAdminPathAndNothingElse() async throws {
        let token = "correct-horse-battery-staple"
        try await withHarness(configure: { $0.admin.token = token }) { harness in
            for path in ["/admin/scenarios", "//admin/scenarios/", "/admin/no-such-thing"] {
                let refused = try await harness.get(path)
                #expect(refused.status.code == 401, "\(path)")
                #expect(refused.headers["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
            }
            let wrong = try await harness.client.get(harness.baseURL + "/admin/scenarios", headers: ["Authorization": "Bearer correct-horse-battery-stapler"])
            #expect(wrong.status.code == 401)
            let right = try await harness.client.get(harness.baseURL + "/admin/scenarios", headers: ["Authorization": "Bearer \(token)"])
            #expect(right.status.code == 200)
            #expect(try await harness.get("/health").status.code == 200)
            // The roles' own routes are not admin: a transaction still runs.
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
            #expect(try await harness.simulator.authenticate(sdk, pan: "4000000000001000").transStatus == "Y")
        }
    }

    @Test func aHarnessOnEveryInterfaceWithoutATokenDoesNotStart() throws {
        var configuration = HarnessConfiguration()
        configuration.server.host = "0.0.0.0"
        configuration.server.httpPort = 0
        configuration.server.httpsPort = nil
        #expect {
            _ = try HarnessApp(configuration: configuration, baseDirectory: repositoryRoot, logger: silentLogger)
        } throws: { error in
            "\(error)".contains("admin.token")
        }
    }

    @Test func anUnreachableACSIsReportedWithoutItsAddress() async throws {
        try await withHarness(configure: { $0.directoryServers[0].acsURL = "http://127.0.0.1:1/acs/areq" }) { harness in
            let answer = try await harness.postMessage("/ds/areq", try appAReq())
            #expect(answer["messageType"]?.stringValue == "Erro")
            #expect(answer["errorCode"]?.stringValue == "405")
            let description = answer["errorDescription"]?.stringValue ?? ""
            #expect(description.contains("the ACS: cannot connect"), "\(description)")
            #expect(!description.contains("127.0.0.1") && !description.contains("refused"), "\(description)")
        }
    }

    @Test func theMessageTrailShowsTheCardNumberMasked() async throws {
        try await withHarness { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
            let result = try await harness.simulator.authenticate(sdk, pan: "4000000000001000")
            let record = try JSONReader.parse(try await harness.get("/3ds-server/transactions/\(result.threeDSServerTransID ?? "")").body).value
            let areq = record["messages"]?.arrayValue?.first?["message"]
            #expect(areq?["messageType"]?.stringValue == "AReq")
            #expect(areq?["acctNumber"]?.stringValue == "400000******1000")
            #expect(!"\(record)".contains("4000000000001000"))
            // The authentication's own answer is the same record, written from the trail's bytes with the number masked in them.
            #expect(result.record["messages"]?.arrayValue?.first?["message"]?["acctNumber"]?.stringValue == "400000******1000")
            #expect(!"\(result.record)".contains("4000000000001000"))
        }
    }
}
