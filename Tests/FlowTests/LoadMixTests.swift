import Faults
import Foundation
import JSON
import Net
import Scenarios
import Testing

/// The load-test mode: a weighted mix of scenarios with leg latencies, deterministic under its seed,
/// for the cards of a range or those no scenario names; what it drew at GET /admin/load-mix and /metrics.
@Suite("Load mix")
struct LoadMixTests {
    static let issueMix = LoadMix(shares: [.init(scenario: "frictionless-y", weight: 80), .init(scenario: "challenge-text", weight: 10),
                                           .init(scenario: "frictionless-n", weight: 5), .init(scenario: "fault-ds-erro-203", weight: 3),
                                           .init(scenario: "fault-acs-timeout", weight: 2)],
                                  seed: 7, latency: [.accessControlServer: .percentiles(p50: 40, p99: 400), .directoryServer: .uniform(min: 5, max: 15)])

    @Test func theSameSeedDrawsTheSameAndTheWeightsAndPercentilesHold() {
        let draws = (0..<10_000).map { Self.issueMix.draw(UInt64($0)) }
        #expect(draws.map(\.share) == (0..<10_000).map { Self.issueMix.draw(UInt64($0)).share })
        let reseeded = LoadMix(shares: Self.issueMix.shares, seed: 8, latency: Self.issueMix.latency)
        #expect(draws.prefix(100).map(\.share) != (0..<100).map { reseeded.draw(UInt64($0)).share })
        // Within 1.5 points of each weight over 10,000 draws (exact for this seed: the draws are fixed).
        for (index, share) in Self.issueMix.shares.enumerated() {
            let percent = 100 * Double(draws.filter { $0.share == index }.count) / 10_000
            #expect(abs(percent - share.weight) < 1.5, "\(share.scenario): \(percent) %")
        }
        let acs = draws.compactMap { $0.latencyMs[.accessControlServer] }.sorted()
        #expect((36...44).contains(acs[4_999]) && (340...470).contains(acs[9_899]), "p50 \(acs[4_999]) p99 \(acs[9_899])")
        let ds = draws.compactMap { $0.latencyMs[.directoryServer] }
        #expect(ds.min() == 5 && ds.max() == 15 && ds.count == 10_000)
        #expect(LoadMix(shares: [.init(scenario: "a", weight: 1)], seed: 1, latency: [.directoryServer: .fixed(20)]).draw(3).latencyMs == [.directoryServer: 20])
    }

    /// Each instance of a cluster draws its own sequence from the seed, the same one every time for the same instance.
    @Test func eachInstanceDrawsASequenceOfItsOwnFromTheSeed() {
        let first = (0..<200).map { Self.issueMix.draw(UInt64($0), instance: 1).share }
        #expect(first == (0..<200).map { Self.issueMix.draw(UInt64($0), instance: 1).share })
        #expect(first != (0..<200).map { Self.issueMix.draw(UInt64($0), instance: 2).share })
        #expect(first != (0..<200).map { Self.issueMix.draw(UInt64($0)).share })
    }

