import Configuration
import EMV3DS
import Faults
import Foundation
import JSON
import Net
import Scenarios
import SDKSimulator
import Testing
import TestSupport

/// The PRes cases of `3ds-server-negative`: a PRes spoilt per element, armed by its case's name for the next PReq of one
/// 3DS Server, and graded by the Erro that 3DS Server posts about it (`pres.erro`; Core specification: the 3DS Server
/// validates the PRes and reports a failure to the DS with an Erro, Annex A Table A.4 naming the code). A correct 3DS
/// Server passes each; each wrong one fails the classes it gets wrong, and no other.
@Suite("PRes cases: a 3DS Server's Erro about each spoilt PRes")
struct PResNegativeCaseTests {
    static let suite = JSONValue.object([
        ("name", .string("pres")), ("party", .string("3ds-server")), ("negative", .bool(true)),
        ("versions", .array([.string("2.2.0")])), ("only", .array([.string("pres")])),
    ])

    /// Each case of a run of the PRes cases played by a 3DS Server with `mistake`: its status and `pres.erro` verdict.
    func played(_ harness: RunningHarness, mistake: PreparationExchange.Mistake?) async throws -> [String: (status: String?, verdict: String?)] {
        let started = try await harness.post("/admin/runs", JSONWriter.write(.object([("suite", Self.suite)])))
        let run = try JSONReader.parse(started.body).value
        let id = try #require(run["id"]?.stringValue, "\(started.bodyText)")
        var simulator = harness.simulator
        simulator.harnessCase = id
        for entry in run["cases"]?.arrayValue ?? [] {
            let scenario = try #require(entry["scenario"]?.stringValue)
            let version = try #require(entry["messageVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)))
            _ = try await simulator.playPreparationCase(scenario, version: version, mistake: mistake)
        }
        let finished = try JSONReader.parse(try await harness.post("/admin/runs/\(id)/finish", []).body).value
        var cases: [String: (status: String?, verdict: String?)] = [:]
        for entry in finished["cases"]?.arrayValue ?? [] {
            let check = entry["checks"]?.arrayValue?.first { $0["id"]?.stringValue == "pres.erro" }
            cases[entry["scenario"]?.stringValue ?? ""] = (entry["status"]?.stringValue, check?["verdict"]?.stringValue)
        }
        return cases
    }

    @Test func eachPResCaseIsGeneratedFromThePResTableInTheVersionsThatHaveIt() throws {
        let catalog = try ScenarioFile.load(path: repositoryRoot + "/config/scenarios.yaml")
        let cases = Dictionary(uniqueKeysWithValues: catalog.negative.filter { $0.name.hasPrefix("negative-pres-") }.map { ($0.name, $0) })
        // 2.3.1 reshapes the PRes: its DS versions are a list, and readOrder says how to apply the ranges.
        #expect(cases["negative-pres-missing-dsStartProtocolVersion"]?.versions == [.v2_1_0, .v2_2_0])
        #expect(cases["negative-pres-missing-readOrder"]?.versions == [.v2_3_1])
        #expect(cases["negative-pres-missing-dsTransID"]?.versions == Set(MessageVersion.allCases))
        #expect(cases["negative-pres-unknown-harnessUnknownMember"]?.expectation == nil)
        for scenario in cases.values {
            #expect(scenario.faults.allSatisfy { $0.leg == .preparation } && scenario.channels == [.app], "\(scenario.name)")
        }
    }

    @Test func aCorrect3DSServerPassesEveryPResCase() async throws {
        try await withHarness { harness in
            let cases = try await played(harness, mistake: nil)
            #expect(cases.count == 44, "\(cases.keys.sorted())")
            for (name, graded) in cases {
                #expect(graded.status == "passed" && graded.verdict == "pass", "\(name): \(graded)")
            }
        }
    }

