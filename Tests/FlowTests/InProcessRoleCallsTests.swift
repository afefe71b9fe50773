import Configuration
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
    /// A request by `curl`: one connection of its own each time, whatever the load (a client that keeps connections
    /// alive may open another when the machine is slow: seen in the whole suite, in both modes).
    func curl(_ harness: RunningHarness, _ path: String, body: String? = nil) async throws -> String {
        let arguments = ["-s", "--max-time", "30"] + (body.map { ["-H", "Content-Type: application/json", "-d", $0] } ?? []) + [harness.baseURL + path]
        return try await offThePool { try ChildProcess.run("/usr/bin/curl", arguments).output }
    }

    @Test(arguments: [(RoleCalls.inProcess, 2), (.http, 3)])
    func aLookupThroughTheDSOpensAConnectionOnlyOverHTTP(_ calls: RoleCalls, _ connections: Int) async throws {
        try await withHarness(configure: { $0.server.roleCalls = calls }) { harness in
            let lookup = try await curl(harness, "/3ds-server/versions", body: #"{"acctNumber":"4000000000001000"}"#)
            #expect(try JSONReader.parse(Array(lookup.utf8)).value["messageVersions"]?.arrayValue?.count == 3, "\(lookup)")
            // Accepted since start: the two curls' (the lookup, this read), and over HTTP the 3DS Server's to the DS.
            let metrics = try await curl(harness, "/metrics")
            let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix("threeds_http_connections_total ") })
            #expect(Int(Double(line.split(separator: " ").last ?? "") ?? -1) == connections, "\(line)")
            // The DS counted the PReq either way.
            #expect(metrics.contains(#"threeds_http_requests_total{route="/ds/preq",method="POST",status="200"} 1"#))
        }
    }

    @Test func anUnknownSettingIsRefusedSayingWhy() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("role-calls-\(UUID().uuidString).yaml").path
        try "server:\n  roleCalls: carrier-pigeon\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect { try HarnessConfiguration.load(path: path) } throws: { "\($0)".contains("server.roleCalls: \"carrier-pigeon\" is not http or in-process") }
    }
}