    @Test func aMixInForcePlaysItsScenariosWithTheirLatencyAndSaysWhatItDrew() async throws {
        try await withHarness { harness in
            let body = #"{"seed": 3, "mix": [{"scenario": "frictionless-y", "weight": 1}, {"scenario": "frictionless-n", "weight": 1}], "latency": {"ds": {"fixedMs": 20}}}"#
            let started = try await harness.post("/admin/load-mix", Array(body.utf8))
            #expect(started.status == .created, "\(started.bodyText)")
            var statuses: [String: Int] = [:]
            for _ in 0..<20 {
                let ares = try await harness.postMessage("/ds/areq", try appAReq(pan: "4111111111111111"))  // a card no scenario names
                statuses[ares["transStatus"]?.stringValue ?? "none", default: 0] += 1
            }
            // A card a scenario names keeps its scenario (frictionless-a's).
            #expect(try await harness.postMessage("/ds/areq", try appAReq(pan: "4000000000002008"))["transStatus"]?.stringValue == "A")
            let summary = try JSONReader.parse(try await harness.get("/admin/load-mix").body).value
            let drawn = summary["byScenario"]
            #expect(summary["drawn"]?.numberText == "20", "\(JSONWriter.string(summary))")
            #expect(drawn?["frictionless-y"]?.numberText == String(statuses["Y", default: 0]) && drawn?["frictionless-n"]?.numberText == String(statuses["N", default: 0]),
                    "\(statuses) \(JSONWriter.string(summary))")
            #expect(summary["latencyAdded"]?["ds"]?["count"]?.numberText == "20" && summary["latencyAdded"]?["ds"]?["p50Ms"]?.numberText == "20")
            let metrics = try await harness.get("/metrics").bodyText
            #expect(metrics.contains(#"threeds_load_mix_drawn_transactions{team="",scenario="frictionless-n"} \#(statuses["N", default: 0])"#), "\(metrics.suffix(1500))")
            #expect(metrics.contains(#"threeds_load_latency_added_seconds{team="",leg="ds",quantile="0.5"} 0.02"#))
            // Ended: the card plays its own scenario again (the default, Y), and the summary was the mix's last.
            let ended = try JSONReader.parse(try await harness.client.execute(HTTPRequest(method: .delete, target: "/admin/load-mix"), url: harness.baseURL + "/admin/load-mix").body).value
            #expect(ended["drawn"]?.numberText == "20" && ended["active"] == .bool(true))
            for _ in 0..<3 { #expect(try await harness.postMessage("/ds/areq", try appAReq(pan: "4111111111111111"))["transStatus"]?.stringValue == "Y") }
            #expect(try JSONReader.parse(try await harness.get("/admin/load-mix").body).value["active"] == .bool(false))
            // Nothing in force: the gauges say 0, not the last mix's counts; the counter of every mix's draws keeps them, by scope.
            let after = try await harness.get("/metrics").bodyText
            #expect(after.contains(#"threeds_load_mix_drawn_transactions{team="",scenario="frictionless-n"} 0"#))
            #expect(after.contains(#"threeds_load_mix_draws_total{team="",scope="default",scenario="frictionless-n"} \#(statuses["N", default: 0])"#), "\(after.suffix(1500))")
        }
    }

