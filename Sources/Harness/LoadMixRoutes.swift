import Faults
import JSON
import Messaging
import Net
import Scenarios

/// `/admin/load-mix`: a load test's weighted scenarios and leg latencies (docs/load-test.md).
/// `POST` puts a mix in force (counting anew), `GET` says what it has drawn, `DELETE` ends it: each the mix of the
/// request's team (`X-Harness-Team` or `/teams/{team}`), which draws that team's transactions alone, or of no team.
struct LoadMixRoutes {
    let scenarios: ScenarioSource
    /// Ends the open challenges a team's mix drew (nil: the mix of no team), as at their time limit; the number ended.
    let endChallenges: @Sendable (_ team: String?) -> Int

    func register(on router: inout Router) {
        router.post("/admin/load-mix") { request, _ in
            guard request.body.count <= 16 * 1024 else { throw HTTPError(.payloadTooLarge, "a load mix is at most 16 KiB") }
            let team = try request.team()
            let mix = try Self.mix(try request.jsonBody(), catalog: scenarios.catalog)
            scenarios.loadMix.start(mix, team: team)
            return .emv(Self.json(scenarios.loadMix.summary(team: team), team: team), status: .created)
        }
        router.get("/admin/load-mix") { request, _ in
            let team = try request.team()
            return .emv(Self.json(scenarios.loadMix.summary(team: team), team: team))
        }
        router.delete("/admin/load-mix") { request, _ in .emv(stop(team: try request.team())) }
    }

    /// Ends `team`'s mix: its summary, with `challengesEnded`. A load test leaves no challenge open behind it: those its
    /// generator left unanswered end now, not at their limit.
    func stop(team: String?) -> JSONValue {
        var summary = Self.json(scenarios.loadMix.stop(team: team), team: team)
        summary.set("challengesEnded", .number(String(endChallenges(team))))
        return summary
    }

    /// The mix of a `POST` body, or 400 naming what is wrong.
    static func mix(_ json: JSONValue, catalog: ScenarioCatalog) throws(HTTPError) -> LoadMix {
        guard let entries = json["mix"]?.arrayValue, (1...LoadMix.maxShares).contains(entries.count) else {
            throw HTTPError(.badRequest, "mix must list 1-\(LoadMix.maxShares) scenarios: [{\"scenario\": \"frictionless-y\", \"weight\": 80}, …]")
        }
        var shares: [LoadMix.Share] = []
        for (index, entry) in entries.enumerated() {
            guard let name = entry["scenario"]?.stringValue, catalog.scenario(named: name) != nil else {
                throw HTTPError(.badRequest, "mix[\(index)].scenario must name a scenario (GET /admin/scenarios lists them)")
            }
            guard let weight = entry["weight"]?.numberText.flatMap(Double.init), weight.isFinite, weight > 0, weight <= 1_000_000 else {
                throw HTTPError(.badRequest, "mix[\(index)].weight must be a number more than 0 (weights are relative: 80, 10, 5…)")
            }
            shares.append(LoadMix.Share(scenario: name, weight: weight))
        }
        var seed: UInt64 = 1
        if let value = json["seed"] {
            guard let parsed = value.numberText.flatMap({ UInt64($0) }) else { throw HTTPError(.badRequest, "seed must be a whole number, 0 or more") }
            seed = parsed
        }
        var cardRange: (start: String, end: String)?
        if let range = json["cardRange"] {
            guard let start = range["start"]?.stringValue, let end = range["end"]?.stringValue, start.count == end.count,
                  (13...19).contains(start.count), (start + end).allSatisfy({ ("0"..."9").contains($0) }), start <= end else {
                throw HTTPError(.badRequest, "cardRange must be {\"start\", \"end\"}: card numbers of one length (13-19 digits), start first")
            }
            cardRange = (start, end)
        }
        var latency: [FaultLeg: LatencyDistribution] = [:]
        if let legs = json["latency"]?.objectMembers {
            for (name, value) in legs {
                guard let leg = FaultLeg(rawValue: name), LoadMix.latencyLegs.contains(leg) else {
                    throw HTTPError(.badRequest, "latency.\(name): the legs are \(LoadMix.latencyLegs.map(\.rawValue).joined(separator: " and "))")
                }
                latency[leg] = try distribution(value, key: "latency.\(name)")
            }
        }
        var challengeTimeout: Double?
        if let value = json["challengeTimeoutSeconds"] {
            guard let seconds = value.numberText.flatMap({ Int($0) }).map(Double.init), LoadMix.challengeTimeouts.contains(seconds) else {
                throw HTTPError(.badRequest, "challengeTimeoutSeconds must be \(Int(LoadMix.challengeTimeouts.lowerBound))-\(Int(LoadMix.challengeTimeouts.upperBound)) seconds")
            }
            challengeTimeout = seconds
        }
        return LoadMix(shares: shares, seed: seed, cardRange: cardRange, latency: latency, challengeTimeout: challengeTimeout)
    }

