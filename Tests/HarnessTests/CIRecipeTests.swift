import Foundation
import Testing
import TestSupport

/// docs/ci.md's recipes run `ci/suite`: a run started, the party's tests tagged for it, the run
/// finished with JUnit and HTML. Run here as a job without Docker would, on a harness it starts.
@Suite("CI recipes: ci/suite gives JUnit and HTML for an SDK team and a 3DS Server team")
struct CIRecipeTests {
    /// Runs `ci/suite party` with `tests` standing in for the party's tests; its status and report folder.
    /// `command`: the team's own test command after `--` (HARNESS_URL and HARNESS_RUN in its environment) instead of the simulator.
    func suite(_ party: String, only: String, tests: String, command: [String] = []) throws -> (status: Int32, output: String, report: String) {
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("ci-report-\(UUID().uuidString)").path
        let result = try ChildProcess.run("env", [
            "THREEDS_HARNESS=\(harnessBinary)", "REPORT_DIR=\(report)", "ONLY=\(only)", "SIMULATE_ARGS=\(tests)", "CASE_DEADLINE=20",
            repositoryRoot + "/ci/suite", party,
        ] + (command.isEmpty ? [] : ["--"] + command), directory: repositoryRoot, timeout: 240)
        return (result.status, result.output, report)
    }

    func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    @Test func anSDKTeamsJobPassesAndKeepsItsReports() throws {
        let run = try suite("sdk", only: "challenge-text/2.2.0/app", tests: "--pan 4000000000110009 --answers 1234 --version 2.2.0")
        defer { try? FileManager.default.removeItem(atPath: run.report) }
        #expect(run.status == 0, "\(run.output)")
        let junit = read(run.report + "/junit.xml")
        #expect(junit.contains(#"tests="1" failures="0""#) && junit.contains("challenge-text 2.2.0 app"), "\(junit)")
        #expect(read(run.report + "/report.html").contains("challenge-text"))
        // The run's id and its cases came first, as one JSON line a script reads.
        #expect(read(run.report + "/run.jsonl").hasPrefix(#"{"event":"started","id":""#))
    }

    @Test func aWrongSDKFailsTheJobWithItsCheckInTheJUnit() throws {
        let run = try suite("sdk", only: "challenge-text/2.2.0/app",
                            tests: "--pan 4000000000110009 --answers 1234 --version 2.2.0 --misbehave repeat-counter")
        defer { try? FileManager.default.removeItem(atPath: run.report) }
        #expect(run.status == 1, "\(run.output)")
        let junit = read(run.report + "/junit.xml")
        #expect(junit.contains(#"failures="1""#) && junit.contains("creq.counter") && junit.contains("fix: "), "\(junit)")
    }

    /// The team's own tests drive a passing case, then fail on their own: the job fails (3), naming their status.
    @Test func aJobWhoseOwnTestsFailFailsThoughEveryCasePassed() throws {
        let script = #"THREEDS_HARNESS_BIN="$0" ; "$THREEDS_HARNESS_BIN" simulate --url "$HARNESS_URL" --pan 4000000000110009 --answers 1234 --version 2.2.0 --harness-case "$HARNESS_RUN" >/dev/null; exit 3"#
        let run = try suite("sdk", only: "challenge-text/2.2.0/app", tests: "", command: ["sh", "-c", script, harnessBinary])
        defer { try? FileManager.default.removeItem(atPath: run.report) }
        #expect(run.status == 3 && run.output.contains("the test command exited 3"), "\(run.output)")
        #expect(read(run.report + "/junit.xml").contains(#"failures="0""#))
    }

    @Test func a3DSServerTeamsJobGradesTheErroItOwes() throws {
        // The harness's own 3DS Server is the party here: it answers the spoilt ARes with Erro 201.
        let run = try suite("3ds-server", only: "fault-ds-missing-field/2.2.0/app", tests: "--pan 4000000000510000 --version 2.2.0")
        defer { try? FileManager.default.removeItem(atPath: run.report) }
        #expect(run.status == 0, "\(run.output)")
        #expect(read(run.report + "/report.json").contains(#""id":"ares.erro","verdict":"pass""#))
    }
}
