import Configuration
import EMV3DS
import EMVCrypto
import EventLoops
import Foundation
import Harness
import JSON
import Net
import SDKSimulator
import Testing
import ThreeDSServer
import JOSE

/// Waits shortened so that the scenarios whose point is a timeout take a few seconds.
private func quickTimeouts(_ configuration: inout HarnessConfiguration) {
    configuration.threeDSServer.directoryServerTimeoutMs = 5_000
    configuration.directoryServer.acsTimeoutMs = 1_000
}

/// An SDK that waits 3 s for a CRes instead of 10.
private func impatientSDK(_ harness: RunningHarness, group: EventLoopGroup) throws -> ChallengeRunner {
    harness.challenger(misbehaving: nil, client: try HTTPClient(group: group, configuration: HTTPClientConfiguration(readTimeoutMilliseconds: 3_000)))
}

@Suite("Faults: every default scenario, as a correct SDK and 3DS Server see it")
struct FaultScenarioTests {
    /// Through the harness's own requestor API and through each integration profile: the app's
    /// SDK is then configured and challenged from what the profile answers.
    @Test(arguments: IntegrationProfile.allCases)
    func everyDefaultScenarioGivesWhatACorrectClientDoes(through profile: IntegrationProfile) async throws {
        try await withHarness(configure: quickTimeouts) { harness in
            let group = EventLoopGroup(loopCount: 1)
            defer { group.shutdown() }
            let challenger = try impatientSDK(harness, group: group)
            let scenarios = try await harness.simulator.scenarios()
            #expect(scenarios.count >= 60)
            // One transaction per scenario; versions and device-data styles rotate.
            let cases = scenarios.compactMap { SimulationCase(scenario: $0) }  // those with a test PAN
            let matrix = SimulationMatrix(cases: cases, versions: MessageVersion.allCases, styles: DeviceDataStyle.allCases, coverage: .rotating)
            let simulator = Simulator(client: harness.client, baseURL: harness.baseURL, profile: profile)
            let results = await matrix.run(simulator: simulator, challenger: challenger, concurrency: cases.count) { _, style in
                try directoryServer("A000000003", style)
            }
            let problems = results.compactMap { result in result.problem.map { "\(result.entry.label): \($0)" } }
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        }
    }

    @Test func theACSRecordsWhetherTheExpectedErroCame() async throws {
        try await withHarness { harness in
            func acsRecord(_ run: TransactionRun) async throws -> JSONValue {
                let acsTransID = try #require(run.authentication.record["challenge"]?["acsTransID"]?.stringValue)
                return try JSONReader.parse(try await harness.get("/admin/acs/transactions/" + acsTransID).body).value
            }
            let bad = try await runTransaction(harness, pan: "4000000000270001", answers: ["1234"])  // fault-cres-bad-tag
            #expect(bad.challenge?.erroSent?.errorCode == .dataDecryptionFailure)
            #expect(try await acsRecord(bad)["expectedSDKErro"] == .string("expected Erro 302 from SDK: received"))

            // Pinned variants: no fault, so no Erro comes; a counter fault with the wrong code expected.
            let step = #"{"steps":[{"uiType":"text","header":"Bank","label":"Code","text":"Test code: 1234.","answer":"1234"}]}"#
            for (faults, expect, record) in [("[]", "302", "expected Erro 302 from SDK: not received"),
                                             (#"[{"leg":"sdk","fault":"wrong-counter"}]"#, "201", "expected Erro 201 from SDK: received Erro 302 instead")] {
                let pin = #"{"pan":"4000000000110009","scenario":{"name":"p","description":"d","challenge":\#(step),"faults":\#(faults),"expect":{"sdkErro":"\#(expect)","text":"t"}}}"#
                #expect(try await harness.post("/admin/pins", Array(pin.utf8)).status.code == 201)
                let run = try await runTransaction(harness, pan: "4000000000110009", answers: ["1234"])
                #expect(try await acsRecord(run)["expectedSDKErro"] == .string(record), "\(run.summary)")
            }
        }
    }

    /// An Erro in place of the CRes that a transport fault or a delay keeps from the SDK ends the challenge as the SDK
    /// ends it: one whose connection is held unanswered times out with Erro 402, and passes `sdk.erro` and
    /// `challenge.end` where its scenario expects that. One cut short or a little late still reaches the SDK, which stops
    /// there: the ACS has ended the challenge (U, 06) and `challenge.end` passes.
    @Test func anErroInPlaceOfTheCResThatNeverArrivesEndsTheChallengeAsTheSDKEndsIt() async throws {
        try await withHarness(configure: quickTimeouts) { harness in
            let group = EventLoopGroup(loopCount: 1)
            defer { group.shutdown() }
            let sdk = try impatientSDK(harness, group: group)
            let step = #"{"steps":[{"uiType":"text","header":"Bank","label":"Code","text":"Test code: 1234.","answer":"1234"}]}"#
            let held = #"[{"leg":"sdk","fault":"erro","value":"403"},{"leg":"sdk","fault":"no-answer"}]"#
            let pin = #"{"pan":"4000000000110009","scenario":{"name":"p","description":"d","challenge":\#(step),"faults":\#(held),"expect":{"sdk":"timedOut","sdkErro":"402","text":"t"}}}"#
            #expect(try await harness.post("/admin/pins", Array(pin.utf8)).status.code == 201)
            let run = try await runTransaction(harness, pan: "4000000000110009", answers: ["1234"], challenger: sdk)
            #expect(run.challenge?.erroSent?.errorCode == .transactionTimedOut, "\(run.summary)")
            #expect(try await harness.check("sdk.erro", of: run.final.record) == "pass")
            #expect(try await harness.check("challenge.end", of: run.final.record) == "pass")
            // Cut short, or a little late, it still reaches the SDK, which stops there: the ACS has ended the challenge.
            for also in [#"{"leg":"sdk","fault":"malformed-json"}"#, #"{"leg":"sdk","fault":"latency","value":"300"}"#] {
                let faults = #"[{"leg":"sdk","fault":"erro","value":"403"},\#(also)]"#
                let pin = #"{"pan":"4000000000110009","scenario":{"name":"p","description":"d","challenge":\#(step),"faults":\#(faults),"expect":{"sdk":"protocolError","text":"t"}}}"#
                #expect(try await harness.post("/admin/pins", Array(pin.utf8)).status.code == 201)
                let read = try await runTransaction(harness, pan: "4000000000110009", answers: ["1234"], challenger: sdk)
                #expect(read.final.state == "completed" && read.final.record["challengeCancel"]?.stringValue == "06", "\(also): \(read.summary)")
                #expect(try await harness.check("challenge.end", of: read.final.record) == "pass", "\(also)")
            }
        }
    }

    @Test func aTriggerSelectsByRangeAmountAndCategory() async throws {
        try await withHarness { harness in
            let ranged = try await runTransaction(harness, pan: "4000000000912347", answers: [])  // in range-rejected's range
            #expect(ranged.final.transStatus == "R" && ranged.final.transStatusReason == "09", "\(ranged.summary)")
            for (amount, status) in [("2500000", "A"), ("999", "Y")] {
                let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
                let answer = try await harness.postMessage("/3ds-server/authenticate", sdk.authenticateRequest(pan: "4111111111111111", amount: amount))
                #expect(answer["transStatus"]?.stringValue == status, "\(amount): \(JSONWriter.string(answer))")
            }
        }
    }
}
