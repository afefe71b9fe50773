public import Faults
import Foundation
import Synchronization

/// A load test's mix: the scenarios the cards of a range (or the cards no scenario names) play, by
/// weight, with a latency drawn per leg: e.g. 80 % frictionless Y, 10 % a text challenge, 5 % N,
/// 3 % a DS Erro, 2 % an ACS timeout, the ACS answering in 40 ms at the median and 400 ms at p99.
/// Deterministic under its seed: the n-th transaction drawn gets the same scenario and latencies
/// in every run with the same seed.
public struct LoadMix: Sendable {
    public struct Share: Sendable, Equatable {
        public let scenario: String
        public let weight: Double
        public init(scenario: String, weight: Double) {
            self.scenario = scenario
            self.weight = weight
        }
    }

    public let shares: [Share]
    public let seed: UInt64
    /// The cards the mix plays for, by bounds of equal length; nil: the cards whose scenario is the default one.
    public let cardRange: (start: String, end: String)?
    /// The latency added to the answer on each leg that has one: `ds` (the DS's ARes to the 3DS Server) and `acs` (the ACS's to the DS).
    public let latency: [FaultLeg: LatencyDistribution]
    /// The time limit, in seconds, of the challenges the mix draws (nil: the ACS's): a load generator that leaves them
    /// unanswered leaves no timers for ten minutes.
    public let challengeTimeout: Double?
    /// What the mix plays for, as the metrics label its draws: its card range ("4111111111111000-4111111111111999"), or
    /// "default" for the cards whose scenario is the default one.
    public var scope: String { cardRange.map { "\($0.start)-\($0.end)" } ?? "default" }

    /// The bounds of ``challengeTimeout``: the ACS's own limit is at most ten minutes.
    public static let challengeTimeouts: ClosedRange<Double> = 1...600

    /// The legs a latency can be added on: the two answers of an authentication.
    public static let latencyLegs: [FaultLeg] = [.directoryServer, .accessControlServer]
    /// At most this many scenarios in a mix.
    public static let maxShares = 64

    public init(shares: [Share], seed: UInt64, cardRange: (start: String, end: String)? = nil,
                latency: [FaultLeg: LatencyDistribution] = [:], challengeTimeout: Double? = nil) {
        self.shares = shares
        self.seed = seed
        self.cardRange = cardRange
        self.latency = latency
        self.challengeTimeout = challengeTimeout
    }

    /// What the `index`th transaction an instance draws plays: a share's scenario, and the milliseconds added per leg.
    /// `instance` is mixed into the seed (0: one instance alone), so that each instance of a cluster has its own sequence.
    public func draw(_ index: UInt64, instance: UInt64 = 0) -> (share: Int, latencyMs: [FaultLeg: Int]) {
        let seed = seed ^ instance
        let total = shares.reduce(0) { $0 + $1.weight }
        var point = Self.unit(seed, index, 0) * total
        var share = shares.count - 1
        for (offset, candidate) in shares.enumerated() {
            if point < candidate.weight { share = offset; break }
            point -= candidate.weight
        }
        var latencyMs: [FaultLeg: Int] = [:]
        for (number, leg) in Self.latencyLegs.enumerated() {
            guard let distribution = latency[leg] else { continue }
            latencyMs[leg] = distribution.sample(Self.unit(seed, index, UInt64(1 + 2 * number)), Self.unit(seed, index, UInt64(2 + 2 * number)))
        }
        return (share, latencyMs)
    }

    /// A uniform number in [0, 1) for draw `index`'s `stream`: SplitMix64 of the three, so that any
    /// index can be drawn without the ones before it.
    static func unit(_ seed: UInt64, _ index: UInt64, _ stream: UInt64) -> Double {
        var z = seed &+ index &* 0x9E37_79B9_7F4A_7C15 &+ stream &* 0xD1B5_4A32_D192_ED03
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) * 0x1p-53
    }
}

/// What the DS drew for a transaction, passed to the ACS with the AReq it relays (``header``): the two roles of one
/// transaction play one draw, counted once, on whichever instances of a cluster they run; and a test run's transaction,
/// which the DS does not draw for, is not drawn for at the ACS either (the DS alone reads the run's header).
public enum LoadMixDraw: Sendable, Equatable {
    /// Draw `index` of the sequence of the instance `instance` (``LoadMix/draw(_:instance:)``).
    case drawn(index: UInt64, instance: UInt64)
    /// Nothing drawn: no mix for the card, a pin or a run's card, or a run's transaction.
    case none