    /// A 3DS Server sends its PReqs and AReqs under one reference number: the Erro a PRes case is owed is the case's to
    /// grade, not that of the 3DS Server's next AReq (another case's); an Erro that comes after that AReq still passes the
    /// case; and an AReq on the case's card is none of the case's.
    @Test func aPResCasesErroIsGradedInTheCaseAloneEvenAfterAnAReq() async throws {
        try await withHarness { harness in
            let reference = "3DS_LOA_SER_TEST_020200_00007", scenario = "negative-pres-missing-dsTransID"
            let suite = JSONValue.object([("name", .string("one")), ("party", .string("3ds-server")), ("versions", .array([.string("2.2.0")])),
                                          ("scenarios", .array([.string(scenario)]))])
            let started = try JSONReader.parse(try await harness.post("/admin/runs", JSONWriter.write(.object([("suite", suite)]))).body).value
            let id = try #require(started["id"]?.stringValue)
            let arming = JSONValue.object([("scenario", .string(scenario)), ("threeDSServerRefNumber", .string(reference))])
            let armed = try JSONReader.parse(try await harness.post("/admin/ds/pres-faults", JSONWriter.write(arming)).body).value
            #expect(armed["messageVersions"] == .array(MessageVersion.allCases.map { .string($0.rawValue) }), "\(armed)")
            let preq = PreparationTests.preq(reference)
            let pres = try await harness.postMessage("/ds/preq", preq)
            #expect(pres["messageType"]?.stringValue == "PRes" && pres["dsTransID"] == nil, "\(pres)")
            // The next AReq, before the Erro: no pres.erro of its own.
            _ = try await harness.postMessage("/ds/areq", try appAReq(pan: "4000000000001000", replacing: ["threeDSServerRefNumber": .string(reference)]))
            let newest = try JSONReader.parse(try await harness.get("/inspector/transactions?limit=1").body).value
            let areq = try #require(newest["transactions"]?.arrayValue?.first?["dsTransID"]?.stringValue)
            #expect(try await harness.checkVerdicts(areq)["pres.erro"] == nil)
            let erro = ErroMessage(messageVersion: "2.2.0", errorCode: .requiredElementMissing, errorComponent: .threeDSServer, errorDetail: "dsTransID",
                                   errorMessageType: "PRes", threeDSServerTransID: preq["threeDSServerTransID"]?.stringValue)
            _ = try await harness.post("/ds/preq", JSONWriter.write(erro.json))
            // An AReq on the case's card: none of the case's.
            let card = try #require(started["cases"]?.arrayValue?.first?["card"]?.stringValue)
            _ = try await harness.postMessage("/ds/areq", try appAReq(pan: card, replacing: ["threeDSServerRefNumber": .string(reference)]))
            let finished = try JSONReader.parse(try await harness.post("/admin/runs/\(id)/finish", []).body).value
            let graded = try #require(finished["cases"]?.arrayValue?.first)
            let check = graded["checks"]?.arrayValue?.first { $0["id"]?.stringValue == "pres.erro" }
            #expect(check?["verdict"]?.stringValue == "pass", "\(JSONWriter.string(graded))")
            #expect(graded["status"]?.stringValue == "failed" && JSONWriter.string(graded).contains("is an AReq on the case's card"),
                    "\(JSONWriter.string(graded))")
            // The report shows the case as a PReq's, armed by name, with the Erro due: no card to play, no transStatus.
            let report = try await harness.get("/admin/runs/\(id)/report.html").bodyText
            #expect(report.contains("armed by name") && report.contains(#"PRes → <strong class="mono">Erro 201</strong>"#), "\(report.suffix(2000))")
        }
    }

    /// `simulate --negative --only pres` plays the PRes cases alone (44 PReqs in 2.2.0, no transaction); a part that names
    /// no case is refused with the reason.
    @Test func simulateOnlyPlaysTheCasesItNames() async throws {
        try await withHarness { harness in
            let arguments = ["simulate", "--url", harness.baseURL, "--negative", "--version", "2.2.0", "--style", "android"]
            let played = try await offThePool { try ChildProcess.run(harnessBinary, arguments + ["--only", "pres"], timeout: 120) }
            #expect(played.status == 0 && played.output.contains("all passed (0 transactions; 44 PReqs of PRes cases)"), "\(played.output.suffix(800))")
            let none = try await offThePool { try ChildProcess.run(harnessBinary, arguments + ["--only", "no-such-part"], timeout: 60) }
            #expect(none.status != 0 && none.output.contains("names no scenario"), "\(none.output.suffix(500))")
        }
    }

    /// Which cases each wrong 3DS Server fails: exactly those of the classes it gets wrong.
    @Test(arguments: PreparationExchange.Mistake.allCases)
    func aWrong3DSServerFailsTheClassesItGetsWrong(_ mistake: PreparationExchange.Mistake) async throws {
        try await withHarness { harness in
            let cases = try await played(harness, mistake: mistake)
            #expect(!cases.isEmpty)
            var failedSome = false
            for (name, graded) in cases {
                let unknown = ["-unknown-", "-undefined-"].contains { name.contains($0) }
                // An Erro in place of the PRes is answered by none (EMVCo FAQ Q52): only the server that answers one it cannot read fails.
                let erroCase = name.hasPrefix("negative-pres-erro-") ? NegativeCaseTests.catalog.negative.first { $0.name == name } : nil
                let failsIt = if let erroCase { mistake == .answersAnInvalidErro && NegativeCaseTests.leavesAnUnreadableErro(erroCase) } else {
                    switch mistake {
                    case .takesAnyPRes: !unknown
                    case .erro203ForEverything: ["-missing-", "-duplicate-", "-critical-"].contains { name.contains($0) }
                    case .refusesUnknownMembers: unknown
                    case .answersAnInvalidErro: false
                    }
                }
                failedSome = failedSome || failsIt
                #expect(graded.status == (failsIt ? "failed" : "passed") && graded.verdict == (failsIt ? "fail" : "pass"), "\(mistake) \(name): \(graded)")
            }
            #expect(failedSome, "\(mistake) fails no case: the class it gets wrong is not among them")
        }
    }
}