    /// `{"fixedMs": 5}`, `{"minMs": 5, "maxMs": 50}` or `{"p50Ms": 40, "p99Ms": 400}`.
    private static func distribution(_ json: JSONValue, key: String) throws(HTTPError) -> LatencyDistribution {
        func milliseconds(_ name: String) throws(HTTPError) -> Int? {
            guard let value = json[name] else { return nil }
            guard let number = value.numberText.flatMap({ Int($0) }), (0...LatencyDistribution.maxMs).contains(number) else {
                throw HTTPError(.badRequest, "\(key).\(name) must be whole milliseconds, 0-\(LatencyDistribution.maxMs)")
            }
            return number
        }
        switch (try milliseconds("fixedMs"), try milliseconds("minMs"), try milliseconds("maxMs"), try milliseconds("p50Ms"), try milliseconds("p99Ms")) {
        case (let fixed?, nil, nil, nil, nil): return .fixed(fixed)
        case (nil, let low?, let high?, nil, nil) where low <= high: return .uniform(min: low, max: high)
        case (nil, nil, nil, let p50?, let p99?) where 0 < p50 && p50 <= p99: return .percentiles(p50: p50, p99: p99)
        default:
            throw HTTPError(.badRequest, "\(key) must be {\"fixedMs\"}, {\"minMs\", \"maxMs\"} (min ≤ max) or {\"p50Ms\", \"p99Ms\"} (0 < p50 ≤ p99)")
        }
    }

    static func json(_ summary: LoadMixBoard.Summary, team: String?) -> JSONValue {
        func number(_ value: some BinaryInteger) -> JSONValue { .number(String(value)) }
        func distribution(_ value: LatencyDistribution) -> JSONValue {
            switch value {
            case .fixed(let milliseconds): .object([("fixedMs", number(milliseconds))])
            case .uniform(let low, let high): .object([("minMs", number(low)), ("maxMs", number(high))])
            case .percentiles(let p50, let p99): .object([("p50Ms", number(p50)), ("p99Ms", number(p99))])
            }
        }
        let mix = summary.mix
        return .object(omittingAbsent: [
            ("active", .bool(mix != nil)),
            ("team", .string(team)),
            ("seed", mix.map { number($0.seed) }),
            ("mix", mix.map { .array($0.shares.map { .object([("scenario", .string($0.scenario)), ("weight", .number(String($0.weight)))]) }) }),
            ("cardRange", mix?.cardRange.map { .object([("start", .string($0.start)), ("end", .string($0.end))]) }),
            ("latency", mix.map { mix in .object(LoadMix.latencyLegs.compactMap { leg in mix.latency[leg].map { (leg.rawValue, distribution($0)) } }) }),
            ("challengeTimeoutSeconds", mix?.challengeTimeout.map { .number(String(Int($0))) }),
            ("drawn", number(summary.drawn)),
            ("byScenario", .object(summary.byScenario.sorted { $0.key < $1.key }.map { ($0.key, number($0.value)) })),
            ("latencyAdded", .object(LoadMix.latencyLegs.compactMap { leg in
                summary.latency[leg].map { (leg.rawValue, .object([("count", number($0.count)), ("p50Ms", number($0.p50)), ("p99Ms", number($0.p99))])) }
            })),
        ])
    }
}
