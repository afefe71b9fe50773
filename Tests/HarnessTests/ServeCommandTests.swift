import Foundation
import Harness
import JOSE
import TestSupport
import Testing

@Suite("serve command", .serialized)
struct ServeCommandTests {
    /// Starts `serve` on free ports, waits for its "listening" line, returns the ports.
    private func start(_ arguments: [String] = []) throws -> (ChildProcess, http: Int, https: Int) {
        let serve = try ChildProcess(harnessBinary, ["serve", "--http-port", "0", "--https-port", "0", "--loops", "2",
                                                     "--data-directory", scratchDataDirectory("serve-command")] + arguments,
                                     directory: repositoryRoot)
        let log = serve.awaitOutput { $0.contains("listening") ? $0 : nil } ?? ""
        func port(_ key: String) -> Int {
            guard let range = log.range(of: "\(key)=127.0.0.1:") else { return 0 }
            return Int(log[range.upperBound...].prefix { $0.isNumber }) ?? 0
        }
        return (serve, port("http"), port("https"))
    }

    @Test func servesHealthOverHTTPAndHTTPSThenExitsZeroOnSIGTERM() throws {
        let (serve, http, https) = try start()
        #expect(http > 0 && https > 0)
        let plain = try curl(["-sS", "http://127.0.0.1:\(http)/health"])
        #expect(plain == #"{"status":"ok","version":"\#(HarnessVersion.current)"}"#)
        let secure = try curl(["-sS", "--cacert", repositoryRoot + "/certs/tls/root-ca.pem", "https://localhost:\(https)/health"])
        #expect(secure == plain)
        let echo = try curl(["-sS", "-H", "Content-Type: application/json", "-d", #"{"a":[1,"b"]}"#, "http://127.0.0.1:\(http)/admin/echo"])
        #expect(echo == #"{"a":[1,"b"]}"#)
        let broken = try curl(["-sS", "-H", "Content-Type: application/json", "-d", #"{"a":"#, "http://127.0.0.1:\(http)/admin/echo"])
        #expect(broken.contains("body is not JSON"), "\(broken)")
        serve.signal(SIGTERM)
        #expect(serve.wait() == 0)
    }

    /// SIGTERM with `server.drainSeconds`: not ready at once, every request still answered while the balancer moves
    /// away, then the stop.
    @Test func onSIGTERMAnInstanceDrainsNotReadyButServingThenExits() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("drain-\(UUID().uuidString).yaml").path
        try "server:\n  drainSeconds: 3\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (serve, http, _) = try start(["--config", path])
        #expect(try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(http)/health/ready"]) == "200")
        serve.signal(SIGTERM)
        #expect(serve.awaitOutput { $0.contains("draining") ? $0 : nil } != nil, "\(serve.output)")
        let ready = try curl(["-s", "-w", " %{http_code}", "http://127.0.0.1:\(http)/health/ready"])
        #expect(ready.hasSuffix(" 503") && ready.contains("draining"), "\(ready)")
        // Still serving: liveness, and any request.
        #expect(try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(http)/health"]) == "200")
        let echo = try curl(["-sS", "-H", "Content-Type: application/json", "-d", #"{"a":1}"#, "http://127.0.0.1:\(http)/admin/echo"])
        #expect(echo == #"{"a":1}"#)
        #expect(serve.wait() == 0)
    }

    @Test func jsonLogsAreOneObjectPerLine() throws {
        let (serve, _, _) = try start(["--json-logs"])
        serve.signal(SIGINT)
        #expect(serve.wait() == 0)
        let lines = serve.output.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["level"] != nil && object?["msg"] != nil)
        }
    }

    @Test func badConfigurationExitsNonZeroWithTheReason() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).yaml").path
        try "server:\n  httpPort: -1\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (status, text) = try ChildProcess.run(harnessBinary, ["serve", "--config", path])
        #expect(status != 0)
        #expect(text.contains("server.httpPort: -1 is not a port"))
    }

    @Test func aTokenGivenOnlyInTheEnvironmentOpensANetworkAddress() throws {
        // A container's way: the file binds 0.0.0.0, the token comes from the environment.
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("open-\(UUID().uuidString).yaml").path
        try "server:\n  host: 0.0.0.0\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let serve = try ChildProcess("/usr/bin/env", ["THREEDS_HARNESS_ADMIN_TOKEN=0123456789abcdef-env", harnessBinary, "serve", "--config", path,
                                                      "--http-port", "0", "--https-port", "0", "--loops", "1",
                                                      "--data-directory", scratchDataDirectory("serve-open")], directory: repositoryRoot)
        let log = serve.awaitOutput { $0.contains("listening") ? $0 : nil } ?? ""
        #expect(log.contains("http=0.0.0.0:"), "\(serve.output)")
        let port = log.range(of: "http=0.0.0.0:").map { Int(log[$0.upperBound...].prefix { $0.isNumber }) ?? 0 } ?? 0
        #expect(try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/admin/scenarios"]) == "401")
        serve.signal(SIGTERM)
        #expect(serve.wait() == 0)
    }

    private func curl(_ arguments: [String]) throws -> String {
        try ChildProcess.run("/usr/bin/curl", arguments + ["--max-time", "10"]).output
    }
}

