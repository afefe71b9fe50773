import Foundation
import Testing
import TestSupport

/// schemathesis (PyPI) generates requests for every operation of openapi.yaml against a live
/// harness and checks each answer: no 5xx, a documented status, content type, headers and
/// body shape. `./harness test` installs it; without it the test is skipped, saying so.
@Suite("API contract (schemathesis)", .serialized)
struct APIContractTests {
    static let schemathesis: String? = {
        let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/schemathesis" }
            + [NSHomeDirectory() + "/.local/bin/schemathesis"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    @Test(.enabled(if: schemathesis != nil, "schemathesis is not installed (python3 -m pip install --user schemathesis)"))
    func everyAnswerToGeneratedRequestsMatchesTheDescription() throws {
        let serve = try ChildProcess(harnessBinary, ["serve", "--http-port", "0", "--https-port", "0", "--loops", "2", "--log-level", "info",
                                                     "--data-directory", scratchDataDirectory("api-contract")],
                                     directory: repositoryRoot)
        defer { serve.signal(SIGTERM); _ = serve.wait() }
        let log = serve.awaitOutput { $0.contains("listening") ? $0 : nil } ?? ""
        let port = log.range(of: "http=127.0.0.1:").flatMap { Int(log[$0.upperBound...].prefix { $0.isNumber }) } ?? 0
        try #require(port > 0, "\(serve.output)")
        let run = try ChildProcess.run(try #require(Self.schemathesis), [
            "run", repositoryRoot + "/openapi.yaml", "--url", "http://127.0.0.1:\(port)",
            "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance",
            // Twelve examples an operation under one seed: the same requests every run, the bounds and the odd shapes
            // Hypothesis tries first among them; 25 cost a tenth of the first pass's CPU.
            "--max-examples", "12", "--workers", "1", "--seed", "20261122", "--no-color",
            // The live feed holds each request up to 10 s (a long poll); RunFlowTests read it.
            "--exclude-operation-id", "inspectorEvents",
        ], directory: NSTemporaryDirectory(), timeout: 600)
        // The failures and errors sections first (the request, the answer and which check broke, or what went wrong on the
        // network), then the summary.
        let sections = ["FAILURES", "ERRORS"].compactMap { name in run.output.range(of: "== \(name) ==").map { String(run.output[$0.lowerBound...].prefix(4000)) } }
        // The harness's own warnings (a slow answer, an answer held by the store) say where a client's timeout came from.
        let warnings = serve.output.split(separator: "\n").filter { $0.contains("warning") || $0.contains("error") }.suffix(20).joined(separator: "\n")
        #expect(run.status == 0, "\(sections.joined(separator: "\n…\n"))\n…\n\(run.output.suffix(2000))\n… the harness's warnings:\n\(warnings)")
    }
}