    public static let header = "X-Harness-Load-Mix-Draw"

    /// As the header carries it: "index:instance" or "none".
    public var headerValue: String {
        switch self {
        case .drawn(let index, let instance): "\(index):\(instance)"
        case .none: "none"
        }
    }

    public init?(headerValue: String) {
        if headerValue == "none" { self = .none; return }
        let parts = headerValue.split(separator: ":")
        guard parts.count == 2, let index = UInt64(parts[0]), let instance = UInt64(parts[1]) else { return nil }
        self = .drawn(index: index, instance: instance)
    }
}

/// How a leg's added latency is spread, in milliseconds.
public enum LatencyDistribution: Sendable, Equatable {
    case fixed(Int)
    case uniform(min: Int, max: Int)
    /// Log-normal through the two percentiles: what response times look like (a long right tail).
    case percentiles(p50: Int, p99: Int)

    /// The most a leg waits: what a `latency` fault allows.
    public static let maxMs = 600_000

    /// A sample from two uniform numbers in [0, 1).
    func sample(_ u1: Double, _ u2: Double) -> Int {
        let value: Double = switch self {
        case .fixed(let milliseconds): Double(milliseconds)
        case .uniform(let low, let high): Double(low) + u1 * Double(high - low + 1)
        case .percentiles(let p50, let p99):
            // Box-Muller's normal z; z at p99 is 2.3263.
            exp(log(Double(p50)) + (log(Double(p99)) - log(Double(p50))) / 2.326_347_874 * sqrt(-2 * log(1 - u1)) * cos(2 * .pi * u2))
        }
        return min(Self.maxMs, max(0, Int(value)))
    }
}

/// The mixes in force, one per team at most (and one for the transactions of no team), and what each has drawn:
/// `POST`, `GET` and `DELETE /admin/load-mix`. A team's transactions are drawn by its own mix alone.
public final class LoadMixBoard: Sendable {
    private struct State {
        var mix: LoadMix?
        var drawn: UInt64 = 0
        var byScenario: [String: Int] = [:]
        /// The newest latencies added per leg (a ring of `kept`): what the summary's percentiles read.
        var recent: [FaultLeg: [Int]] = [:]
        var recentNext: [FaultLeg: Int] = [:]
    }

    private struct Boards {
        /// By team; nil: the mix of the transactions of no team.
        var byTeam: [String?: State] = [:]
        /// Every draw since start, by team, scope of its mix and scenario: kept across mixes, for counters.
        var totals: [DrawSeries: UInt64] = [:]
    }

    /// A series of draws: the team of the mix ("" for none), its scope (``LoadMix/scope``) and the scenario drawn.
    public struct DrawSeries: Hashable, Sendable {
        public let team, scope, scenario: String
    }

    private let state = Mutex(Boards())
    static let kept = 10_000
    /// Mixed into the seed: in a cluster each instance draws a sequence of its own (else every instance would draw the
    /// same one, and consecutive outcomes through a round-robin balancer would come in threes).
    private let instance = Mutex<UInt64>(0)

    public init() {}

    /// Draws as the instance `name` (its URL) from here on: the same name, the same sequence under a seed.
    public func draw(as name: String) {
        // FNV-1a: the same number in every process (Swift's Hasher is seeded anew at each start).
        let value = name.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
        instance.withLock { $0 = value }
    }

    /// Puts `mix` in force for `team`'s transactions (nil: those of no team), counting anew from its first draw.
    public func start(_ mix: LoadMix, team: String? = nil) { state.withLock { $0.byTeam[team] = State(mix: mix) } }

    /// Ends `team`'s mix; what it drew, as the summary gives it.
    public func stop(team: String? = nil) -> Summary {
        state.withLock { boards in
            defer { boards.byTeam[team] = nil }
            return Self.summary(boards.byTeam[team] ?? State(), totals: boards.totals)
        }
    }

