import EMV3DS
import EMVCrypto
import Foundation
import JSON
import Net
import SDKSimulator
import Testing

/// Decoupled Authentication Fallback (EMV 3DS 2.3.1; EMVCo SB 279, Req 461-471, Table A.17 footnote 11, transStatusReason
/// 29/30, resultsStatus 04, threeRIInd 19): a challenge the ACS ends D, then a 3RI AReq that authenticates decoupled.
/// Card 4000000000840001 (`challenge-decoupled-fallback`) falls back after its text step passes (reason 30).
@Suite("Decoupled Authentication Fallback (2.3.1)")
struct DecoupledFallbackTests {
    static let card = "4000000000840001"
    static let scenario = "challenge-decoupled-fallback"

    func run(_ harness: RunningHarness, version: MessageVersion) async throws -> TransactionRun {
        let transaction = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: version, style: .android)
        return try await harness.simulator.run(transaction, pan: Self.card, answers: ChallengeAnswers(["1234", "continue"]),
                                               challenger: harness.challenger, style: DeviceDataStyle.android.channelStyle)
    }

    /// The harness's own 3DS Server asks for B (primary or fallback) in 2.3.1: the SDK's challenge ends D after the
    /// information screen, the 3DS Server answers RRes 04 and sends the 3RI AReq, and its decoupled result (Y) is the
    /// transaction's. Both checks of the 3DS Server pass.
    @Test func aChallengeThatFallsBackEndsWithTheDecoupledAuthenticationsResult() async throws {
        try await withHarness { harness in
            let run = try await run(harness, version: .v2_3_1)
            #expect(run.challenge?.outcome == .completed(.decoupled), "\(String(describing: run.challenge))")
            #expect(run.final.state == "completed" && run.final.transStatus == "Y", "\(run.final.record)")
            let fallback = try #require(run.final.record["decoupledFallback"])
            #expect(fallback["transStatusReason"]?.stringValue == "30")
            let messages = run.final.record["messages"]?.arrayValue?.map(\.["message"]) ?? []
            #expect(messages.contains { $0?["messageType"]?.stringValue == "RRes" && $0?["resultsStatus"]?.stringValue == "04" })
            #expect(run.authentication.sentAReq?["threeDSRequestorDecReqInd"]?.stringValue == "B")
            #expect(try await harness.check("rres.decoupled-fallback", of: run.final.record) == "pass")

            let followUpID = try #require(fallback["followedBy"]?.stringValue)
            let followUp = SimulationResult(record: try JSONReader.parse(try await harness.get("/3ds-server/transactions/\(followUpID)").body).value)
            let areq = try #require(followUp.sentAReq)
            #expect(areq["deviceChannel"]?.stringValue == "03" && areq["threeRIInd"]?.stringValue == "19")
            #expect(areq["threeDSRequestorDecReqInd"]?.stringValue == "Y")
            let prior = try #require(areq["threeDSRequestorPriorAuthenticationInfo"]?.arrayValue?.first)
            #expect(prior["threeDSReqPriorAuthMethod"]?.stringValue == "02")
            #expect(prior["threeDSReqPriorRef"]?.stringValue == run.final.record["acsTransID"]?.stringValue)
            #expect(followUp.record["fallbackOf"]?.stringValue == run.final.threeDSServerTransID)
            #expect(try await harness.check("areq.decoupled-fallback", of: followUp.record) == "pass")
        }
    }

    /// 2.2.0 has no fallback (nor D in an RReq): the same card's challenge ends as scripted, Y.
    @Test func beforeTwoThreeOneTheChallengeEndsAsScripted() async throws {
        try await withHarness { harness in
            let run = try await run(harness, version: .v2_2_0)
            #expect(run.challenge?.outcome == .completed(.authenticated))
            #expect(run.final.state == "completed" && run.final.transStatus == "Y" && run.final.record["decoupledFallback"] == nil)
            #expect(try await harness.check("rres.decoupled-fallback", of: run.final.record) == nil)
        }
    }

    /// Footnote 11 of Table A.17: an RReq D only where the AReq said F or B. The harness's 3DS Server answers one for an
    /// AReq that said Y with Erro 203 and does not take it.
    @Test func anRReqDForAnAReqThatDidNotAllowTheFallbackIsErro203() async throws {
        try await withHarness { harness in
            // The ACS's own result comes only after the test's RReq, however slow the machine.
            let pin = #"{"pan":"4000000000190001","scenario":{"name":"decoupled-late","description":"d","decoupled":{"transStatus":"Y","delay":600}}}"#
            #expect(try await harness.post("/admin/pins", Array(pin.utf8)).status.code == 201)
            var request = browserRequest(pan: "4000000000190001", version: .v2_3_1)
            request.set("threeDSRequestorDecReqInd", .string("Y"))
            let record = try JSONReader.parse(try await harness.post("/3ds-server/authenticate", JSONWriter.write(request)).body).value
            #expect(record["transStatus"]?.stringValue == "D", "\(record)")
            let rreq = JSONValue.object([
                ("messageType", .string("RReq")), ("messageVersion", .string("2.3.1")), ("messageCategory", .string("01")),
                ("threeDSServerTransID", record["threeDSServerTransID"] ?? .null), ("acsTransID", record["acsTransID"] ?? .null),
                ("dsTransID", record["dsTransID"] ?? .null), ("transStatus", .string("D")), ("transStatusReason", .string("29")),
            ])
            let answer = try JSONReader.parse(try await harness.post("/3ds-server/rreq", JSONWriter.write(rreq)).body).value
            #expect(answer["messageType"]?.stringValue == "Erro" && answer["errorCode"]?.stringValue == "203", "\(answer)")
            #expect(answer["errorDetail"]?.stringValue?.contains("transStatus") == true)
        }
    }

    // MARK: A 3DS Server under test

    /// Starts a 3DS Server run of the fallback scenario in 2.3.1, plays it through `party`, and waits until the case is settled.
    /// `runOnly`: the AReqs tagged with the run alone, as `simulate --junit` tags them: the 3RI AReq then attaches to no case,
    /// and the challenge's case is graded on the check the ACS records on the challenge.
    func rehearse(_ harness: RunningHarness, _ party: SimulatedThreeDSServer, deadline: Int = 30, runOnly: Bool = false) async throws -> JSONValue {
        let request = JSONValue.object([
            ("suite", .object([("name", .string("fallback")), ("party", .string("3ds-server")), ("scenarios", .array([.string(Self.scenario)])),
                               ("versions", .array([.string("2.3.1")])), ("channels", .array([.string("app")]))])),
            ("caseDeadlineSeconds", .number(String(deadline))),
        ])
        let started = try JSONReader.parse(try await harness.post("/admin/runs", JSONWriter.write(request)).body).value
        let id = try #require(started["id"]?.stringValue, "\(started)")
        try await party.challenge(pan: Self.card, tag: runOnly ? id : "\(id)/\(Self.scenario)/2.3.1/app")
        // The 3RI's decoupled result comes after 1 s; a missing 3RI AReq fails at the deadline.
        return try await harness.settledRun(id, within: .seconds(40))
    }

    func verdict(_ run: JSONValue, _ check: String) -> (status: String?, verdict: String?, detail: String?, fix: String?) {
        let entry = run["cases"]?.arrayValue?.first
        let result = entry?["checks"]?.arrayValue?.first { $0["id"]?.stringValue == check && $0["verdict"]?.stringValue == "fail" }
            ?? entry?["checks"]?.arrayValue?.first { $0["id"]?.stringValue == check }
        return (entry?["status"]?.stringValue, result?["verdict"]?.stringValue, result?["detail"]?.stringValue, result?["fix"]?.stringValue)
    }

    @Test(arguments: [false, true])
    func aCorrect3DSServerPassesTheFallbackCase(runOnly: Bool) async throws {
        try await withHarness { harness in
            let party = try SimulatedThreeDSServer(harness)
            defer { party.stop() }
            let run = try await rehearse(harness, party, runOnly: runOnly)
            #expect(verdict(run, "rres.decoupled-fallback").verdict == "pass", "\(JSONWriter.string(run))")
            #expect(verdict(run, "areq.decoupled-fallback").verdict == "pass")
            #expect(verdict(run, "areq.decoupled-fallback").status == "passed", "\(JSONWriter.string(run))")
        }
    }

    @Test(arguments: SimulatedThreeDSServer.FallbackBug.allCases)
    func a3DSServerWithAFallbackBugFailsTheCheckThatNamesIt(_ bug: SimulatedThreeDSServer.FallbackBug) async throws {
        try await withHarness { harness in
            let party = try SimulatedThreeDSServer(harness, fallbackBugs: [bug])
            defer { party.stop() }
            let (check, seen): (String, String) = switch bug {
            case .fallbackNotAllowed: ("areq.decoupled-fallback", "")
            case .resultsStatus01: ("rres.decoupled-fallback", "resultsStatus 01, not 04")
            case .noFollowUp: ("areq.decoupled-fallback", "no 3RI AReq (threeRIInd 19) naming the challenge followed its RReq D by the case's deadline")
            case .priorMethod05: ("areq.decoupled-fallback", "threeDSReqPriorAuthMethod is 05, not 02")
            }
            // The missing 3RI AReq fails at the case's deadline: a short one; the others fail as the messages come.
            let run = try await rehearse(harness, party, deadline: bug == .noFollowUp ? 3 : 30)
            let result = verdict(run, check)
            // The fallback is the requestor's option: a 3DS Server that does not ask for it passes, warned that the case did not test it.
            if bug == .fallbackNotAllowed {
                #expect(result.status == "passed" && result.verdict == "warning", "\(JSONWriter.string(run))")
                #expect(result.detail?.contains("not tested") == true && result.detail?.contains("threeDSRequestorDecReqInd Y, not F or B") == true)
                return
            }
            #expect(result.status == "failed" && result.verdict == "fail", "\(bug): \(JSONWriter.string(run))")
            #expect(result.detail?.contains(seen) == true, "\(bug): \(result.detail ?? "no detail")")
            #expect(result.fix?.isEmpty == false)
        }
    }

    /// A 3RI AReq (threeRIInd 19) alone, tagged for the fallback case: it follows no challenge there, so it is not the
    /// case's transaction (and the ACS fails its check: it names no challenge that fell back).
    @Test func aThreeRIAReqAloneIsNotTheFallbackCase() async throws {
        try await withHarness { harness in
            let party = try SimulatedThreeDSServer(harness)
            defer { party.stop() }
            let request = JSONValue.object([
                ("suite", .object([("name", .string("fallback")), ("party", .string("3ds-server")), ("scenarios", .array([.string(Self.scenario)])),
                                   ("versions", .array([.string("2.3.1")])), ("channels", .array([.string("app")]))])),
                ("caseDeadlineSeconds", .number("30")),
            ])
            let started = try JSONReader.parse(try await harness.post("/admin/runs", JSONWriter.write(request)).body).value
            let id = try #require(started["id"]?.stringValue)
            try await party.threeRIAlone(pan: Self.card, tag: "\(id)/\(Self.scenario)/2.3.1/app")
            let run = try await harness.settledRun(id, within: .seconds(40))
            let entry = try #require(run["cases"]?.arrayValue?.first)
            #expect(entry["status"]?.stringValue == "failed", "\(JSONWriter.string(run))")
            #expect(entry["problems"]?.arrayValue?.first?.stringValue?.contains("deviceChannel 03, not this case's") == true, "\(JSONWriter.string(entry))")
        }
    }
}
