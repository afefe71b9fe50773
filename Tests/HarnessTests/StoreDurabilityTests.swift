import Foundation
import TestSupport
import Testing

/// `store.durability: answered`: an answer waits for the records it made, so a `kill -9` right after
/// a burst loses none of what was answered (written behind, the default, lost all 72 of the same burst:
/// docs/store.md has the figures).
@Suite("Store durability", .serialized)
struct StoreDurabilityTests {
    /// `serve` on a free port with `durability` and the data in `folder`; its HTTP port.
    private func serve(_ folder: String, durability: String) throws -> (ChildProcess, port: Int) {
        let config = folder + "/harness.yaml"
        try "store:\n  durability: \(durability)\n".write(toFile: config, atomically: true, encoding: .utf8)
        let serve = try ChildProcess(harnessBinary, ["serve", "--config", config, "--data-directory", folder + "/data",
                                                     "--http-port", "0", "--https-port", "0", "--loops", "2"], directory: repositoryRoot)
        let log = serve.awaitOutput { $0.contains("listening") ? $0 : nil } ?? ""
        let port = log.range(of: "http=127.0.0.1:").map { Int(log[$0.upperBound...].prefix { $0.isNumber }) ?? 0 } ?? 0
        return (serve, port)
    }

    @Test func everyTransactionAnsweredBeforeAKill9IsReadableAfterTheRestart() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("durability-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (first, port) = try serve(folder, durability: "answered")
        try #require(port > 0, "\(first.output)")
        let simulate = try ChildProcess.run(harnessBinary, ["simulate", "--url", "http://127.0.0.1:\(port)", "--all-frictionless"], timeout: 120)
        first.signal(SIGKILL)  // at once: nothing of the burst has had a batch window to be written in
        _ = first.wait()
        #expect(simulate.status == 0, "\(simulate.output.suffix(2000))")
        // Each answered transaction's line: "  <threeDSServerTransID>: 3DS Server frictionless: Y …".
        let ids = simulate.output.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), line.contains(": 3DS Server") else { return nil }
            return String(line.dropFirst(2).prefix(36))
        }
        #expect(ids.count == 84, "\(simulate.output.suffix(2000))")

        let (second, again) = try serve(folder, durability: "answered")
        defer { second.signal(SIGTERM); _ = second.wait() }
        let missing = try ids.filter { id in
            try ChildProcess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10",
                                                   "http://127.0.0.1:\(again)/3ds-server/transactions/\(id)"]).output != "200"
        }
        #expect(missing.isEmpty, "\(missing.count) of \(ids.count) answered transactions were lost: \(missing.prefix(3))")
    }
}
