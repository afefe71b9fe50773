import ArgumentParser
import Foundation
import JSON
import Net

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Start a test run of a suite on a running harness, and wait for its verdict.",
        discussion: """
            --suite sdk-app (an SDK in an app), 3ds-server (a 3DS Server sending AReqs to this DS), or a YAML file \
            (name, party: sdk | 3ds-server, scenarios, versions, channels). The harness answers the cases: for each, the \
            PAN to use and the answers to type. Every transaction started while the run is open is attached to its case \
            by scenario, version and channel. With --wait, the command shows progress until every case has ended (or \
            --timeout), finishes the run (cases not attempted fail), writes the reports asked for and exits 1 if a case failed.
            """
    )

    @Option(name: .long, help: "The harness's base URL.")
    var url = "http://127.0.0.1:8080"

    @Option(name: .long, help: "sdk-app, 3ds-server, or a YAML suite file.")
    var suite: String

    @Option(name: .long, help: "The run's name (default: the suite and the time).")
    var name: String?

    @Flag(name: .long, help: "Wait until every case has ended, then finish the run.")
    var wait = false

    @Option(name: .long, help: "Seconds to wait with --wait before finishing the run anyway.")
    var timeout = 1800

    @Option(name: .long, help: "Write the JUnit XML report here (with --wait).")
    var junit: String?

    @Option(name: .long, help: "Write the HTML report here (with --wait).")
    var report: String?

    @Option(name: .long, help: "Write the JSON report here (with --wait).")
    var json: String?

    func validate() throws {
        if !wait, junit != nil || report != nil || json != nil { throw ValidationError("--junit, --report and --json need --wait") }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }

    func run() async throws {
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let runs = RunClient(client: try HTTPClient(group: group, configuration: HTTPClientConfiguration(readTimeoutMilliseconds: 30_000)), baseURL: url)
        var started: JSONValue
        do {
            if FileManager.default.fileExists(atPath: suite) {
                guard let file = FileManager.default.contents(atPath: suite) else { throw ValidationError("cannot read \(suite)") }
                started = try await runs.start(Array(file), contentType: "application/yaml", name: name)
            } else {
                let body = JSONValue.object(omittingAbsent: [("suite", .string(suite)), ("name", name.map(JSONValue.string))])
                started = try await runs.start(JSONWriter.write(body))
            }
        } catch let failure as RunClient.Failure {
            throw ValidationError(failure.description)
        }
        let id = started["id"]?.stringValue ?? ""
        print("run \(id): \(started["name"]?.stringValue ?? "") (\(started["suite"]?["name"]?.stringValue ?? suite), party \(started["suite"]?["party"]?.stringValue ?? "?"))")
        for entry in started["cases"]?.arrayValue ?? [] {
            let answers = (entry["answers"]?.arrayValue ?? []).compactMap(\.stringValue)
            print("  \(entry["id"]?.stringValue ?? "?"): PAN \(entry["pan"]?.stringValue ?? "?")" + (answers.isEmpty ? "" : ", answers \(answers.joined(separator: "; "))"))
        }
        print("progress: \(url)/admin/runs/\(id)   reports: \(url)/admin/runs/\(id)/report.{xml,json,html}   inspector: \(url)/inspector")
        guard wait else { return }
        let deadline = ContinuousClock.now + .seconds(timeout)
        var last = ""
        while ContinuousClock.now < deadline {
            let current = try await runs.run(id)
            let line = RunText.progress(current)
            if line != last { print(line); last = line }
            let summary = current["summary"]
            if summary?["pending"]?.numberText == "0", summary?["running"]?.numberText == "0" { break }
            try await Task.sleep(for: .seconds(2))
        }
        let finished = try await runs.finish(id)
        try await RunText.writeReports(runs, id: id, junit: junit, html: report, json: json)
        let failures = RunText.failures(finished)
        failures.forEach { print($0) }
        print(RunText.progress(finished) + (failures.isEmpty ? ": passed" : ""))
        if !failures.isEmpty { throw ExitCode(1) }
    }
}
