import EMV3DS
import JSON
import Net
import SDKSimulator
import Testing
import TestSupport

/// acsSignedContent's certificate chain, judged by what the SDK does next: after a chain it must refuse it sends no CReq
/// (a runtime error, EMV 3DS SDK Specification: the SDK validates the ACS's certificate chain to the DS CA before the
/// secure channel); a valid chain through an intermediate CA it must take. Real ACSs have sent a chain without its
/// intermediate (adyen-3ds2-ios 26: "Unable to build chain to root (possible missing intermediate)"), and real DS PKIs
/// have intermediates. `challenge.end` grades both ways, and fails each wrong SDK.
@Suite("acsSignedContent's chain: without its intermediate refused, through one taken")
struct SignedContentChainTests {
    static let missingIntermediate = "4000000000850000", throughIntermediate = "4000000000860009", otherRoot = "4000000000240004"

    static let suite = JSONValue.object([
        ("name", .string("chains")), ("party", .string("sdk")), ("versions", .array([.string("2.2.0")])), ("channels", .array([.string("app")])),
        ("scenarios", .array(["fault-missing-intermediate", "signed-through-intermediate", "fault-other-root"].map(JSONValue.string))),
    ])

    /// Each case of a run of the three cards, once the run is finished: its status, its worst `challenge.end` verdict and
    /// every `challenge.end` detail.
    func finishedRun(_ harness: RunningHarness, challenger: ChallengeRunner) async throws -> [String: (status: String?, end: String?, detail: String?)] {
        let started = try await harness.post("/admin/runs", JSONWriter.write(.object([("suite", Self.suite)])))
        let id = try #require(try JSONReader.parse(started.body).value["id"]?.stringValue, "\(started.bodyText)")
        for pan in [Self.missingIntermediate, Self.throughIntermediate, Self.otherRoot] {
            _ = try await runTransaction(harness, pan: pan, answers: ["1234"], challenger: challenger)
        }
        let run = try JSONReader.parse(try await harness.post("/admin/runs/\(id)/finish", []).body).value
        var cases: [String: (status: String?, end: String?, detail: String?)] = [:]
        for entry in run["cases"]?.arrayValue ?? [] {
            let ends = entry["checks"]?.arrayValue?.filter { $0["id"]?.stringValue == "challenge.end" } ?? []
            cases[entry["scenario"]?.stringValue ?? ""] = (entry["status"]?.stringValue, ends.first?["verdict"]?.stringValue,
                                                          ends.compactMap { $0["detail"]?.stringValue }.joined(separator: " | "))
        }
        return cases
    }

    @Test func aCorrectSDKRefusesTheChainWithoutItsIntermediateAndTakesTheOneThroughIt() async throws {
        try await withHarness { harness in
            let refused = try await runTransaction(harness, pan: Self.missingIntermediate, answers: ["1234"])
            guard case .runtimeError(let reason)? = refused.challenge?.outcome else { Issue.record("\(refused.summary)"); return }
            #expect(reason.contains("acsSignedContent"), "\(reason)")
            let taken = try await runTransaction(harness, pan: Self.throughIntermediate, answers: ["1234"])
            #expect(taken.challenge?.outcome == .completed(.authenticated) && taken.final.transStatus == "Y", "\(taken.summary)")

            let cases = try await finishedRun(harness, challenger: harness.challenger)
            for scenario in ["fault-missing-intermediate", "signed-through-intermediate", "fault-other-root"] {
                #expect(cases[scenario]?.status == "passed" && cases[scenario]?.end == "pass", "\(scenario): \(String(describing: cases[scenario]))")
            }
        }
    }

    /// An SDK that checks the signature and no chain takes the chain without its intermediate and another root's: its
    /// challenges then fail `challenge.end` (completed, where a runtime error was due); the valid chain's case passes.
    @Test func anSDKThatChecksNoChainFailsTheChainsItShouldRefuse() async throws {
        try await withHarness { harness in
            let cases = try await finishedRun(harness, challenger: harness.challenger(misbehaving: .trustsAnyChain))
            for scenario in ["fault-missing-intermediate", "fault-other-root"] {
                #expect(cases[scenario]?.status == "failed" && cases[scenario]?.end == "fail", "\(scenario): \(String(describing: cases[scenario]))")
                #expect(cases[scenario]?.detail?.contains("expected runtimeError") == true, "\(String(describing: cases[scenario]?.detail))")
            }
            #expect(cases["signed-through-intermediate"]?.status == "passed", "\(String(describing: cases["signed-through-intermediate"]))")
        }
    }

    /// An SDK that checks the leaf against its roots alone refuses the valid chain through an intermediate: that case
    /// fails `challenge.end` (no challenge by the run's end); the chains it must refuse it still refuses.
    @Test func anSDKThatIgnoresIntermediatesFailsTheValidChainThroughOne() async throws {
        try await withHarness { harness in
            let cases = try await finishedRun(harness, challenger: harness.challenger(misbehaving: .ignoresIntermediates))
            let through = cases["signed-through-intermediate"]
            #expect(through?.status == "failed" && through?.end == "fail", "\(String(describing: through))")
            for scenario in ["fault-missing-intermediate", "fault-other-root"] {
                #expect(cases[scenario]?.status == "passed", "\(scenario): \(String(describing: cases[scenario]))")
            }
        }
    }
}
