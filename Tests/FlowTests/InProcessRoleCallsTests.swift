import Foundation
import Harness
import JSON
import Net
import Testing
import TestSupport

/// `server.roleCalls`: the roles call each other over the loopback (`http`) or without a socket
/// (`in-process`), with the same answers. The whole flow suite also runs both ways (`./harness test`).
@Suite("Roles calling each other in process")
struct InProcessRoleCallsTests {
    /// Connections the harness's server accepted since start, from its metrics.
    func acceptedConnections(_ harness: RunningHarness) async throws -> Int {
        let metrics = try await harness.get("/metrics").bodyText
        let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix("threeds_http_connections_total ") })
        return Int(Double(line.split(separator: " ").last ?? "") ?? -1)
    }

    @Test(arguments: [("in-process", 1), ("http", 2)])
    func aLookupThroughTheDSOpensAConnectionOnlyOverHTTP(_ calls: String, _ connections: Int) async throws {
        try await withHarness(configure: { $0.server.roleCalls = calls }) { harness in
            let lookup = try await harness.post("/3ds-server/versions", JSONWriter.write(.object([("acctNumber", .string("4000000000001000"))])))
            #expect(lookup.status == .ok, "\(lookup.bodyText)")
            #expect(try JSONReader.parse(lookup.body).value["messageVersions"]?.arrayValue?.count == 3)
            // The test's own connection, and over HTTP the 3DS Server's to the DS. Accepted, not open: whether a kept-alive
            // connection is still open is the peers' business (one was seen gone on a machine loaded by the whole suite).
            #expect(try await acceptedConnections(harness) == connections)
            // The DS counted the PReq either way.
            #expect(try await harness.get("/metrics").bodyText.contains(#"threeds_http_requests_total{route="/ds/preq",method="POST",status="200"} 1"#))
        }
    }

    @Test func anUnknownSettingIsRefusedSayingWhy() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("role-calls-\(UUID().uuidString).yaml").path
        try "server:\n  roleCalls: carrier-pigeon\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect { try HarnessConfiguration.load(path: path) } throws: { "\($0)".contains("server.roleCalls: \"carrier-pigeon\" is not http or in-process") }
    }
}
