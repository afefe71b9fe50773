import EMV3DS
import EMVCrypto
import Faults
import Foundation
import JSON
import Net
@testable import Scenarios
import SDKSimulator
import Testing
import TestSupport

/// The 3DS Server's negative cases generated from the ARes and RReq tables (docs/negative.md): the frictionless ARes,
/// or a decoupled result's RReq, without each element Annex A requires, with a string element sent empty, with a value
/// outside its version's set, with an unknown critical extension, or with a member no version defines. A correct 3DS Server refuses each spoilt ARes with the Erro
/// the table names (Core specification: the 3DS Server validates the ARes and sends the DS an Error Message; Table A.4)
/// and takes the unknown member; each kind of wrong 3DS Server fails the cases of the classes it gets wrong (`ares.erro`).
@Suite("Negative cases of a 3DS Server, generated from the ARes, RReq and Erro tables")
struct ThreeDSServerNegativeCaseTests {
    static var cases: [Scenario] {
        NegativeCaseTests.catalog.negative.filter { ["negative-ares-", "negative-rreq-", "negative-pres-", "negative-erro-"].contains(where: $0.name.hasPrefix) }
    }

    @Test func theARessElementsMakeCasesInTheVersionsAndChannelsThatRequireThem() {
        let cases = Dictionary(uniqueKeysWithValues: Self.cases.map { ($0.name, $0) })
        func versions(_ name: String) -> [String]? { cases[name]?.versions.map { $0.map(\.rawValue).sorted() } }
        #expect(versions("negative-ares-missing-transStatus") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(versions("negative-ares-missing-authenticationValue") == ["2.1.0", "2.2.0", "2.3.1"], "required for transStatus Y")
        // One scenario plays in both channels: an element only the app's ARes carries makes no case.
        #expect(versions("negative-ares-missing-sdkTransID") == nil)
        #expect(versions("negative-ares-empty-acsOperatorID") != nil)
        // Of another type, of a length outside its bounds: in every version, the app's 2.3.1 ARes carrying what it must.
        #expect(versions("negative-ares-type-transStatus") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(versions("negative-ares-length-eci-3") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(cases["negative-ares-duplicate-acsReferenceNumber"]?.faults.first?.fault == .duplicateMember("acsReferenceNumber"))
        #expect(cases["negative-ares-critical-messageExtension"]?.faults.first?.fault == .criticalExtension)
        #expect(cases["negative-ares-unknown-harnessUnknownMember"]?.expectation == nil)
        // The Erro in place of the ARes, spoilt: in every version, and never answered (EMVCo FAQ Q52).
        #expect(versions("negative-erro-missing-errorCode") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(cases["negative-erro-missing-errorCode"]?.faults.map(\.fault) == [.erro(.systemConnectionFailure), .missingField("errorCode")])
        #expect(cases["negative-erro-missing-errorCode"]?.expectation?.threeDSServerState == "error")
        #expect(Self.unreadable("negative-erro-missing-errorCode") && !Self.unreadable("negative-erro-missing-errorDetail"))
        // The RReq of a decoupled result, from 2.2.0 (2.1.0's ACS answers U/07): the 3DS Server answers Erro, not an RRes.
        #expect(versions("negative-rreq-missing-transStatus") == ["2.2.0", "2.3.1"])
        #expect(versions("negative-rreq-missing-authenticationType") == ["2.2.0"], "2.3.1 has authenticationMethod")
        // The challenge ARes: what it carries beyond the frictionless one, in the channel whose ARes carries it.
        #expect(versions("negative-ares-challenge-missing-acsChallengeMandated") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(cases["negative-ares-challenge-missing-acsChallengeMandated"]?.channels == [.app, .browser])
        #expect(versions("negative-ares-challenge-missing-authenticationType") == ["2.1.0", "2.2.0"], "2.3.1 has authenticationMethod")
        #expect(cases["negative-ares-challenge-missing-acsSignedContent"]?.channels == [.app])
        #expect(cases["negative-ares-challenge-format-acsSignedContent-base64"]?.channels == [.app])
        #expect(cases["negative-ares-challenge-missing-acsRenderingType"]?.channels == [.app])
        #expect(versions("negative-ares-challenge-missing-acsURL") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(cases["negative-ares-challenge-missing-acsURL"]?.channels == [.browser])
        #expect(cases["negative-ares-challenge-format-acsURL-ftp"]?.channels == [.browser])
        #expect(cases["negative-ares-challenge-outside-acsChallengeMandated-Z"] != nil)
        // The ARes of the other outcomes: a declined N's transStatusReason, a decoupled D's own elements from 2.2.0.
        #expect(versions("negative-ares-declined-missing-transStatusReason") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(versions("negative-ares-rejected-missing-transStatusReason") == ["2.1.0", "2.2.0", "2.3.1"], "R requires it too")
        #expect(versions("negative-ares-unavailable-missing-transStatusReason") == ["2.1.0", "2.2.0", "2.3.1"], "U requires it too")
        #expect(versions("negative-ares-decoupled-missing-acsDecConInd") == ["2.2.0", "2.3.1"])
        #expect(versions("negative-ares-decoupled-missing-cardholderInfo") == ["2.2.0", "2.3.1"], "required with acsDecConInd Y")
        #expect(cases["negative-ares-decoupled-missing-acsDecConInd"]?.expectation?.threeDSServerState == "error")
        #expect(!Self.cases.contains { $0.name.hasPrefix("negative-ares-challenge-") && ["-transStatus", "TransID", "ReferenceNumber"].contains(where: $0.name.contains) },
                "what the frictionless ARes carries too is its cases'")
        // The RReq of a challenge: what it carries beyond the decoupled result's (the app's acsRenderingType), and in
        // 2.1.0, which has no decoupled authentication, every element (interactionCounter among them).
        #expect(versions("negative-rreq-challenge-missing-acsRenderingType") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(cases["negative-rreq-challenge-missing-acsRenderingType"]?.channels == [.app])
        #expect(versions("negative-rreq-challenge-missing-interactionCounter") == ["2.1.0"])
        #expect(cases["negative-rreq-challenge-missing-interactionCounter"]?.channels == [.app, .browser])
        #expect(versions("negative-rreq-challenge-format-interactionCounter-letter") == ["2.1.0"])
        #expect(versions("negative-rreq-challenge-missing-transStatus") == ["2.1.0"], "2.2.0 and 2.3.1: the decoupled RReq's case")
        #expect(cases["negative-rreq-challenge-missing-interactionCounter"]?.faults.first?.leg == .results)
        for scenario in Self.cases where !scenario.name.hasPrefix("negative-pres-") {  // PResNegativeCaseTests: the PRes's
            // An Erro in error comes in place of an ARes, on the same leg, and leaves the transaction in error too.
            let ares = scenario.name.hasPrefix("negative-ares-") || scenario.name.hasPrefix("negative-erro-")
            let challenge = scenario.name.contains("-challenge-")
            #expect(scenario.faults.allSatisfy { $0.leg == (ares ? .directoryServer : .results) }, "\(scenario.name)")
            #expect(challenge || scenario.channels == [.app, .browser], "\(scenario.name)")
            #expect(scenario.expectation.map { $0.threeDSServerState == (ares ? "error" : "challenge") } ?? ["-unknown-", "-undefined-"].contains { scenario.name.contains($0) },
                    "\(scenario.name)")
        }
    }

    /// The messages the cases spoil are valid before they are: a probe its own table refuses finds no case of a single
    /// element (an app ARes of 2.3.1 without deviceInfoRecognisedVersion hid every one but the missing elements).
    @Test func theProbedMessagesAreValidInEveryVersionAndChannel() {
        for version in MessageVersion.allCases {
            let pres = PreparationRules.pRes.check(NegativeScenarios.presProbe(version: version), context: MessageContext(version: version)).violations
            #expect(pres.isEmpty, "PRes \(version.rawValue): \(pres)")
            for channel in [DeviceChannel.app, .browser] {
                let context = MessageContext(version: version, channel: channel, category: .payment)
                let ares = AResRules.rules.check(NegativeScenarios.aresProbe(version: version, channel: channel), context: context).violations
                #expect(ares.isEmpty, "ARes \(version.rawValue) \(channel): \(ares)")
                let challenge = AResRules.rules.check(NegativeScenarios.challengeAresProbe(version: version, channel: channel), context: context).violations
                #expect(challenge.isEmpty, "ARes C \(version.rawValue) \(channel): \(challenge)")
                guard version >= .v2_2_0 else { continue }
                var afterD = context
                afterD.request = .object([("acsDecConInd", .string("Y")), ("transStatus", .string("D"))])
                let rreq = ResultsRules.rReq.check(NegativeScenarios.rreqProbe(version: version, channel: channel), context: afterD).violations
                #expect(rreq.isEmpty, "RReq \(version.rawValue) \(channel): \(rreq)")
                var afterC = context
                afterC.request = .object([("transStatus", .string("C"))])
                let challenged = ResultsRules.rReq.check(NegativeScenarios.challengeRReqProbe(version: version, channel: channel), context: afterC).violations
                #expect(challenged.isEmpty, "RReq after C \(version.rawValue) \(channel): \(challenged)")
            }
        }
    }

    /// Every case of 2.2.0 through a 3DS Server with `bugs`, settled (a decoupled result's RReq comes 1 s after its ARes,
    /// an Erro that does not come fails at the case's deadline), then finished: the run's cases.
    func rehearse(_ harness: RunningHarness, bugs: Set<SimulatedThreeDSServer.Bug>) async throws -> [JSONValue] {
        let party = try SimulatedThreeDSServer(harness, bugs: bugs)
        defer { party.stop() }
        let suite = JSONValue.object([("suite", .object([("name", .string("3ds-server-negative 2.2.0")), ("party", .string("3ds-server")),
                                                         ("negative", .bool(true)), ("versions", .array([.string("2.2.0")]))])),
                                      ("caseDeadlineSeconds", .number("8"))])
        let started = try JSONReader.parse(try await harness.post("/admin/runs", JSONWriter.write(suite)).body).value
        let id = try #require(started["id"]?.stringValue, "\(started)")
        let runCases = started["cases"]?.arrayValue ?? []
        // The suite's channel is the app's: a case of the browser's ARes alone is not among them.
        #expect(runCases.count == Self.cases.count { ($0.versions?.contains(.v2_2_0) ?? true) && $0.channels.contains(.app) })
        var preparer = harness.simulator
        preparer.harnessCase = id
        for runCase in runCases {
            let pan = try #require(runCase["card"]?.stringValue ?? runCase["pan"]?.stringValue)
            let tag = "\(id)/\(runCase["id"]?.stringValue ?? "")"
            let scenario = runCase["scenario"]?.stringValue ?? ""
            // A PRes case is a PReq, played correctly whatever the bugs (PResNegativeCaseTests plays wrong ones).
            if scenario.hasPrefix("negative-pres-") {
                _ = try await preparer.playPreparationCase(scenario, version: .v2_2_0)
            } else if scenario.hasPrefix("negative-rreq-challenge-") {
                // The RReq of a challenge comes once the cardholder has answered it: the party's app plays the challenge.
                try await party.challenge(pan: pan, version: .v2_2_0, tag: tag)
            } else {
                _ = try await party.authenticate(pan: pan, version: .v2_2_0, tag: tag)
            }
        }
        _ = try await harness.settledRun(id, within: .seconds(60))
        let finished = try JSONReader.parse(try await harness.post("/admin/runs/\(id)/finish", []).body).value
        return finished["cases"]?.arrayValue ?? []
    }

    /// Whether the Erro case `name` spoils the DS's Erro so that it no longer reads as one.
    static func unreadable(_ name: String) -> Bool {
        cases.first { $0.name == name }.map(NegativeCaseTests.leavesAnUnreadableErro) ?? false
    }

    /// Whether the case failed on the check of the 3DS Server's Erro about its message: `ares.erro` or `rreq.erro`.
    func failsOnErro(_ entry: JSONValue) -> Bool {
        entry["status"]?.stringValue == "failed" && entry["checks"]?.arrayValue?.contains { check in
            ["ares.erro", "rreq.erro"].contains(check["id"]?.stringValue ?? "") && check["verdict"]?.stringValue == "fail"
        } == true
    }

    /// The cases of a challenge's ARes and RReq in the channels they play in, through the harness's own 3DS Server as
    /// `simulate --negative` runs them, in 2.1.0, where the RReq's are every element's (2.2.0's app cases are
    /// `aCorrect3DSServerPassesEveryCase`'s): it refuses each spoilt
    /// ARes C (the transaction ends in error, no challenge starts) and each spoilt RReq (no result taken), in the app and
    /// in the browser; and the ACS, told by the DS's Erro about an ARes, ends the challenge it began, so no RReq follows.
    @Test func theHarnesss3DSServerRefusesEveryChallengeCaseInItsChannel() async throws {
        try await withHarness { harness in
            let scenarios = try await harness.simulator.scenarios(negative: true).filter { $0["name"]?.stringValue?.contains("-challenge-") == true }
            let cases = scenarios.compactMap { SimulationCase(scenario: $0) }
            #expect(cases.contains { $0.channels == [.browser] } && cases.contains { $0.channels == [.app] })
            #expect(cases.contains { $0.label.hasPrefix("negative-rreq-challenge-") } && cases.contains { $0.label.hasPrefix("negative-ares-challenge-") })
            let versions = [MessageVersion.v2_1_0]
            let matrix = SimulationMatrix(cases: cases, versions: versions, styles: [.android], coverage: .everyCombination, channels: [.app, .browser])
            #expect(matrix.entries.count == versions.reduce(0) { total, version in
                total + cases.count { ($0.versions?.contains(version) ?? true) } + cases.count { ($0.versions?.contains(version) ?? true) && $0.channels == [.app, .browser] }
            })
            let results = await matrix.run(simulator: harness.simulator, challenger: harness.challenger, concurrency: 8) { _, style in
                try directoryServer("A000000003", style)
            }
            let problems = results.compactMap { result in result.problem.map { "\(result.entry.label) \(result.entry.channel): \($0)" } }
            #expect(problems.isEmpty, "\(problems.prefix(5).joined(separator: "\n"))")
            let challenges = try JSONReader.parse(try await harness.get("/admin/acs/transactions?limit=200").body).value
            let open = (challenges["transactions"]?.arrayValue ?? []).filter { $0["phase"]?.stringValue == "challenge" }
            #expect(open.isEmpty, "challenges refused with their ARes still open: \(open.compactMap { $0["scenario"]?.stringValue })")
        }
    }

    /// The harness's own 3DS Server, as `simulate --negative` plays it, passes every generated case of the ARes, the RReq and
    /// the Erro in every version and in both channels, judged as a 3DS Server under test is (a run of party 3ds-server:
    /// `ares.erro`, `rreq.erro`, `rres.valid`, and the rest): the reference party of the `3ds-server-negative` suite. Among
    /// them an ARes or RReq of another type or version (101/102 or 203), and an Erro in place of the ARes that does not
    /// read, which it answers with nothing (EMVCo FAQ Q52).
    @Test func theHarnesss3DSServerPassesEveryCaseOfItsMessagesInEveryVersionAndChannel() async throws {
        try await withHarness { harness in
            let (results, failed) = try await playedByTheHarnesss3DSServer(harness, named: "3ds-server-negative, all", concurrency: 32) { name in
                ["negative-ares-", "negative-rreq-", "negative-erro-"].contains { name.hasPrefix($0) }
            }
            #expect(results.count >= 700)
            // Another version's ARes in every version (the nearest whose table takes it), and the Erro's cases in every one.
            for version in MessageVersion.allCases {
                #expect(results.contains { $0.entry.label.hasPrefix("negative-ares-version-") && $0.entry.version == version }, "\(version.rawValue)")
                #expect(results.contains { $0.entry.label.hasPrefix("negative-erro-missing-errorCode") && $0.entry.version == version }, "\(version.rawValue)")
            }
            #expect(results.contains { $0.entry.label.contains("-messagetype-") } && results.contains { $0.entry.label.hasPrefix("negative-rreq-challenge-") })
            #expect(failed.isEmpty, "\(failed.count) failed: \(failed.prefix(3).map { JSONWriter.string($0) }.joined(separator: "\n"))")
        }
    }

    /// The negative cases whose names `include` takes, played in every version, in the app and the browser, by the simulator
    /// through the harness's own 3DS Server, in a run that judges the 3DS Server: each transaction's result, and the run's
    /// cases that did not pass. A transaction that ended otherwise than its case expects is an issue here.
    func playedByTheHarnesss3DSServer(_ harness: RunningHarness, named name: String, concurrency: Int = 8, include: (String) -> Bool) async throws
        -> (results: [SimulationMatrix.Result], failed: [JSONValue]) {
        let scenarios = try await harness.simulator.scenarios(negative: true).filter { include($0["name"]?.stringValue ?? "") }
        let cases = scenarios.compactMap { SimulationCase(scenario: $0) }
        let names = cases.map { JSONValue.string($0.label) }
        let suite = JSONValue.object([("suite", .object([("name", .string(name)), ("party", .string("3ds-server")), ("negative", .bool(true)),
                                                         ("channels", .array([.string("app"), .string("browser")])), ("only", .array(names))]))])
        let started = try JSONReader.parse(try await harness.post("/admin/runs", JSONWriter.write(suite)).body).value
        let id = try #require(started["id"]?.stringValue, "\(started)")
        var simulator = harness.simulator
        simulator.harnessCase = id
        let matrix = SimulationMatrix(cases: cases, versions: MessageVersion.allCases, styles: [.android], coverage: .everyCombination,
                                      channels: [.app, .browser])
        #expect(matrix.entries.count == started["cases"]?.arrayValue?.count, "one transaction per case of the run")
        let results = await matrix.run(simulator: simulator, challenger: harness.challenger, concurrency: concurrency) { _, style in
            try directoryServer("A000000003", style)
        }
        let problems = results.compactMap { result in result.problem.map { "\(result.entry.label) \(result.entry.version.rawValue) \(result.entry.channel): \($0)" } }
        #expect(problems.isEmpty, "\(problems.prefix(5).joined(separator: "\n"))")
        let finished = try JSONReader.parse(try await harness.post("/admin/runs/\(id)/finish", []).body).value
        return (results, (finished["cases"]?.arrayValue ?? []).filter { $0["status"]?.stringValue != "passed" })
    }

    @Test func aCorrect3DSServerPassesEveryCase() async throws {
        try await withHarness { harness in
            let entries = try await rehearse(harness, bugs: [])
            #expect(!entries.isEmpty)
            for entry in entries { #expect(entry["status"]?.stringValue == "passed", "\(JSONWriter.string(entry))") }
        }
    }

    /// Each class has a wrong 3DS Server that fails it: one that sends no Erro about an ARes fails every ARes refusal;
    /// one that answers 203 to everything fails the missing elements (201), the critical extension (202) and the member
    /// written twice (204); one stricter
    /// than Annex A about the ARes fails the unknown member, and every RReq case (it refuses their ARes D); one that
    /// answers every RReq with an RRes fails every RReq refusal, and one stricter than Annex A about the RReq (Erro 203
    /// about interactionCounter, whatever came) every RReq case; one that checks transStatusReason for an ARes N alone
    /// fails the ARes R's and U's cases and passes the rest; one that refuses a member its version does not define fails
    /// the unknown member's and the other versions' elements' cases, of the ARes and of the RReq; one that answers an Erro it
    /// cannot read with an Erro fails the Erro cases that leave one so, and no other (EMVCo FAQ Q52).
    @Test(arguments: [SimulatedThreeDSServer.Bug.noErroAboutInvalidARes, .sameErroCodeForEverything, .erroAboutValidARes,
                      .rresToEveryRReq, .erroAboutValidRReq, .reasonCheckedForNOnly, .refusesMembersItsVersionDoesNotDefine, .answersAnInvalidErro])
    func aWrong3DSServerFailsTheClassesItGetsWrong(_ bug: SimulatedThreeDSServer.Bug) async throws {
        try await withHarness { harness in
            let entries = try await rehearse(harness, bugs: [bug])
            #expect(!entries.isEmpty)
            for entry in entries {
                let scenario = entry["scenario"]?.stringValue ?? ""
                let (ares, ignored) = (scenario.hasPrefix("negative-ares-"), ["-unknown-", "-undefined-"].contains { scenario.contains($0) })
                // A PRes case is played correctly whatever the bug (PResNegativeCaseTests plays wrong ones); an Erro case
                // is failed only by the server that answers an Erro it cannot read.
                let wrong = scenario.hasPrefix("negative-erro-") ? bug == .answersAnInvalidErro && Self.unreadable(scenario)
                    : !scenario.hasPrefix("negative-pres-") && fails(bug, scenario, ares: ares, ignored: ignored)
                #expect(wrong ? failsOnErro(entry) : entry["status"]?.stringValue == "passed", "\(bug): \(JSONWriter.string(entry))")
            }
        }
    }

    /// Whether a 3DS Server with `bug` fails the ARes or RReq case `scenario`.
    func fails(_ bug: SimulatedThreeDSServer.Bug, _ scenario: String, ares: Bool, ignored: Bool) -> Bool {
        switch bug {
        case .noErroAboutInvalidARes: ares && !ignored
        case .sameErroCodeForEverything: ares && ["-missing-", "-critical-", "-duplicate-"].contains { scenario.contains($0) }
        case .erroAboutValidARes: ignored || !ares
        case .rresToEveryRReq: !ares && !ignored
        case .reasonCheckedForNOnly: ["negative-ares-rejected-", "negative-ares-unavailable-"].contains { scenario.hasPrefix($0) }
        case .refusesMembersItsVersionDoesNotDefine: ignored
        case .answersAnInvalidErro: false
        // Its Erro, 203 naming interactionCounter, is the one due where interactionCounter is spoilt (empty, of another
        // type or length).
        default: !ares && !(scenario.contains("-interactionCounter") && !scenario.contains("-missing-"))
        }
    }
}
