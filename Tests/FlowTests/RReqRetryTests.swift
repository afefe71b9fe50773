import Configuration
import EMV3DS
import EventLoops
import Foundation
import Harness
import JSON
import Net
import SDKSimulator
import Synchronization
import Testing
import TestSupport

/// An RReq that surely did not reach the DS (no connection, or HTTP 503 as a balancer answers while an instance restarts) is
/// sent again, a bounded number of times, each attempt a job in the store; the ACS's record says what came of it. The harness
/// stands behind a balancer of the test's (`server.publicURL`), which refuses the DS's results path as it is told to.
@Suite("An RReq sent again")
struct RReqRetryTests {
    /// A balancer before the harness: passes the roles' messages on, except the RReqs to the DS it answers 503 while
    /// `refusing` > 0.
    final class Balancer: Sendable {
        let group = EventLoopGroup(loopCount: 1)
        let server: HTTPServer
        private let state: Shared

        /// What the balancer's routes and the test share.
        final class Shared: Sendable {
            let value: Mutex<(harness: String?, refusing: Int, rreqs: Int, refused: Int)>
            init(refusing: Int) { value = Mutex((nil, refusing, 0, 0)) }
        }

        init(refusing: Int) throws {
            let state = Shared(refusing: refusing)
            self.state = state
            let client = try HTTPClient(group: group)
            var router = Router()
            // What the roles send each other at the public URL in a decoupled authentication: the results (a transaction's
            // first messages go to the harness's own address).
            for path in ["/ds/rreq", "/3ds-server/rreq"] {
                router.post(path) { request, _ async throws in
                    let (base, refused) = state.value.withLock { state -> (String?, Bool) in
                        guard path == "/ds/rreq" else { return (state.harness, false) }
                        state.rreqs += 1
                        let refused = state.refusing > 0
                        state.refusing -= refused ? 1 : 0
                        state.refused += refused ? 1 : 0
                        return (state.harness, refused)
                    }
                    guard !refused, let base else { return HTTPResponse(status: HTTPStatus(code: 503), headers: ["Content-Type": "text/plain"], body: Array("no server is available\n".utf8)) }
                    return try await client.post(base + path, body: request.body, contentType: request.headers["Content-Type"] ?? "application/json")
                }
            }
            server = try HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", httpPort: 0, httpsPort: nil, tls: nil), router: router, group: group)
            try server.start()
        }

        var url: String { "http://127.0.0.1:\(server.httpPort ?? 0)" }
        func passOn(to harness: String) { state.value.withLock { $0.harness = harness } }
        /// The RReqs sent to the DS through the balancer, refused or not.
        var rreqs: Int { state.value.withLock { $0.rreqs } }
        /// The RReqs it refused.
        var refusals: Int { state.value.withLock { $0.refused } }

        func stop() {
            server.shutdown()
            group.shutdown()
        }
    }

    /// A decoupled authentication in the browser (its result 2 s after the ARes D) through the harness behind `balancer`,
    /// the ACS sending an RReq that got no RRes again `retries` times, 0.2 s apart: the ACS's record of it, once it ends.
    func decoupledResult(behind balancer: Balancer, retries: Int) async throws -> (acs: JSONValue, threeDSServer: JSONValue) {
        var outcome: (JSONValue, JSONValue) = (.null, .null)
        try await withHarness(configure: {
            $0.server.publicURL = balancer.url
            // The roles call each other over HTTP, the results through the balancer.
            $0.server.roleCalls = .http
            ($0.accessControlServer.rreqRetries, $0.accessControlServer.rreqRetrySeconds) = (retries, 0.2)
        }, transport: .loopback) { harness in
            // The harness's own address: its base URL names the balancer.
            let direct = "http://127.0.0.1:\(harness.app.server.httpPort ?? 0)"
            balancer.passOn(to: direct)
            var request = browserRequest(pan: "4000000000190001", version: .v2_2_0)
            request.set("threeDSRequestorDecReqInd", .string("Y"))
            let record = try JSONReader.parse(try await harness.client.post(direct + "/3ds-server/authenticate", body: JSONWriter.write(request)).body).value
            let id = try #require(record["threeDSServerTransID"]?.stringValue, "\(record)")
            let acsTransID = try #require(record["acsTransID"]?.stringValue, "\(record)")
            #expect(record["transStatus"]?.stringValue == "D", "\(record)")
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                let list = try JSONReader.parse(try await harness.client.get(direct + "/admin/acs/transactions?limit=20").body).value
                let acs = (list["transactions"]?.arrayValue ?? list.arrayValue ?? []).first { $0["acsTransID"]?.stringValue == acsTransID } ?? .null
                let delivery = acs["resultsDelivery"]?.stringValue ?? ""
                // Settled: an answer, or a failure with no attempt left.
                if !delivery.isEmpty, !delivery.contains("; attempt ") {
                    outcome = (acs, (try? await Simulator(client: harness.client, baseURL: direct).record(id).record) ?? .null)
                    // The inspector shows each attempt the DS never had.
                    let dsTransID = try #require(record["dsTransID"]?.stringValue)
                    let entry = try JSONReader.parse(try await harness.client.get(direct + "/inspector/transactions/\(dsTransID)").body).value
                    let notes = (entry["messages"]?.arrayValue ?? []).compactMap { $0["note"]?.stringValue }.filter { $0.hasPrefix("not delivered") }
                    #expect(notes.count == min(balancer.refusals, retries + 1), "\(notes)")
                    return
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            Issue.record("the ACS's RReq had no outcome after 30 s")
        }
        return outcome
    }

    @Test func anRReqRefusedWith503IsSentAgainAndTheResultReachesThe3DSServer() async throws {
        let balancer = try Balancer(refusing: 1)
        defer { balancer.stop() }
        let (acs, threeDSServer) = try await decoupledResult(behind: balancer, retries: 3)
        #expect(acs["resultsDelivery"]?.stringValue == "RRes resultsStatus 01", "\(acs)")
        #expect(balancer.rreqs == 2)
        #expect(threeDSServer["transStatus"]?.stringValue == "Y", "\(threeDSServer)")
    }

    @Test func anRReqIsGivenUpAfterItsRetries() async throws {
        let balancer = try Balancer(refusing: 100)
        defer { balancer.stop() }
        let (acs, _) = try await decoupledResult(behind: balancer, retries: 2)
        let delivery = acs["resultsDelivery"]?.stringValue ?? ""
        #expect(delivery.hasPrefix("no RRes after 3 attempts") && delivery.contains("503"), "\(acs)")
        #expect(balancer.rreqs == 3)
    }
}