    @Test(arguments: [
        (#"{"mix": []}"#, "1-64 scenarios"),
        (#"{"mix": [{"scenario": "no-such", "weight": 1}]}"#, "must name a scenario"),
        (#"{"mix": [{"scenario": "frictionless-y", "weight": 0}]}"#, "more than 0"),
        (#"{"mix": [{"scenario": "frictionless-y", "weight": 1}], "seed": -1}"#, "seed"),
        (#"{"mix": [{"scenario": "frictionless-y", "weight": 1}], "cardRange": {"start": "41", "end": "42"}}"#, "cardRange"),
        (#"{"mix": [{"scenario": "frictionless-y", "weight": 1}], "latency": {"sdk": {"fixedMs": 1}}}"#, "the legs are ds and acs"),
        (#"{"mix": [{"scenario": "frictionless-y", "weight": 1}], "latency": {"acs": {"p50Ms": 50, "p99Ms": 10}}}"#, "p50"),
        (#"{"mix": [{"scenario": "frictionless-y", "weight": 1}], "latency": {"acs": {"fixedMs": 700000}}}"#, "0-600000"),
        (#"{"mix": [{"scenario": "challenge-text", "weight": 1}], "challengeTimeoutSeconds": 0}"#, "1-600 seconds"),
    ])
    func aBadMixIsRefusedSayingWhy(_ body: String, _ reason: String) async throws {
        try await withHarness { harness in
            let refused = try await harness.post("/admin/load-mix", Array(body.utf8))
            #expect(refused.status == .badRequest && refused.bodyText.contains(reason), "\(refused.bodyText)")
        }
    }

    /// A mix without a card range draws for the cards no scenario names only: not for the default scenario's own test
    /// card, and never for a transaction tagged for a test run (its case is graded on the card's scenario).
    @Test func aMixLeavesTheScenarioCardsAndTheTransactionsOfATestRunAlone() async throws {
        try await withHarness { harness in
            let body = #"{"seed": 5, "mix": [{"scenario": "frictionless-n", "weight": 1}]}"#
            #expect(try await harness.post("/admin/load-mix", Array(body.utf8)).status == .created)
            // frictionless-y, the default scenario, names 4000000000001000.
            #expect(try await harness.postMessage("/ds/areq", try appAReq(pan: "4000000000001000"))["transStatus"]?.stringValue == "Y")
            #expect(try await harness.postMessage("/ds/areq", try appAReq(pan: "4111111111111111"))["transStatus"]?.stringValue == "N")
            let tagged = try await harness.client.post(harness.baseURL + "/ds/areq", body: JSONWriter.write(try appAReq(pan: "4111111111111111")),
                                                       headers: ["X-Harness-Case": "some-run"])
            #expect(try JSONReader.parse(tagged.body).value["transStatus"]?.stringValue == "Y", "\(tagged.bodyText)")
            #expect(try JSONReader.parse(try await harness.get("/admin/load-mix").body).value["drawn"]?.numberText == "1")
        }
    }

    @Test func aMixForACardRangePlaysForItsCardsOnly() async throws {
        try await withHarness { harness in
            let body = #"{"mix": [{"scenario": "frictionless-n", "weight": 1}], "cardRange": {"start": "4111111111111000", "end": "4111111111111999"}, "latency": {"acs": {"fixedMs": 150}}}"#
            let started = try await harness.post("/admin/load-mix", Array(body.utf8))
            #expect(started.status == .created, "\(started.bodyText)")
            // The ACS's answer waits its latency: the AReq takes at least that (a lower bound, not a timing).
            let sent = ContinuousClock.now
            #expect(try await harness.postMessage("/ds/areq", try appAReq(pan: "4111111111111111"))["transStatus"]?.stringValue == "N")
            #expect(ContinuousClock.now - sent >= .milliseconds(150))
            #expect(try await harness.postMessage("/ds/areq", try appAReq(pan: "4222222222222222"))["transStatus"]?.stringValue == "Y")
            let metrics = try await harness.get("/metrics").bodyText
            #expect(metrics.contains(#"threeds_load_mix_draws_total{team="",scope="4111111111111000-4111111111111999",scenario="frictionless-n"} 1"#), "\(metrics.suffix(1500))")
        }
    }

    /// A load generator leaves the challenges it draws unanswered: they end at the mix's own time limit
    /// (`challengeTimeoutSeconds`) rather than the ACS's ten minutes, and all at once when the mix ends; a challenge the
    /// mix did not draw stays open.
    @Test func aMixsChallengesEndAtItsTimeLimitAndWhenItEnds() async throws {
        try await withHarness { harness in
            func phases() async throws -> [String: String] {
                let listed = try JSONReader.parse(try await harness.get("/admin/acs/transactions?limit=50").body).value
                return Dictionary((listed["transactions"]?.arrayValue ?? []).compactMap { record in
                    record["acsTransID"]?.stringValue.map { ($0, record["phase"]?.stringValue ?? "") }
                }, uniquingKeysWith: { first, _ in first })
            }
            func challenge(_ pan: String) async throws -> String {
                let ares = try await harness.postMessage("/ds/areq", try appAReq(pan: pan))
                #expect(ares["transStatus"]?.stringValue == "C", "\(ares)")
                return try #require(ares["acsTransID"]?.stringValue)
            }
            func awaitEnded(_ ids: [String], within limit: Duration) async throws -> Bool {
                let deadline = ContinuousClock.now + limit
                while ContinuousClock.now < deadline {
                    let now = try await phases()
                    if ids.allSatisfy({ now[$0] == "ended" }) { return true }
                    try await Task.sleep(for: .milliseconds(50))
                }
                return false
            }
            let short = #"{"mix": [{"scenario": "challenge-text", "weight": 1}], "challengeTimeoutSeconds": 1}"#
            let started = try await harness.post("/admin/load-mix", Array(short.utf8))
            #expect(started.status == .created && started.bodyText.contains(#""challengeTimeoutSeconds":1"#), "\(started.bodyText)")
            let drawn = try await challenge("4111111111111111")
            let endedInTime = try await awaitEnded([drawn], within: .seconds(20))
            #expect(endedInTime, "the mix's challenge outlived its 1 s limit")

            let long = #"{"mix": [{"scenario": "challenge-text", "weight": 1}]}"#
            #expect(try await harness.post("/admin/load-mix", Array(long.utf8)).status == .created)
            var open: [String] = []
            for _ in 0..<3 { open.append(try await challenge("4111111111111111")) }
            let scripted = try await challenge("4000000000110009")  // challenge-text's own card: not the mix's
            let ended = try JSONReader.parse(try await harness.client.execute(HTTPRequest(method: .delete, target: "/admin/load-mix"),
                                                                              url: harness.baseURL + "/admin/load-mix").body).value
            #expect(ended["challengesEnded"]?.numberText == "3", "\(ended)")
            let allEnded = try await awaitEnded(open, within: .seconds(20))
            let now = try await phases()
            #expect(allEnded, "\(now)")
            #expect(try await phases()[scripted] == "challenge")
        }
    }
}
