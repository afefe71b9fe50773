import Foundation
import Testing

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// The built `threeds-harness` next to this test bundle.
private var harnessBinary: String {
    let bundle = Bundle.main.bundleURL.deletingLastPathComponent()
    let candidates = [bundle.appendingPathComponent("threeds-harness").path,
                      repositoryRoot + "/.build/debug/threeds-harness"]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[1]
}

@Suite("serve command", .serialized)
struct ServeCommandTests {
    /// Starts `serve` on free ports, waits for its "listening" line, returns the ports.
    private func start(_ arguments: [String] = []) throws -> (Process, FileHandle, http: Int, https: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: harnessBinary)
        process.arguments = ["serve", "--http-port", "0", "--https-port", "0", "--loops", "2"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        try process.run()
        var log = ""
        let deadline = Date().addingTimeInterval(20)
        while !log.contains("listening"), Date() < deadline, process.isRunning {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            log += String(decoding: chunk, as: UTF8.self)
        }
        func port(_ key: String) -> Int {
            guard let range = log.range(of: "\(key)=127.0.0.1:") else { return 0 }
            return Int(log[range.upperBound...].prefix { $0.isNumber }) ?? 0
        }
        return (process, pipe.fileHandleForReading, port("http"), port("https"))
    }

    @Test func servesHealthOverHTTPAndHTTPSThenExitsZeroOnSIGTERM() throws {
        let (process, _, http, https) = try start()
        defer { if process.isRunning { process.terminate() } }
        #expect(http > 0 && https > 0)
        let plain = try curl(["-sS", "http://127.0.0.1:\(http)/health"])
        #expect(plain == #"{"status":"ok"}"#)
        let secure = try curl(["-sS", "--cacert", repositoryRoot + "/certs/tls/root-ca.pem", "https://localhost:\(https)/health"])
        #expect(secure == #"{"status":"ok"}"#)
        let echo = try curl(["-sS", "-H", "Content-Type: application/json", "-d", #"{"a":[1,"b"]}"#, "http://127.0.0.1:\(http)/admin/echo"])
        #expect(echo == #"{"a":[1,"b"]}"#)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test func jsonLogsAreOneObjectPerLine() throws {
        let (process, output, _, _) = try start(["--json-logs"])
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let rest = String(decoding: output.readDataToEndOfFile(), as: UTF8.self)
        let lines = rest.split(separator: "\n")
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: harnessBinary)
        process.arguments = ["serve", "--config", path]
        let text = try runCapturingOutput(process)
        #expect(process.terminationStatus != 0)
        #expect(text.contains("server.httpPort: -1 is not a port"))
    }

    private func curl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = arguments + ["--max-time", "10"]
        return try runCapturingOutput(process)
    }
}

@Suite("pki and scenarios commands", .serialized)
struct PKICommandTests {
    private func harness(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: repositoryRoot + "/.build/debug/threeds-harness")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
        let output = try runCapturingOutput(process)
        return (process.terminationStatus, output)
    }

    @Test func generateIntoANewFolderThenRefuseThenForce() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pki-cli-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try harness(["pki", "generate", "--dir", directory, "--years", "12"])
        #expect(first.status == 0, "\(first.output)")
        #expect(first.output.contains("wrote 76 files"))
        let again = try harness(["pki", "generate", "--dir", directory])
        #expect(again.status != 0)
        #expect(again.output.contains("pass --force to overwrite"))
        #expect(try harness(["pki", "generate", "--dir", directory, "--force"]).status == 0)
        let export = try harness(["pki", "export", "--dir", directory, "--rid", "a000000025", "--format", "json"])
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
        #expect(good.output.contains("15 scenarios, default frictionless-y"))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try "defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: [{uiType: text}]}}\n".write(toFile: file, atomically: true, encoding: .utf8)
        let bad = try harness(["scenarios", "check", file])
        #expect(bad.status == 1)
        #expect(bad.output.contains("scenarios[0] (a).challenge.steps[0].answer: required for uiType 01"))
    }
}

/// Runs `process` to its end and returns its output and errors. They go to a file, not a pipe:
/// Foundation's pipe read traps on EINTR, which another test's child exiting (SIGCHLD) can cause.
func runCapturingOutput(_ process: Process) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("process-\(UUID().uuidString).out").path
    FileManager.default.createFile(atPath: path, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let output = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    process.standardOutput = output
    process.standardError = output
    try process.run()
    process.waitUntilExit()
    try output.close()
    return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
}