@Suite("pki and scenarios commands", .serialized)
struct PKICommandTests {
    private func harness(_ arguments: [String]) throws -> (status: Int32, output: String) {
        try ChildProcess.run(harnessBinary, arguments, directory: repositoryRoot)
    }

    @Test func generateIntoANewFolderThenRefuseThenForce() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pki-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // One Directory Server: the keys of seven, twice over, cost about 25 s of CPU for the same checks.
        let config = directory + ".yaml"
        try #"directoryServers: [{rid: A000000025, name: American Express, cardRanges: ["34"], authenticatedECI: "05", attemptedECI: "06"}]"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let first = try harness(["pki", "generate", "--config", config, "--dir", directory, "--years", "12"])
        #expect(first.status == 0, "\(first.output)")
        #expect(first.output.contains("wrote 18 files"), "\(first.output)")  // the TLS set, and one DS's
        let again = try harness(["pki", "generate", "--config", config, "--dir", directory])
        #expect(again.status != 0)
        #expect(again.output.contains("pass --force to overwrite"))
        // A set made before the Split-SDK's certificates gets them, under its own root, and nothing else changes.
        let root = try String(contentsOfFile: directory + "/A000000025/root-ca.pem", encoding: .utf8)
        for file in ["split-sdk-server-ec.pem", "split-sdk-server-ec-key.pem"] { try FileManager.default.removeItem(atPath: directory + "/A000000025/" + file) }
        let missing = try harness(["pki", "generate", "--config", config, "--dir", directory, "--missing"])
        #expect(missing.status == 0 && missing.output.contains("wrote 2 missing files"), "\(missing.output)")
        #expect(try String(contentsOfFile: directory + "/A000000025/root-ca.pem", encoding: .utf8) == root)
        let issued = try TestPKI(directory: directory).splitSDKServerCertificate("A000000025")
        #expect(issued.issuer == (try TestPKI(directory: directory).rootCertificate("A000000025")).subject)
        #expect(try harness(["pki", "generate", "--config", config, "--dir", directory, "--force"]).status == 0)
        let export = try harness(["pki", "export", "--config", config, "--dir", directory, "--rid", "a000000025", "--format", "json"])
        #expect(export.status == 0)
        #expect(export.output.contains(#""dsId" : "A000000025""#))
    }

    @Test func exportOfAnUnknownRIDNamesTheKnownOnes() throws {
        let result = try harness(["pki", "export", "--rid", "A000000999"])
        #expect(result.status != 0)
        #expect(result.output.contains("no Directory Server profile A000000999 (known: A000000003"))
    }

    @Test func scenariosListAndCheck() throws {
        let list = try harness(["scenarios", "list"])
        #expect(list.status == 0)
        #expect(list.output.contains("challenge-text\t4000000000110009\t"))
        #expect(list.output.contains("frictionless-y (default)"))
        let good = try harness(["scenarios", "check", "config/scenarios.yaml"])
        #expect(good.status == 0)
        #expect(good.output.contains("75 scenarios, default frictionless-y"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: [{uiType: text}]}}\n".write(toFile: file, atomically: true, encoding: .utf8)
        let bad = try harness(["scenarios", "check", file])
        #expect(bad.status == 1)
        #expect(bad.output.contains("scenarios[0] (a).challenge.steps[0].answer: required for uiType 01"))
    }
}
