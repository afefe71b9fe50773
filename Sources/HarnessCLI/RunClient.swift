import Configuration
import Foundation
import Harness
import JSON
import Net
import Runs

/// The admin API of test runs, for `run` and `simulate --junit/--report`.
struct RunClient {
    let client: HTTPClient
    let baseURL: String
    /// The largest answer its client takes: a run's report.
    static let maxReportBytes = RunRegistry.maxReportBytes

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// `THREEDS_HARNESS_ADMIN_TOKEN`, as `serve` reads it.
    private var headers: HTTPHeaders {
        var headers = HTTPHeaders()
        if let token = HarnessConfiguration.environmentAdminToken { headers.set("Authorization", "Bearer \(token)") }
        return headers
    }

    /// Starts a run; `body` is the request (JSON, or a YAML suite file with `contentType` application/yaml).
    func start(_ body: [UInt8], contentType: String = "application/json", name: String? = nil) async throws -> JSONValue {
        let query = name.flatMap { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) }.map { "?name=" + $0 } ?? ""
        return try await exchange { try await client.post(baseURL + "/admin/runs" + query, body: body, contentType: contentType, headers: headers) }
    }

    /// Throws ``Failure`` when the harness cannot be reached or is not well.
    func health() async throws {
        _ = try await send { try await client.get(baseURL + "/health", headers: headers) }
    }

    /// The run with the cases of `statuses` only (every case without them): the summary counts every case.
    func run(_ id: String, cases statuses: [String] = []) async throws -> JSONValue {
        let query = statuses.isEmpty ? "" : "?cases=" + statuses.joined(separator: ",")
        return try await exchange { try await client.get(baseURL + "/admin/runs/" + id + query, headers: headers) }
    }

    func finish(_ id: String) async throws -> JSONValue {
        try await exchange { try await client.post(baseURL + "/admin/runs/\(id)/finish", body: [], headers: headers) }
    }

    /// A report's bytes: report.xml, report.json or report.html.
    func report(_ id: String, _ name: String) async throws -> [UInt8] {
        let response = try await send { try await client.get(baseURL + "/admin/runs/\(id)/\(name)", headers: headers) }
        return response.body
    }

    private func exchange(_ call: () async throws -> HTTPResponse) async throws -> JSONValue {
        let response = try await send(call)
        guard let json = try? JSONReader.parse(response.body).value else { throw Failure(description: "the harness answered something other than JSON") }
        return json
    }

    private func send(_ call: () async throws -> HTTPResponse) async throws -> HTTPResponse {
        let response: HTTPResponse
        do { response = try await call() } catch { throw Failure(description: "cannot reach the harness at \(baseURL): \(error)") }
        guard (200..<300).contains(response.status.code) else {
            throw Failure(description: "the harness answered \(response.status.code): \(String(decoding: response.body.prefix(500), as: UTF8.self))")
        }
        return response
    }
}

/// What `run` and `simulate` print of a graded run.
enum RunText {
    /// "12/186 done, 1 failed".
    static func progress(_ run: JSONValue) -> String {
        let summary = run["summary"]
        func count(_ key: String) -> Int { summary?[key]?.numberText.flatMap { Int($0) } ?? 0 }
        let total = count("cases")
        let done = count("passed") + count("failed")
        return "\(done)/\(total) done, \(count("failed")) failed" + (count("running") > 0 ? ", \(count("running")) under way" : "")
    }

    /// One line per case under way (at most five, then how many more): what it waits for, and when it is graded as it
    /// stands if that never comes.
    static func underWay(_ run: JSONValue) -> [String] {
        let running = (run["cases"]?.arrayValue ?? []).filter { $0["status"]?.stringValue == "running" }
        let lines = running.prefix(5).map { entry in
            let waits = (entry["waitingFor"]?.arrayValue ?? []).compactMap(\.stringValue)
            return "  under way: \(entry["id"]?.stringValue ?? "?") waits for " + (waits.isEmpty ? "its transactions" : waits.joined(separator: "; "))
                + (entry["deadlineAt"]?.stringValue.map { ", graded as it stands at \($0)" } ?? "")
        }
        return lines + (running.count > 5 ? ["  and \(running.count - 5) more under way"] : [])
    }

    /// One line per failed case: its id and first failures.
    static func failures(_ run: JSONValue) -> [String] {
        (run["cases"]?.arrayValue ?? []).filter { $0["status"]?.stringValue == "failed" }.map { entry in
            let id = entry["id"]?.stringValue ?? "?"
            var reasons = (entry["problems"]?.arrayValue ?? []).compactMap(\.stringValue)
            reasons += (entry["checks"]?.arrayValue ?? []).filter { $0["verdict"]?.stringValue == "fail" }.map {
                "\($0["id"]?.stringValue ?? "?"): \($0["detail"]?.stringValue ?? $0["text"]?.stringValue ?? "")"
            }
            return "FAILED \(id): " + reasons.prefix(3).joined(separator: "; ")
        }
    }

    /// Writes the reports asked for; names what it wrote.
    static func writeReports(_ runs: RunClient, id: String, junit: String?, html: String?, json: String?, quiet: Bool = false) async throws {
        for (path, name) in [(junit, "report.xml"), (html, "report.html"), (json, "report.json")] {
            guard let path else { continue }
            let bytes = try await runs.report(id, name)
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else { throw RunClient.Failure(description: "cannot write \(path)") }
            if !quiet { print("wrote \(path)") }
        }
    }
}
