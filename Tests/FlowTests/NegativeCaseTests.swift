import Configuration
import EMV3DS
import EMVCrypto
import EventLoops
import Foundation
import Faults
import Harness
import JOSE
import JSON
import Net
import Scenarios
import SDKSimulator
import Testing
import TestSupport

/// The negative cases generated from the field tables (docs/negative.md): a CRes of each screen type without each
/// element Annex A requires there, with a string element sent empty, or with an element given a value outside its
/// version's set, in the versions where the table says so. A correct SDK refuses each with Erro 201 or 203 naming the
/// element (Core specification: the SDK validates the CRes; Table A.4); one that sends no Erro fails `sdk.erro`.
@Suite("Negative cases generated from the field tables")
struct NegativeCaseTests {
    static let catalog = try! ScenarioFile.load(path: repositoryRoot + "/config/scenarios.yaml")

    /// Whether the case is one the SDK must not refuse: a member no version defines, or one another version defines, an
    /// extension not marked critical.
    static func isIgnored(_ name: String) -> Bool { ["-unknown-", "-undefined-", "-misplaced-", "-noncritical-", "-erro-"].contains { name.contains($0) } }

    /// Whether the Erro case `scenario` (an Erro in place of an answer, spoilt) leaves an Erro that no longer reads as one
    /// (no errorCode, an errorComponent outside C, S, D and A): its content faults applied to such an Erro.
    static func leavesAnUnreadableErro(_ scenario: Scenario) -> Bool {
        let erro = ErroMessage(messageVersion: "2.2.0", errorCode: .transientSystemFailure, errorComponent: .directoryServer,
                               errorDetail: "harness fault", errorMessageType: "ARes", threeDSServerTransID: "00000000-0000-4000-8000-000000000000",
                               dsTransID: "00000000-0000-4000-8000-000000000000").json
        let spoilt = scenario.faults.map(\.fault).filter { $0.erroInstead == nil }.apply(to: erro)
        return (try? ErroMessage(json: spoilt)) == nil
    }