    /// Forgets `team`: its mix ends and its draws leave the totals (its reset: the counters of a team no longer in use go).
    public func forget(team: String) {
        state.withLock { boards in
            boards.byTeam[team] = nil
            boards.totals = boards.totals.filter { $0.key.team != team }
        }
    }

    /// The scenario the mix gives a transaction on `pan` whose scripted scenario is `scripted`: one drawn (and counted),
    /// or the one of the draw `given` (the DS's, counted where it was drawn), with the leg latencies as `latency` faults;
    /// nil when no mix is in force, the card is not the mix's, or `given` is ``LoadMixDraw/none``.
    func scenario(pan: String, team: String? = nil, scripted: Scenario, catalog: ScenarioCatalog,
                  given: LoadMixDraw? = nil) -> (scenario: Scenario, draw: LoadMixDraw)? {
        state.withLock { boards -> (scenario: Scenario, draw: LoadMixDraw)? in
            // Nearly always no mix at all: nothing to look up.
            guard !boards.byTeam.isEmpty, given != LoadMixDraw.none, var state = boards.byTeam[team], let mix = state.mix else { return nil }
            // Out of the table while it changes, so that its ring of latencies is not copied on write at every draw.
            boards.byTeam[team] = nil
            defer { boards.byTeam[team] = state }
            if let range = mix.cardRange {
                guard pan.count == range.start.count, range.start <= pan, pan <= range.end else { return nil }
            } else if scripted.name != catalog.fallback.name || catalog.names(pan: pan) {
                // The default scenario's own test card is a scenario's card like any other.
                return nil
            }
            let draw: (index: UInt64, instance: UInt64)
            if case .drawn(let index, let instance)? = given { draw = (index, instance) } else { draw = (state.drawn, instance.withLock { $0 }) }
            let (share, latencyMs) = mix.draw(draw.index, instance: draw.instance)
            guard var scenario = catalog.scenario(named: mix.shares[share].scenario) else { return nil }  // reloaded away
            scenario.challengeTimeout = mix.challengeTimeout
            let counted = given == nil
            if counted {
                state.drawn += 1
                state.byScenario[scenario.name, default: 0] += 1
                boards.totals[DrawSeries(team: team ?? "", scope: mix.scope, scenario: scenario.name), default: 0] += 1
            }
            for (leg, milliseconds) in latencyMs.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                scenario.faults.append(FaultInjection(.latency(milliseconds: milliseconds), on: leg))
                guard counted else { continue }
                let at = state.recentNext[leg, default: 0]
                if state.recent[leg, default: []].count < Self.kept { state.recent[leg, default: []].append(milliseconds) } else { state.recent[leg]?[at] = milliseconds }
                state.recentNext[leg] = (at + 1) % Self.kept
            }
            return (scenario, .drawn(index: draw.index, instance: draw.instance))
        }
    }

    /// What `team`'s mix in force has drawn.
    public func summary(team: String? = nil) -> Summary { state.withLock { Self.summary($0.byTeam[team] ?? State(), totals: $0.totals) } }

    /// The summary of no team's mix and of each team's mix in force, for the gauges of each.
    public func summaries() -> [(team: String?, summary: Summary)] {
        state.withLock { boards in
            let teams = [nil] + boards.byTeam.keys.compactMap { $0 }.sorted()
            return teams.map { team in (team, Self.summary(boards.byTeam[team] ?? State(), totals: boards.totals)) }
        }
    }

    public struct Summary: Sendable {
        public let mix: LoadMix?
        public let drawn: UInt64
        public let byScenario: [String: Int]
        /// Per leg: how many of the newest latencies are counted, their median and 99th percentile (ms).
        public let latency: [FaultLeg: (count: Int, p50: Int, p99: Int)]
        /// Every draw since start, of every mix of every team, by team, scope and scenario.
        public let totals: [DrawSeries: UInt64]
    }

    private static func summary(_ state: State, totals: [DrawSeries: UInt64]) -> Summary {
        let latency = state.recent.mapValues { samples -> (count: Int, p50: Int, p99: Int) in
            let sorted = samples.sorted()
            func percentile(_ p: Double) -> Int { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)] }
            return (sorted.count, percentile(0.5), percentile(0.99))
        }
        return Summary(mix: state.mix, drawn: state.drawn, byScenario: state.byScenario, latency: latency, totals: totals)
    }
}
