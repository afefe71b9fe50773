import Foundation
import Testing
import TestSupport

/// docs/operations.md's instance, done as the guide writes it but for its addresses: the guide's configuration file (its
/// `host` the loopback rather than every interface), the store's URL and the admin token in the environment, a PostgreSQL
/// of Debian's package. A key the guide names that the harness no longer takes, or a setting that no longer does what the
/// guide says, fails here.
@Suite("The operator's guide, done as written", .enabled(if: TemporaryPostgres.missing == nil, Comment(rawValue: TemporaryPostgres.missing ?? "")))
struct OperationsGuideTests {
    /// The configuration file of the guide's "Set it up": its first YAML block.
    static func guideConfiguration() throws -> String {
        let guide = try String(contentsOfFile: repositoryRoot + "/docs/operations.md", encoding: .utf8)
        let setUp = try #require(guide.range(of: "## Set it up"), "docs/operations.md has no \"Set it up\"")
        let open = try #require(guide[setUp.upperBound...].range(of: "```yaml\n"), "no YAML block under \"Set it up\"")
        let close = try #require(guide[open.upperBound...].range(of: "```"))
        return String(guide[open.upperBound..<close.lowerBound])
    }

    @Test func anInstanceConfiguredAsTheGuideSaysIsReadyWithoutHTTPSGuardsAdminAndDrains() throws {
        let configuration = try Self.guideConfiguration()
        try #require(configuration.contains("host: 0.0.0.0"), "the guide's instance no longer binds every interface: \(configuration)")
        let database = try TemporaryPostgres()
        defer { database.stop() }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString).yaml").path
        try configuration.replacingOccurrences(of: "host: 0.0.0.0", with: "host: 127.0.0.1").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let token = "guide-token-0123456789abcdef"
        // No THREEDS_HARNESS_INSTANCE_URL: an address, which defaults to the bound one, as the port is any free one here.
        let serve = try ChildProcess("/usr/bin/env", ["THREEDS_HARNESS_STORE_URL=\(database.url)", "THREEDS_HARNESS_ADMIN_TOKEN=\(token)",
                                                      harnessBinary, "serve", "--config", path, "--http-port", "0", "--loops", "1",
                                                      "--data-directory", scratchDataDirectory("operations-guide")], directory: repositoryRoot)
        let log = serve.awaitOutput { $0.contains("listening") ? $0 : nil } ?? ""
        let port = try #require(log.range(of: "http=127.0.0.1:").flatMap { Int(log[$0.upperBound...].prefix { $0.isNumber }) }, "\(serve.output)")
        #expect(log.contains("https=off"), "httpsPort: null opens no HTTPS port: \(log)")
        let url = "http://127.0.0.1:\(port)"
        let deadline = Date().addingTimeInterval(30)
        while try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", url + "/health/ready"]) != "200", Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(try curl(["-s", url + "/health/ready"]) == #"{"status":"ready"}"#, "\(serve.output.suffix(2000))")
        #expect(try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", url + "/admin/pins"]) == "401")
        #expect(try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Authorization: Bearer \(token)", url + "/admin/pins"]) == "200")
        // SIGTERM: not ready at once, serving for drainSeconds, then exit 0.
        serve.signal(SIGTERM)
        #expect(serve.awaitOutput { $0.contains("draining") ? $0 : nil } != nil, "\(serve.output.suffix(2000))")
        #expect(try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", url + "/health/ready"]) == "503")
        #expect(serve.wait() == 0, "\(serve.output.suffix(2000))")
    }

    private func curl(_ arguments: [String]) throws -> String {
        try ChildProcess.run("/usr/bin/curl", arguments + ["--max-time", "10"]).output
    }
}
