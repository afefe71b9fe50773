import ArgumentParser
import EventLoops
import Foundation
import JSON
import Net
import Runs

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Start a test run of a suite on a running harness, and wait for its verdict.",
        discussion: """
            --suite sdk-app (an SDK in an app), sdk-negative (its CRes, Erro and acsSignedContent parsers, through the negative cases of the field tables), \
            3ds-server or 3ds-server-browser (a 3DS Server sending AReqs to this DS), 3ds-server-negative (its ARes, RReq, PRes and Erro parsers), \
            or a YAML file (name, party: sdk | 3ds-server, scenarios, versions, channels). The harness answers the cases: \
            for each, the card to use and the answers to type (a PRes case: the POST /admin/ds/pres-faults that arms it). \
            A transaction is attached to a case by the X-Harness-Case header (RUN/CASE, or RUN) on its AReq, authentication \
            request or PReq, else by the card issued to the case, else to the first case of its scenario, version and \
            channel that has none. With --wait, the command shows progress until every case has ended (or \
            --timeout), finishes the run (cases not attempted fail), writes the reports asked for. In CI, start the run \
            (--output json prints its id first), run your tests with X-Harness-Case, then `run --id ID --finish --junit F`.

            Exit codes: 0 every case passed (or, without --wait, the run started); 1 a case failed; 2 the run could not \
            be started or followed (the harness unreachable, the suite refused, a file unreadable); 64 wrong options.
            """
    )

    @Option(name: .long, help: "The harness's base URL.")
    var url = "http://127.0.0.1:8080"

    @Option(name: .long, help: "sdk-app, sdk-negative, 3ds-server, 3ds-server-browser, 3ds-server-negative, or a YAML suite file.")
    var suite: String?

    @Option(name: .long, help: "A run started before (by --suite): follow it with --wait, or end it with --finish.")
    var id: String?

    @Flag(name: .long, help: "With --id: wait until no case is under way, then finish the run (cases not attempted fail) and write the reports.")
    var finish = false

    @Option(name: .long, help: "The run's name (default: the suite and the time).")
    var name: String?

    @Option(name: .long, parsing: .upToNextOption, help: "Only these cases (scenario/version/channel) or scenarios; in a negative suite also a message, mutation or element (ares, outside, transStatus).")
    var only: [String] = []

    @Flag(name: .long, help: "Wait until every case has ended, then finish the run.")
    var wait = false

    @Option(name: .long, help: "Seconds to wait with --wait before finishing the run anyway.")
    var timeout = 1200

    @Option(name: .long, help: "Seconds without a transaction after which the harness finishes the run itself (default 600).")
    var idle: Int?

    @Option(name: .long, help: "Seconds after its transaction began that a case still under way is graded as it stands (default 120).")
    var caseDeadline: Int?

    @Option(name: .long, help: "text (default) or json: one JSON object a line (started, progress, finished).")
    var output = OutputFormat.text

    @Option(name: .long, help: "Write the JUnit XML report here (with --wait).")
    var junit: String?

    @Option(name: .long, help: "Write the HTML report here (with --wait).")
    var report: String?

    @Option(name: .long, help: "Write the JSON report here (with --wait).")
    var json: String?

    enum OutputFormat: String, ExpressibleByArgument {
        case text, json
    }

    func validate() throws {
        guard (suite == nil) != (id == nil) else { throw ValidationError("give --suite (a new run) or --id (a run started before)") }
        if finish, id == nil { throw ValidationError("--finish goes with --id") }
        if id != nil, !only.isEmpty || idle != nil || caseDeadline != nil || name != nil {
            throw ValidationError("--only, --idle, --case-deadline and --name are for a new run (--suite)")
        }
        if !wait, !finish, junit != nil || report != nil || json != nil { throw ValidationError("--junit, --report and --json need --wait or --finish") }
        if let suite, FileManager.default.fileExists(atPath: suite), !only.isEmpty || idle != nil || caseDeadline != nil {
            // A YAML file is sent as it is: those options go in it (only:, and idleSeconds, caseDeadlineSeconds beside suite:).
            throw ValidationError("with a suite file, put only:, idleSeconds: and caseDeadlineSeconds: in the file")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        let limits = TestRun.Timing.limits
        for (value, option) in [(idle, "--idle"), (caseDeadline, "--case-deadline")] where value.map({ !limits.contains(TimeInterval($0)) }) == true {
            throw ValidationError("\(option) must be from \(Int(limits.lowerBound)) to \(Int(limits.upperBound)) seconds")
        }
    }

    func run() async throws {
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let runs = RunClient(client: try HTTPClient(group: group, configuration: HTTPClientConfiguration(readTimeoutMilliseconds: 30_000, maxResponseBytes: RunClient.maxReportBytes)), baseURL: url)
        let say = Printer(format: output)
        let id: String
        if let existing = self.id {
            id = existing
            _ = try await CouldNotRun.guarding { try await runs.run(existing, cases: ["running"]) }
        } else {
            let started = try await CouldNotRun.guarding { try await start(runs, suite: suite ?? "") }
            id = started["id"]?.stringValue ?? ""
            say.started(started, url: url)
        }
        guard wait || finish else { return }
        let deadline = ContinuousClock.now + .seconds(timeout)
        var last = ""
        while ContinuousClock.now < deadline {
            // The cases under way only: what is printed of them (a run of hundreds of cases is megabytes whole).
            let current = try await CouldNotRun.guarding { try await runs.run(id, cases: ["running"]) }
            let line = RunText.progress(current)
            // Printed again when what a case waits for changes too.
            let shown = ([line] + RunText.underWay(current)).joined(separator: "\n")
            if shown != last { say.progress(current, line); last = shown }
            let summary = current["summary"]
            // --finish: the party's tests are over, so only what is under way is waited for.
            if summary?["running"]?.numberText == "0", finish || summary?["pending"]?.numberText == "0" { break }
            // The harness finished it (idle, or by hand): nothing more will come.
            if current["state"]?.stringValue == "finished" { break }
            try await Task.sleep(for: .seconds(1))
        }
        let timedOut = ContinuousClock.now >= deadline
        let finished = try await CouldNotRun.guarding {
            let finished = try await runs.finish(id)
            try await RunText.writeReports(runs, id: id, junit: junit, html: report, json: json, quiet: output == .json)
            return finished
        }
        let failures = RunText.failures(finished)
        say.finished(finished, failures: failures, timedOut: timedOut)
        if !failures.isEmpty { throw ExitCode(1) }
    }

    private func start(_ runs: RunClient, suite: String) async throws -> JSONValue {
        if FileManager.default.fileExists(atPath: suite) {
            guard let file = FileManager.default.contents(atPath: suite) else { throw RunClient.Failure(description: "cannot read \(suite)") }
            return try await runs.start(Array(file), contentType: "application/yaml", name: name)
        }
        return try await runs.start(JSONWriter.write(.object(omittingAbsent: [
            ("suite", .string(suite)), ("only", only.isEmpty ? nil : .array(only.map(JSONValue.string))),
            ("idleSeconds", idle.map { .number(String($0)) }), ("caseDeadlineSeconds", caseDeadline.map { .number(String($0)) }),
            ("name", name.map(JSONValue.string)),
        ])))
    }

    /// What the command prints: lines for a person, or one JSON object a line for a script.
    struct Printer {
        let format: OutputFormat

        func started(_ run: JSONValue, url: String) {
            let id = run["id"]?.stringValue ?? ""
            let reports = "\(url)/admin/runs/\(id)/report"
            switch format {
            case .json:
                let cases: [JSONValue] = (run["cases"]?.arrayValue ?? []).map { entry in
                    .object(omittingAbsent: [("id", entry["id"]), ("card", entry["card"]), ("pan", entry["pan"]), ("answers", entry["answers"]),
                                             ("preparation", entry["preparation"]),
                                             ("harnessCase", .string("\(id)/\(entry["id"]?.stringValue ?? "")"))])
                }
                emit([("event", .string("started")), ("id", .string(id)), ("name", run["name"]), ("party", run["suite"]?["party"]),
                      ("progress", .string("\(url)/admin/runs/\(id)")), ("reports", .string(reports + ".{xml,json,html}")), ("cases", .array(cases))])
            case .text:
                print("run \(id): \(run["name"]?.stringValue ?? "") (\(run["suite"]?["name"]?.stringValue ?? "?"), party \(run["suite"]?["party"]?.stringValue ?? "?"))")
                for entry in run["cases"]?.arrayValue ?? [] {
                    let answers = (entry["answers"]?.arrayValue ?? []).compactMap(\.stringValue)
                    // A PRes case is a PReq's: armed by its name, not played on a card.
                    guard entry["preparation"] != .bool(true) else {
                        print("  \(entry["id"]?.stringValue ?? "?"): POST /admin/ds/pres-faults {\"scenario\": \"\(entry["scenario"]?.stringValue ?? "?")\"}, then a PReq")
                        continue
                    }
                    print("  \(entry["id"]?.stringValue ?? "?"): card \(entry["card"]?.stringValue ?? entry["pan"]?.stringValue ?? "?")"
                          + (answers.isEmpty ? "" : ", answers \(answers.joined(separator: "; "))"))
                }
                print("bind each transaction by its case's card, or tag it: X-Harness-Case: \(id)/CASE (or \(id) alone)")
                print("progress: \(url)/admin/runs/\(id)   reports: \(reports).{xml,json,html}   inspector: \(url)/inspector")
            }
        }

        func progress(_ run: JSONValue, _ line: String) {
            let underWay = RunText.underWay(run)
            switch format {
            case .json:
                emit([("event", .string("progress")), ("summary", run["summary"]),
                      ("underWay", underWay.isEmpty ? nil : .array(underWay.map { .string($0.trimmingCharacters(in: .whitespaces)) }))])
            case .text:
                print(line)
                for waiting in underWay { print(waiting) }
            }
        }

        func finished(_ run: JSONValue, failures: [String], timedOut: Bool) {
            switch format {
            case .json:
                emit([("event", .string("finished")), ("id", run["id"]), ("summary", run["summary"]), ("timedOut", .bool(timedOut)),
                      ("failed", .array(failures.map(JSONValue.string)))])
            case .text:
                if timedOut { print("--timeout reached: the run was finished with what had come") }
                failures.forEach { print($0) }
                print(RunText.progress(run) + (failures.isEmpty ? ": passed" : ""))
            }
        }

        private func emit(_ members: [(String, JSONValue?)]) { print(JSONWriter.string(.object(omittingAbsent: members))) }
    }
}

/// Exit 2 with the reason, no usage text: the run could not be started or followed.
enum CouldNotRun {
    static let exitCode: Int32 = 2

    static func guarding<T>(_ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch let failure as RunClient.Failure {
            FileHandle.standardError.write(Data("error: \(failure.description)\n".utf8))
            throw ExitCode(exitCode)
        }
    }
}
