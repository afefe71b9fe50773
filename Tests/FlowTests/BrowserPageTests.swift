import Foundation
import JSON
import Net
import Testing
import TestSupport

/// The inspector and the HTML report as a browser shows them: Debian's `chromium`, headless,
/// loads the page, runs its script, and the DOM it ends with is read.
@Suite("Pages in a real browser (headless Chromium)", .serialized)
struct BrowserPageTests {
    static let chromium: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The DOM once the page's scripts have had `milliseconds` of virtual time: the browser waits for
    /// its fetches before the clock moves. (The inspector is opened with `?live=0`: its live feed is a
    /// long poll that would hold the clock.)
    static func dom(_ url: String, milliseconds: Int = 3000) async throws -> String {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: profile) }
        let browser = try #require(chromium)
        // Off the cooperative pool: the harnesses of the tests running meanwhile need its threads.
        let result = try await offThePool {
            try ChildProcess.run(browser, [
                "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=\(profile)",
                "--virtual-time-budget=\(milliseconds)", "--dump-dom", url,
            ], timeout: 60)
        }
        return result.output
    }

    @Test(.enabled(if: chromium != nil, "chromium is not installed (apt-get install chromium): the browser tests are skipped"))
    func theInspectorListsTransactionsAndDrawsEachOnesSequence() async throws {
        try await withHarness { harness in
            _ = try await runTransaction(harness, pan: "4000000000110009", answers: ["1234"])
            let list = try await Self.dom(harness.baseURL + "/inspector?live=0")
            #expect(list.contains("challenge-text") && list.contains("400000******0009"), "\(list.suffix(3000))")
            let summary = try JSONReader.parse(try await harness.get("/inspector/transactions").body).value
            let id = try #require(summary["transactions"]?.arrayValue?.first?["dsTransID"]?.stringValue)
            let page = try await Self.dom(harness.baseURL + "/inspector?live=0#/transactions/\(id)")
            #expect(page.contains("<svg"), "\(page.suffix(3000))")
            for label in ["CReq", "CRes", "device data", "RReq", "creq.counter"] { #expect(page.contains(label), "\(label)") }
        }
    }

    @Test(.enabled(if: chromium != nil, "chromium is not installed (apt-get install chromium): the browser tests are skipped"))
    func theHTMLReportShowsEachCaseAndItsChecks() async throws {
        try await withHarness { harness in
            let body = #"{"suite":{"name":"browser","party":"sdk","scenarios":["challenge-text","frictionless-y"],"versions":["2.2.0"]}}"#
            let run = try JSONReader.parse(try await harness.post("/admin/runs", Array(body.utf8)).body).value
            let id = try #require(run["id"]?.stringValue)
            _ = try await runTransaction(harness, pan: "4000000000110009", answers: ["1234"])
            _ = try await harness.post("/admin/runs/\(id)/finish", [])
            let page = try await Self.dom(harness.baseURL + "/admin/runs/\(id)/report.html")
            for text in ["challenge-text", "frictionless-y", "creq.counter", "not attempted"] { #expect(page.contains(text), "\(text): \(page.suffix(2000))") }
        }
    }
}