    @Test func eachScreenHasACaseForEachElementItRequiresInTheVersionsThatRequireIt() throws {
        let cases = Dictionary(uniqueKeysWithValues: Self.catalog.negative.map { ($0.name, $0) })
        func versions(_ name: String) -> [String]? { cases[name]?.versions.map { $0.map(\.rawValue).sorted() } }
        #expect(versions("negative-cres-01-missing-submitAuthenticationLabel") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(versions("negative-cres-02-missing-challengeSelectInfo") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(versions("negative-cres-04-missing-oobContinueLabel") == ["2.1.0", "2.2.0"], "2.3.1 wants it only without oobAppLabel")
        #expect(versions("negative-cres-05-missing-acsHTML") == ["2.1.0", "2.2.0", "2.3.1"])
        // 2.3.1 Table A.20 requires header and text on the out-of-band and information screens too.
        #expect(versions("negative-cres-04-missing-challengeInfoHeader") == ["2.3.1"])
        #expect(versions("negative-cres-07-missing-infoContinueLabel") == ["2.3.1"])
        // What the harness requires beyond Annex A up to 2.2.0 (the EMVCo SDK test cases' header on a text screen) is
        // a negative case only where Annex A requires it.
        #expect(versions("negative-cres-01-missing-challengeInfoHeader") == ["2.3.1"])
        #expect(versions("negative-cres-01-missing-challengeInfoLabel") == nil)
        // Every case is an SDK's, on a card of its own that no file scenario has, and expects Erro 201.
        // What every screen carries (the ids, the counter, acsUiType) is a case of the text screen alone.
        #expect(versions("negative-cres-01-missing-acsTransID") == ["2.1.0", "2.2.0", "2.3.1"] && versions("negative-cres-02-missing-acsTransID") == nil)
        // An optional string element sent empty is refused with 203 where it is optional; where it is required, an empty
        // one reads as missing (201) or invalid (203), so it makes no case: no correct SDK is failed for either reading.
        #expect(versions("negative-cres-01-empty-whyInfoLabel") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(cases["negative-cres-01-empty-whyInfoLabel"]?.expectation?.sdkErro == .formatInvalid)
        #expect(versions("negative-cres-04-empty-oobContinueLabel") == ["2.3.1"], "required up to 2.2.0, optional beside oobAppLabel in 2.3.1")
        #expect(versions("negative-cres-01-empty-submitAuthenticationLabel") == nil)
        // A value outside the version's set: one another version defines where there is one (acsUiType 06 before 2.3.1),
        // else one no version defines; refused with 203 naming the element.
        #expect(versions("negative-cres-01-outside-acsUiType-06") == ["2.1.0", "2.2.0"])
        #expect(versions("negative-cres-01-outside-acsUiType-99") == ["2.3.1"])
        #expect(versions("negative-cres-01-outside-challengeCompletionInd-Z") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(cases["negative-cres-01-outside-acsUiType-06"]?.expectation?.sdkErro == .formatInvalid)
        #expect(cases["negative-cres-01-outside-acsUiType-06"]?.faults.first?.fault == .fieldValue("acsUiType", "06"))
        #expect(Self.catalog.negative.count >= 40)
        // An element sent as a value of another type (acsUiType 1 for "01"), and a string of a length outside its format's
        // bounds (challengeInfoText 351 characters, acsCounterAtoS of 2 or 4 digits): 203 naming it. A transaction id of
        // another type is also one that names no transaction (301): it makes no case.
        #expect(versions("negative-cres-01-type-acsUiType") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(cases["negative-cres-01-type-acsUiType"]?.faults.first?.fault == .fieldType("acsUiType"))
        #expect(cases["negative-cres-01-type-acsUiType"]?.expectation?.sdkErro == .formatInvalid)
        #expect(versions("negative-cres-01-type-acsTransID") == nil)
        #expect(versions("negative-cres-01-length-challengeInfoText-351") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(versions("negative-cres-01-length-acsCounterAtoS-2") != nil && versions("negative-cres-01-length-acsCounterAtoS-4") != nil)
        #expect(cases["negative-cres-01-length-acsCounterAtoS-4"]?.faults.first?.fault == .fieldLength("acsCounterAtoS", 4))
        // A string of its length whose format is broken: a letter among acsCounterAtoS's digits (numeric, Annex A), a '+'
        // in acsHTML (base64url), an http oobAppURL in 2.3.1 (a Fully Qualified URL of scheme https): 203 naming it.
        #expect(versions("negative-cres-01-format-acsCounterAtoS-letter") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(cases["negative-cres-01-format-acsCounterAtoS-letter"]?.faults.first?.fault == .fieldFormat("acsCounterAtoS", .letter))
        #expect(cases["negative-cres-01-format-acsCounterAtoS-letter"]?.expectation?.sdkErro == .formatInvalid)
        #expect(versions("negative-cres-05-format-acsHTML-base64") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(versions("negative-cres-01-final-format-acsCounterAtoS-letter") == ["2.1.0", "2.2.0", "2.3.1"])
        // A member written twice: 204 naming it, one case per message (the first element required there that names no transaction).
        #expect(versions("negative-cres-01-duplicate-acsCounterAtoS") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(cases["negative-cres-01-duplicate-acsCounterAtoS"]?.expectation?.sdkErro == .duplicateElement)
        #expect(versions("negative-cres-01-final-duplicate-acsCounterAtoS") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(Self.catalog.negative.filter { $0.name.hasPrefix("negative-cres-") && $0.name.contains("-duplicate-") && !$0.name.contains("-erro-") }.count == 2)
        // The final CRes's own: transStatus of another type.
        #expect(versions("negative-cres-01-final-type-transStatus") == ["2.1.0", "2.2.0", "2.3.1"])
        // Members no version defines, in the first and the final CRes: ignored, so no Erro is due.
        #expect(versions("negative-cres-01-unknown-harnessUnknownMember") == ["2.1.0", "2.2.0", "2.3.1"])
        // 2.2.0's whitelistingInfoText, renamed trustListInfoText in 2.3.1: each a case of the versions without it.
        #expect(versions("negative-cres-01-undefined-whitelistingInfoText") == ["2.1.0", "2.3.1"])
        #expect(versions("negative-cres-01-undefined-trustListInfoText") == ["2.1.0", "2.2.0"])
        #expect(cases["negative-cres-01-undefined-whitelistingInfoText"]?.expectation == nil)
        // transStatus in the first CRes, which an SDK ignores there from 2.2.0 (EMVCo FAQ Q15).
        #expect(versions("negative-cres-01-misplaced-transStatus") == ["2.2.0", "2.3.1"])
        #expect(cases["negative-cres-01-misplaced-transStatus"]?.faults.first?.fault == .misplacedMember("transStatus"))
        #expect(cases["negative-cres-01-final-unknown-harnessUnknownMember"]?.faults.first?.round == 1)
        // The final CRes's own elements: transStatus left out (201), or given a value its version does not define (203:
        // D is 2.3.1's), judged by the SDK's Erro that follows the final CRes.
        #expect(versions("negative-cres-01-final-missing-transStatus") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(versions("negative-cres-01-final-outside-transStatus-D") == ["2.1.0", "2.2.0"])
        #expect(cases["negative-cres-01-final-missing-transStatus"]?.faults.first?.round == 1)
        // An extension no version defines: refused with 202 when it is critical, ignored when it is not.
        #expect(versions("negative-cres-01-critical-messageExtension") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(cases["negative-cres-01-critical-messageExtension"]?.expectation?.sdkErro == .criticalExtensionNotRecognised)
        #expect(versions("negative-cres-01-noncritical-messageExtension") == ["2.1.0", "2.2.0", "2.3.1"])
        // The envelope: messageType the CReq's (101), messageVersion another version whose table takes the CRes as it is (102),
        // in the first and the final CRes of the text screen.
        #expect(versions("negative-cres-01-messagetype-messageType-CReq") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(versions("negative-cres-01-final-messagetype-messageType-CReq") == ["2.1.0", "2.2.0", "2.3.1"])
        #expect(cases["negative-cres-01-messagetype-messageType-CReq"]?.expectation?.sdkErro == .messageNotRecognised)
        let versionCases = cases.values.filter { $0.name.hasPrefix("negative-cres-01-version-") || $0.name.hasPrefix("negative-cres-01-final-version-") }
        #expect(versionCases.count >= 2 && versionCases.allSatisfy { $0.expectation?.sdkErro == .versionNotSupported })
        for scenario in versionCases {
            let claimed = String(scenario.name.split(separator: "-").last ?? "")
            #expect(scenario.versions?.contains { $0.rawValue == claimed } == false, "\(scenario.name): its value is another version than the case's")
        }
        for version in MessageVersion.allCases {
            #expect(versionCases.count { $0.versions?.contains(version) == true && !$0.name.contains("-final-") } == 1, "\(version.rawValue)")
        }
        let filePANs = Set(Self.catalog.scenarios.compactMap(\.pan))
        for scenario in Self.catalog.negative where scenario.name.hasPrefix("negative-cres-") {
            #expect(scenario.pan.map { CardNumber.isLuhnValid($0) && !filePANs.contains($0) } == true, "\(scenario.name)")
            let ignored = Self.isIgnored(scenario.name)
            // An Erro in place of the CRes ends the challenge (protocolError) with none back.
            let erroInstead = scenario.name.contains("-erro-") && scenario.expectation?.sdk == .protocolError && scenario.expectation?.sdkErro == nil
            #expect(ignored ? scenario.expectation == nil || erroInstead
                            : [.requiredElementMissing, .formatInvalid, .criticalExtensionNotRecognised, .duplicateElement, .versionNotSupported,
                               .messageNotRecognised].contains(scenario.expectation?.sdkErro),
                    "\(scenario.name)")
            #expect(scenario.channels == [.app], "\(scenario.name)")
            #expect(Self.catalog.scenario(for: scenario.pan ?? "").name == scenario.name)
        }
        // Not among the file's scenarios: `simulate --all` and the default suites stay what the file says.
        #expect(!Self.catalog.scenarios.contains { $0.name.hasPrefix(NegativeScenarios.prefix) })
    }

    /// Every negative case in every version that has it, as `simulate --negative --junit` runs them: a correct SDK passes
    /// each case of the run; one that withholds its Erro fails `sdk.erro` in each.
    @Test(arguments: [false, true])
    func aCorrectSDKPassesEveryNegativeCaseAndOneThatSendsNoErroFailsThem(withholdsErro: Bool) async throws {
        try await withHarness { harness in
            let group = EventLoopGroup(loopCount: 1)
            defer { group.shutdown() }
            // The SDK's cases: the CRes's (the ARes's are a 3DS Server's, ThreeDSServerNegativeCaseTests).
            let scenarios = try await harness.simulator.scenarios(negative: true).filter { $0["name"]?.stringValue?.hasPrefix("negative-cres-") == true }
            let cases = scenarios.compactMap { SimulationCase(scenario: $0) }
            #expect(cases.count == Self.catalog.negative.count { $0.name.hasPrefix("negative-cres-") })
            // The SDK that sends no Erro waits out each transaction's result: 2.3.1 alone shows it fails.
            let versions = withholdsErro ? [MessageVersion.v2_3_1] : MessageVersion.allCases
            let run = JSONValue.object([("suite", .object([("name", .string("negative")), ("party", .string("sdk")), ("negative", .bool(true)),
                                                           ("versions", .array(versions.map { .string($0.rawValue) })), ("only", .array([.string("cres")]))]))])
            let started = try JSONReader.parse(try await harness.post("/admin/runs", JSONWriter.write(run)).body).value
            let id = try #require(started["id"]?.stringValue, "\(started)")
            let matrix = SimulationMatrix(cases: cases, versions: versions, styles: [.android], coverage: .everyCombination)
            #expect(matrix.entries.count == started["cases"]?.arrayValue?.count, "one transaction per case of the suite")
            var simulator = harness.simulator
            simulator.harnessCase = id
            let challenger = harness.challenger(misbehaving: withholdsErro ? .withholdErro : nil, client: try HTTPClient(group: group))
            // The SDK that sends no Erro waits idle for a result that does not come: many at once.
            let results = await matrix.run(simulator: simulator, challenger: challenger, concurrency: withholdsErro ? 64 : 8) { _, style in
                try directoryServer("A000000003", style)
            }
            let problems = results.compactMap { result in result.problem.map { "\(result.entry.label) \(result.entry.version.rawValue): \($0)" } }
            #expect(problems.isEmpty == !withholdsErro, "\(problems.prefix(5).joined(separator: "\n"))")
            let finished = try JSONReader.parse(try await harness.post("/admin/runs/\(id)/finish", []).body).value
            let entries = finished["cases"]?.arrayValue ?? []
            if withholdsErro {
                // An unknown member, another version's element or a non-critical extension is ignored, and an Erro is never
                // answered: no Erro is due, and the SDK that sends none passes those cases (2.3.1: the two unknown members, the
                // extension, 2.2.0's whitelistingInfoText, 2.1.0 and 2.2.0's challengeAddInfo and acsHTMLRefresh, transStatus in
                // the first CRes, and the Erro cases).
                let (ignored, refused) = (entries.filter { Self.isIgnored($0["scenario"]?.stringValue ?? "") },
                                          entries.filter { !Self.isIgnored($0["scenario"]?.stringValue ?? "") })
                let erroCases = Self.catalog.negative.count { $0.name.hasPrefix("negative-cres-01-erro-") && $0.versions?.contains(.v2_3_1) != false }
                #expect(erroCases >= 20)
                #expect(ignored.count == 7 + erroCases && ignored.allSatisfy { $0["status"]?.stringValue == "passed" }, "\(ignored.map { $0["id"] ?? .null })")
                #expect(refused.allSatisfy { $0["status"]?.stringValue == "failed" }, "\(finished["summary"] ?? .null)")
                #expect(refused.allSatisfy { entry in
                    entry["checks"]?.arrayValue?.contains { $0["id"]?.stringValue == "sdk.erro" && $0["verdict"]?.stringValue == "fail" } == true
                })
            } else {
                let failed = entries.filter { $0["status"]?.stringValue != "passed" }.map { "\($0["id"]?.stringValue ?? "?"): \($0["checks"]?.arrayValue?.first { $0["verdict"]?.stringValue == "fail" }?["detail"]?.stringValue ?? "")" }
                #expect(failed.isEmpty, "\(failed.prefix(5).joined(separator: "\n"))")
            }
        }
    }

    /// Each `undefined` case, the SDK's and the 3DS Server's, adds an element that another version of its message's table
    /// defines and none of the case's versions does, with a value of its format there: the fault names it, and applying it
    /// to a message of each of those versions adds it with that value.
    @Test func eachUndefinedCaseAddsAnElementOnlyOtherVersionsDefine() throws {
        let undefined = Self.catalog.negative.filter { $0.name.contains("-undefined-") }
        #expect(undefined.count >= 40)
        let messageTypes: [FaultLeg: String] = [.sdk: "CRes", .directoryServer: "ARes", .results: "RReq", .preparation: "PRes"]
        for scenario in undefined {
            let injection = try #require(scenario.faults.first, "\(scenario.name)")
            guard case .otherVersionMember(let element) = injection.fault, let type = messageTypes[injection.leg],
                  let rules = MessageTables.named(type)?.rules else {
                Issue.record("\(scenario.name): \(injection)")
                continue
            }
            #expect(scenario.name.hasSuffix("-undefined-\(element)"))
            for version in scenario.versions ?? [] {
                #expect(!rules.defines(element, in: version), "\(scenario.name) \(version.rawValue)")
                let message = JSONValue.object([("messageType", .string(type)), ("messageVersion", .string(version.rawValue))])
                let added = injection.fault.apply(to: message)[element]
                #expect(added != nil && added == rules.exampleFromAnotherVersion(of: element, besides: version), "\(scenario.name) \(version.rawValue)")
            }
        }
        // A message whose version defines the element, or that carries it, is left as it is: no id or label of its own
        // overwritten, and no element of its own version added under a case that says it is another's.
        let cres = JSONValue.object([("messageType", .string("CRes")), ("messageVersion", .string("2.2.0")), ("acsTransID", .string("an id"))])
        #expect(Fault.otherVersionMember("acsTransID").apply(to: cres) == cres)
        #expect(Fault.otherVersionMember("whitelistingInfoText").apply(to: cres) == cres)
        #expect(Fault.otherVersionMember("trustListInfoText").apply(to: cres)["trustListInfoText"] != nil)
        // transStatus is added to a CRes of 2.2.0 that lacks it; left out of a final CRes that has its own, of a 2.1.0 CRes
        // (no rule covers it there) and of an ARes.
        #expect(Fault.misplacedMember("transStatus").apply(to: cres)["transStatus"] == .string("Y"))
        let final = JSONValue.object([("messageType", .string("CRes")), ("messageVersion", .string("2.2.0")), ("transStatus", .string("N"))])
        #expect(Fault.misplacedMember("transStatus").apply(to: final) == final)
        let older = JSONValue.object([("messageType", .string("CRes")), ("messageVersion", .string("2.1.0"))])
        #expect(Fault.misplacedMember("transStatus").apply(to: older) == older)
        let ares = JSONValue.object([("messageType", .string("ARes")), ("messageVersion", .string("2.2.0"))])
        #expect(Fault.misplacedMember("transStatus").apply(to: ares) == ares)
    }

    /// An SDK that checks presence and not values (it reads a value outside the version's set as the set's first), one
    /// that coerces a value of another JSON type, one that checks no length and one that checks no shape beyond length
    /// and type each send no Erro 203 about such a CRes: each fails `sdk.erro` in every case of 2.2.0 of its class
    /// (`outside`, `type`, `length`, `format`, in the first and the final CRes); the correct SDK passes them (above). One
    /// that refuses a member its version's table does not define sends an Erro where none is due, and fails the `unknown` and
    /// `undefined` cases; one
    /// that reads the content alone takes a CRes of another type or version, and fails the `version` and `messagetype` cases.
    @Test(arguments: [(ChallengeRunner.Misbehaviour.acceptsAnyValue, "outside"), (.acceptsAnyType, "type"), (.acceptsAnyLength, "length"),
                      (.acceptsAnyFormat, "format"), (.acceptsDuplicates, "duplicate"), (.refusesUnknownMembers, "unknown"),
                      (.refusesUnknownMembers, "undefined"),
                      (.ignoresEnvelope, "version"), (.ignoresEnvelope, "messagetype")])
    func anSDKThatDoesNotCheckAClassFailsEachCaseOfIt(_ misbehaviour: ChallengeRunner.Misbehaviour, _ mutation: String) async throws {
        try await withHarness { harness in
            let entries = try await played(harness, misbehaving: misbehaviour, casesOf: mutation)
            #expect(entries.count >= 2)
            for entry in entries {
                #expect(entry["status"]?.stringValue == "failed" && verdict(entry, "sdk.erro") == "fail", "\(misbehaviour): \(JSONWriter.string(entry))")
            }
        }
    }

    /// transStatus in a CRes that is not the final one is ignored (EMVCo 3DS FAQ, April 2026, Q15: "it should be ignored by
    /// the 3DS SDK as per Req 209"; https://pciwatch.org/emvco/129384/faq-emv-3-d-secure-technical-questions-7/). An SDK
    /// that takes such a CRes as the final one stops a challenge the ACS has not ended, and fails `challenge.end` in the
    /// `misplaced` case; it passes the cases whose first CRes carries no transStatus (the `unknown` ones).
    @Test func anSDKThatEndsOnTransStatusFailsTheMisplacedCase() async throws {
        try await withHarness { harness in
            let misplaced = try await played(harness, misbehaving: .endsOnTransStatus, casesOf: "misplaced")
            #expect(misplaced.count == 1)
            for entry in misplaced {
                #expect(entry["status"]?.stringValue == "failed" && verdict(entry, "challenge.end") == "fail", "\(JSONWriter.string(entry))")
                #expect(verdict(entry, "sdk.erro") != "fail", "no Erro was due, and none came: \(JSONWriter.string(entry))")
            }
            let unknown = try await played(harness, misbehaving: .endsOnTransStatus, casesOf: "unknown")
            #expect(unknown.count == 2 && unknown.allSatisfy { $0["status"]?.stringValue == "passed" }, "\(unknown.map { JSONWriter.string($0) })")
        }
    }

    /// An Erro in place of the CRes is never answered, also when it is in error (EMVCo 3DS FAQ, Technical Questions, April 2026,
    /// Q52): an SDK that answers one it cannot read with an Erro fails `sdk.erro` in the cases whose Erro does not read
    /// (no errorCode, an errorComponent outside the four), and passes the others.
    @Test func anSDKThatAnswersAnErroInErrorFailsTheCasesOfAnUnreadableErro() async throws {
        try await withHarness { harness in
            let entries = try await played(harness, misbehaving: .answersAnInvalidErro, casesOf: "erro")
            #expect(entries.count >= 20)
            var failedSome = false
            for entry in entries {
                let name = entry["scenario"]?.stringValue ?? ""
                let scenario = try #require(Self.catalog.negative.first { $0.name == name })
                let unreadable = Self.leavesAnUnreadableErro(scenario)
                failedSome = failedSome || unreadable
                #expect(entry["status"]?.stringValue == (unreadable ? "failed" : "passed"), "\(JSONWriter.string(entry))")
                #expect((verdict(entry, "sdk.erro") == "fail") == unreadable, "\(name)")
            }
            #expect(failedSome)
        }
    }

    /// The ACS that answers a CReq with an Erro has ended the challenge, and reported it first: the 3DS Server has its
    /// RReq (U, `challengeCancel` 06 "Transaction Error" before 2.3.1; 10 from it, "Error Message in response to the CReq
    /// message", 2.3.1 Table A.1) when the SDK reads the Erro, where it would wait out the challenge's time limit. The SDK ends the challenge too: one that takes the Erro for a lost answer and goes on with
    /// its next CReq fails `challenge.end` in every Erro case, readable or not, and sends no Erro (`sdk.erro` holds).
    @Test func anSDKThatGoesOnAfterAnErroFromTheACSFailsEveryErroCase() async throws {
        try await withHarness { harness in
            let pan = "4000000000410003"  // fault-acs-erro
            for (version, cancel) in [(MessageVersion.v2_2_0, "06"), (.v2_3_1, "10")] {
                let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: version, style: .android)
                let run = try await harness.simulator.run(sdk, pan: pan, answers: ChallengeAnswers(["1234"]), challenger: harness.challenger, style: .android)
                #expect(run.final.state == "completed" && run.final.transStatus == "U", "\(run.final.record)")
                let rreq = run.final.messages("received", "RReq").first
                #expect(rreq?["challengeCancel"] == .string(cancel), "\(run.final.record)")
                // 2.3.1: the Erro the ACS sent, as challengeErrorReporting (required with challengeCancel 10).
                #expect((rreq?["challengeErrorReporting"]?["errorCode"] == .string("403")) == (version == .v2_3_1), "\(run.final.record)")
            }
            let entries = try await played(harness, misbehaving: .continuesAfterACSErro, casesOf: "erro")
            #expect(entries.count >= 20)
            for entry in entries {
                #expect(entry["status"]?.stringValue == "failed" && verdict(entry, "challenge.end") == "fail", "\(JSONWriter.string(entry))")
                #expect(verdict(entry, "sdk.erro") != "fail", "\(JSONWriter.string(entry))")
            }
        }
    }

    /// The run's entries of the CRes cases of 2.2.0 whose names carry `mutation`, played by an SDK with `misbehaviour`.
    func played(_ harness: RunningHarness, misbehaving misbehaviour: ChallengeRunner.Misbehaviour, casesOf mutation: String) async throws -> [JSONValue] {
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let names = Set(Self.catalog.negative.filter { scenario in
            scenario.name.hasPrefix("negative-cres-") && scenario.name.contains("-\(mutation)-") && scenario.versions?.contains(.v2_2_0) != false
                && (mutation == "erro" || !scenario.name.contains("-erro-"))  // the Erro cases' classes are the Erro's, not the CRes's
        }.map(\.name))
        let cases = try await harness.simulator.scenarios(negative: true).filter { names.contains($0["name"]?.stringValue ?? "") }.compactMap { SimulationCase(scenario: $0) }
        let run = JSONValue.object([("suite", .object([("name", .string(mutation)), ("party", .string("sdk")), ("negative", .bool(true)),
                                                       ("versions", .array([.string("2.2.0")])), ("only", .array(names.sorted().map(JSONValue.string)))]))])
        let started = try JSONReader.parse(try await harness.post("/admin/runs", JSONWriter.write(run)).body).value
        let id = try #require(started["id"]?.stringValue, "\(started)")
        var simulator = harness.simulator
        simulator.harnessCase = id
        let challenger = harness.challenger(misbehaving: misbehaviour, client: try HTTPClient(group: group))
        let matrix = SimulationMatrix(cases: cases, versions: [.v2_2_0], styles: [.android], coverage: .everyCombination)
        #expect(matrix.entries.count == names.count)
        _ = await matrix.run(simulator: simulator, challenger: challenger, concurrency: 8) { _, style in try directoryServer("A000000003", style) }
        let finished = try JSONReader.parse(try await harness.post("/admin/runs/\(id)/finish", []).body).value
        let entries = finished["cases"]?.arrayValue ?? []
        #expect(entries.count == names.count)
        return entries
    }

    /// The verdict of `check` in a run's case entry.
    func verdict(_ entry: JSONValue, _ check: String) -> String? {
        entry["checks"]?.arrayValue?.first { $0["id"]?.stringValue == check }?["verdict"]?.stringValue
    }

    /// `sdk.erro` reads `errorDetail` as Table A.4 defines it for each code: the element's name for 201 and 203, the
    /// critical extension's ID for 202. A correct SDK's Erro about each of the file's CRes faults passes.
    @Test func aCorrectSDKsErroAboutEachCResFaultNamesWhatTheTableAsks() async throws {
        try await withHarness { harness in
            let scenarios = ["fault-cres-missing-field", "fault-empty-optional-field", "fault-critical-extension"]
            let suite = JSONValue.object([("suite", .object([("name", .string("errorDetail")), ("party", .string("sdk")),
                                                             ("scenarios", .array(scenarios.map(JSONValue.string))), ("versions", .array([.string("2.2.0")]))]))])
            let id = try #require(try JSONReader.parse(try await harness.post("/admin/runs", JSONWriter.write(suite)).body).value["id"]?.stringValue)
            for pan in ["4000000000330003", "4000000000340002", "4000000000380008"] { _ = try await runTransaction(harness, pan: pan, answers: ["1234"]) }
            let finished = try JSONReader.parse(try await harness.post("/admin/runs/\(id)/finish", []).body).value
            for entry in finished["cases"]?.arrayValue ?? [] {
                let erro = entry["checks"]?.arrayValue?.first { $0["id"]?.stringValue == "sdk.erro" }
                #expect(entry["status"]?.stringValue == "passed" && erro?["verdict"]?.stringValue == "pass", "\(JSONWriter.string(entry))")
            }
        }
    }
}
