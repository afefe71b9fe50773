import Configuration
import EMV3DS
import EMVCrypto
import Foundation
import Harness
import JSON
import Net
import SDKSimulator
import Testing
import ThreeDSServer

/// Every default scenario that plays in the browser, through the browser simulator (forms read
/// and posted as a browser does), in every version; and a test run of a 3DS Server in the browser.
@Suite("Browser channel: every scenario through the browser simulator")
struct BrowserSimulationTests {
    @Test(arguments: MessageVersion.allCases)
    func everyBrowserScenarioGivesWhatACorrectClientDoes(_ version: MessageVersion) async throws {
        try await withHarness(configure: {
            $0.threeDSServer.directoryServerTimeoutMs = 5_000
            $0.directoryServer.acsTimeoutMs = 1_000
        }) { harness in
            let scenarios = try await harness.simulator.scenarios()
            let cases = scenarios.compactMap { SimulationCase(scenario: $0) }
            let browserCases = cases.filter { $0.channels.contains(.browser) }
            #expect(browserCases.count >= 36 && browserCases.count < cases.count, "SDK-leg faults are app only")
            #expect(!browserCases.contains { $0.label == "fault-bad-signature" })
            let matrix = SimulationMatrix(cases: cases, versions: [version], styles: [.android], coverage: .everyCombination, channels: [.browser])
            #expect(matrix.entries.count == browserCases.count && matrix.entries.allSatisfy { $0.channel == .browser })
            let results = await matrix.run(simulator: harness.simulator, challenger: try unusedChallenger(harness), concurrency: browserCases.count) { _, _ in nil }
            let problems = results.compactMap { result in result.problem.map { "\(result.entry.label): \($0)\n\(result.lines.joined(separator: "\n"))" } }
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        }
    }

    @Test func theBrowserRunsTheMethodAndAnswersEachPage() async throws {
        try await withHarness { harness in
            let browser = BrowserSimulator(simulator: harness.simulator)
            // A wrong code, a new one, the new one: as the app's text challenge.
            let run = try await browser.run(pan: "4000000000110009", version: .v2_3_1, answers: ChallengeAnswers(["1111", "resend", "5678"]))
            #expect(run.lines.first == "  3DS Method: notified")
            #expect(run.lines.contains("  AReq threeDSCompInd Y"))
            #expect(run.lines.filter { $0.hasPrefix("  page ") }.count == 3, "\(run.lines)")
            #expect(run.transaction.final.transStatus == "Y" && run.transaction.final.state == "completed")
            #expect(run.transaction.summary.hasPrefix("browser completed transStatus Y"), "\(run.transaction.summary)")

            let cancelled = try await browser.run(pan: "4000000000120008", version: .v2_2_0, answers: ChallengeAnswers(["cancel"]))
            #expect(cancelled.transaction.challenge?.outcome == .cancelled)
            #expect(cancelled.transaction.final.transStatus == "N", "\(cancelled.transaction.summary)")
        }
    }

    @Test func aTestRunGradesA3DSServerInTheBrowser() async throws {
        try await withHarness { harness in
            let suite = #"{"suite":{"name":"browser","party":"3ds-server","scenarios":["frictionless-y","method-incomplete-challenge","fault-bad-signature"],"versions":["2.2.0"],"channels":["browser"]}}"#
            let started = try JSONReader.parse(try await harness.post("/admin/runs", Array(suite.utf8)).body).value
            let id = try #require(started["id"]?.stringValue, "\(started)")
            let cases = try #require(started["cases"]?.arrayValue)
            #expect(cases.count == 2, "fault-bad-signature has no browser case: \(cases)")
            let method = try #require(cases.first { $0["scenario"]?.stringValue == "method-incomplete-challenge" })
            #expect(method["flow"]?.stringValue == "challenge" && method["answers"] == .array([.string("1234")]), "\(method)")

            let browser = BrowserSimulator(simulator: harness.simulator)
            _ = try await browser.run(pan: "4000000000001000", version: .v2_2_0, answers: ChallengeAnswers([]))
            _ = try await browser.run(pan: "4000000000730004", version: .v2_2_0, answers: ChallengeAnswers(["1234"]))
            let finished = try JSONReader.parse(try await harness.post("/admin/runs/\(id)/finish", []).body).value
            #expect(finished["summary"]?["passed"]?.numberText == "2", "\(JSONWriter.string(finished))")
            let checks = (finished["cases"]?.arrayValue ?? []).flatMap { $0["checks"]?.arrayValue ?? [] }
            #expect(checks.contains { $0["id"]?.stringValue == "areq.three-ds-comp-ind" && $0["verdict"]?.stringValue == "pass" })

            let builtIn = try JSONReader.parse(try await harness.post("/admin/runs", Array(#"{"suite":"3ds-server-browser"}"#.utf8)).body).value
            let builtInCases = builtIn["cases"]?.arrayValue ?? []
            #expect(!builtInCases.isEmpty && builtInCases.allSatisfy { $0["channel"]?.stringValue == "browser" })
        }
    }
}

/// The matrix's app challenger, which a browser run never uses.
private func unusedChallenger(_ harness: RunningHarness) throws -> ChallengeRunner {
    ChallengeRunner(client: harness.client, trustAnchors: [])
}
