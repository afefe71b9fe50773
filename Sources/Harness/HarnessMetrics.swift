public import Cluster
import EMV3DS
import Faults
import Messaging
public import Net
import Prometheus
public import Scenarios
public import Store
import Synchronization

/// The harness's Prometheus metrics at `GET /metrics`: every answer the server gives
/// (by route and status, with its latency), every EMV message a role answers (by type and
/// outcome), every Erro (by code), open connections, and the transactions each role keeps.
///
/// Label values come from bounded sets only: route patterns (never raw paths), status codes,
/// message types, `transStatus` letters, error codes.
public final class HarnessMetrics: HTTPServerObserver, ClusterMetrics {
    private let registry: PrometheusCollectorRegistry
    private let openConnections: Gauge
    private let acceptedConnections: Counter
    /// The registry finds a series by validating and hashing its name and labels; these find it
    /// by one small key, under one lock held for a dictionary look-up (a lock the loops share:
    /// held for a look-up only). An answer's counter and its route's latency histogram are found
    /// together, one look-up per answer.
    private let requests: SeriesCache<RequestSeries, (count: Counter, latency: DurationHistogram)>
    private let messages: SeriesCache<MessageSeries, Counter>
    private let erros: SeriesCache<ErroSeries, Counter>
    private let stored: SeriesCache<String, Gauge>
    private let archived: SeriesCache<String, Gauge>
    private let archivePending: Gauge
    private let storeUp: Gauge
    private let ready: Gauge
    private let loadDrawn: SeriesCache<LoadDrawnSeries, Gauge>
    private let loadLatency: SeriesCache<LoadLatencySeries, Gauge>
    private let loadDraws: SeriesCache<LoadMixBoard.DrawSeries, Counter>
    private let passed: SeriesCache<PassedOnSeries, Counter>
    /// The load-mix series, written by a scrape from the boards and dropped by a team's reset under this one lock: a reset
    /// that came between a scrape's reading of the boards and its writing of the series would bring the team's back.
    private let loadSeries = Mutex(LoadSeries())

    private struct LoadSeries {
        /// The scenarios and legs a team's load mix has shown: a later mix, or none, sets theirs to 0 rather than leave them stale.
        var scenarios: Set<LoadDrawnSeries> = []
        var legs: Set<LoadLegSeries> = []
        /// What ``HarnessMetrics/loadDraws`` has counted of the board's totals: a scrape adds what came since.
        var counted: [LoadMixBoard.DrawSeries: UInt64] = [:]
    }

    /// Upper bounds of the latency buckets: a frictionless AReq takes about a millisecond, a
    /// scripted `latency` fault or a slow peer up to the roles' timeouts.
    static let latencyBuckets: [Duration] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
        .map { Duration.microseconds(Int64($0 * 1_000_000)) }

    public init(version: String) {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        registry.makeGauge(descriptor: Self.name("build", "info", "The harness version, as a label; always 1"), labels: [("version", version)]).set(to: 1)
        openConnections = registry.makeGauge(descriptor: Self.name("http_open", "connections", "HTTP connections open now, plain and TLS"))
        acceptedConnections = registry.makeCounter(descriptor: Self.name("http_connections", "total", "HTTP connections accepted since start, plain and TLS"))
        let latencies = SeriesCache<String, DurationHistogram> { route in
            registry.makeDurationHistogram(descriptor: Self.name("http_request_duration", "seconds", "Time from a request's dispatch to its answer, by route"), labels: [("route", route)], buckets: Self.latencyBuckets)
        }
        requests = SeriesCache { key in
            (registry.makeCounter(descriptor: Self.name("http_requests", "total", "HTTP requests answered, by route (as registered), method and status"),
                                  labels: [("route", key.route), ("method", key.method?.rawValue ?? ""), ("status", String(key.status))]),
             latencies[key.route])
        }
        messages = SeriesCache { key in
            registry.makeCounter(descriptor: Self.name("emv_messages", "total", "EMV messages each role received, by what it answered "
                                                  + "(empty for an Erro taken) and the answer's transStatus (empty when it has none)"), labels: [("role", key.role), ("received", key.received),
                                                                  ("answer", key.answer), ("transStatus", key.transStatus)])
        }
        erros = SeriesCache { key in
            registry.makeCounter(descriptor: Self.name("emv_erro", "total", "Erro messages each role received or sent, by error code"), labels: [("role", key.role), ("direction", key.direction), ("errorCode", key.code)])
        }
        // Gauges, not counters: the archive counts; these show its counts at the scrape.
        archived = SeriesCache { outcome in
            registry.makeGauge(descriptor: Self.name("archive", "records", "Records the durable store has written, lost (queue full, "
                                                     + "write failed) and removed (retention) since start"), labels: [("outcome", outcome)])
        }
        archivePending = registry.makeGauge(descriptor: Self.name("archive_pending", "records", "Records waiting to be written to the durable store"))
        storeUp = registry.makeGauge(descriptor: Self.name("store", "up", "1 when the durable store answered its last probe (every 5 s, and each "
                                                           + "GET /health/ready), 0 when it did not"))
        storeUp.set(to: 1)
        ready = registry.makeGauge(descriptor: Self.name("ready", "info", "1 when GET /health/ready answered 200 last, 0 when 503 (store down, "
                                                         + "changes not made yet, draining)"))
        ready.set(to: 1)
        loadDrawn = SeriesCache { key in
            registry.makeGauge(descriptor: Self.name("load_mix_drawn", "transactions", "Transactions the load mix in force of each team (empty "
                                                     + "for none) gave each scenario (a scenario of the catalog: a bounded set)"),
                               labels: [("team", key.team), ("scenario", key.scenario)])
        }
        loadLatency = SeriesCache { key in
            registry.makeGauge(descriptor: Self.name("load_latency_added", "seconds", "The latency the load mix of each team (empty for none) "
                                                     + "added on each leg: the median and 99th percentile of the newest 10,000"),
                               labels: [("team", key.team), ("leg", key.leg), ("quantile", key.quantile)])
        }
        loadDraws = SeriesCache { key in
            registry.makeCounter(descriptor: Self.name("load_mix_draws", "total", "Transactions every load mix since start drew, by the "
                                                       + "mix's team (empty for none), scope (its card range, or default) and the scenario drawn"),
                                 labels: [("team", key.team), ("scope", key.scope), ("scenario", key.scenario)])
        }
        passed = SeriesCache { key in
            registry.makeCounter(descriptor: Self.name("cluster_passed_on", "total", "Requests for a transaction another instance holds, by route "
                                                       + "and outcome: answered there, failed there (passed on), served here as that instance could not be reached, or "
                                                       + "answered 503 as the store could not say where it lives"),
                                 labels: [("route", key.route), ("outcome", key.outcome)])
        }
        stored = SeriesCache { role in
            registry.makeGauge(descriptor: Self.name("store", "transactions", "Transactions each role keeps in memory now"), labels: [("role", role)])
        }
    }

    private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "threeds", metricName: metric, unitName: unit, helpText: help)
    }

    public func connectionOpened() {
        openConnections.increment()
        acceptedConnections.increment()
    }
    public func connectionClosed() { openConnections.decrement() }

    public func answered(_ answer: AnsweredRequest) {
        let series = requests[RequestSeries(route: answer.route, method: answer.method, status: answer.status.code)]
        series.count.increment()
        if answer.route != AnsweredRequest.unparsed { series.latency.record(answer.duration) }
        guard let exchange = answer.annotation as? MessageExchange, let received = exchange.received else { return }
        let role = Self.role(of: answer.route)
        messages[MessageSeries(role: role, received: received.rawValue, answer: exchange.answered?.rawValue ?? "",
                               transStatus: exchange.transStatus.map { String($0.prefix(1)) } ?? "")].increment()
        if let code = exchange.errorCode {
            let direction = received == .erro ? "received" : "sent"
            erros[ErroSeries(role: role, direction: direction, code: code.rawValue)].increment()
        }
    }

    /// Names this instance of a cluster in its metrics: which one a scrape read, whatever address it was scraped at.
    public func setClusterInstance(_ url: String) {
        registry.makeGauge(descriptor: Self.name("cluster_instance", "info", "This instance of a cluster, as the others reach it "
                                                 + "(cluster.instanceURL); always 1"), labels: [("instance_url", url)]).set(to: 1)
    }

    /// What the store's probe found.
    func setStoreUp(_ up: Bool) { storeUp.set(to: up ? 1 : 0) }

    /// What readiness answered last.
    func setReady(_ isReady: Bool) { ready.set(to: isReady ? 1 : 0) }

    /// A request passed on to its transaction's home (the cluster's).
    public func passedOn(route: String, outcome: String) { passed[PassedOnSeries(route: route, outcome: outcome)].increment() }

    /// The text exposition format, with the gauges of what is kept read now and the series of each team's load mix on `loadMix`.
    public func exposition(storedTransactions: [(role: String, count: Int)], archive: ArchiveStatus?, loadMix: LoadMixBoard? = nil) -> [UInt8] {
        for (role, count) in storedTransactions { stored[role].set(Int64(count)) }
        if let loadMix { loadSeries.withLock { showLoadMixes(loadMix.summaries(), in: &$0) } }
        if let archive {
            for (outcome, count) in [("written", archive.written), ("lost", archive.lost), ("removed", archive.removed)] {
                archived[outcome].set(Int64(count))
            }
            archivePending.set(Int64(archive.pending))
        }
        return registry.emitToBuffer()
    }

    /// Sets the load-mix series to what `summaries` say, each series a mix has shown kept (at 0 once no mix draws it).
    private func showLoadMixes(_ summaries: [(team: String?, summary: LoadMixBoard.Summary)], in shown: inout LoadSeries) {
        let drawn = summaries.flatMap { team, summary in summary.byScenario.map { (LoadDrawnSeries(team: team ?? "", scenario: $0.key), $0.value) } }
        let legs = summaries.flatMap { team, summary in summary.latency.map { (LoadLegSeries(team: team ?? "", leg: $0.key.rawValue), $0.value) } }
        shown.scenarios.formUnion(drawn.map(\.0))
        shown.legs.formUnion(legs.map(\.0))
        let drawnNow = Dictionary(drawn, uniquingKeysWith: +), legsNow = Dictionary(legs, uniquingKeysWith: { first, _ in first })
        for series in shown.scenarios { loadDrawn[series].set(Int64(drawnNow[series] ?? 0)) }
        for series in shown.legs {
            loadLatency[LoadLatencySeries(team: series.team, leg: series.leg, quantile: "0.5")].set(Double(legsNow[series]?.p50 ?? 0) / 1000)
            loadLatency[LoadLatencySeries(team: series.team, leg: series.leg, quantile: "0.99")].set(Double(legsNow[series]?.p99 ?? 0) / 1000)
        }
        // Every summary carries the totals of every team's draws: counted once.
        for (series, total) in summaries.first?.summary.totals ?? [:] {
            let new = total - min(total, shown.counted[series, default: 0])
            shown.counted[series] = total
            if new > 0 { loadDraws[series].increment(by: Int64(new)) }
        }
    }

    /// Ends `team`'s draws on `loadMix` and drops its load-mix series, at its reset: a pipeline that names a team of its own
    /// (`ci-4711`) leaves no series behind, so they are as many as the teams in use rather than every team there ever was.
    public func forget(team: String, on loadMix: LoadMixBoard) {
        loadSeries.withLock { shown in
            loadMix.forget(team: team)
            shown.scenarios = shown.scenarios.filter { $0.team != team }
            shown.legs = shown.legs.filter { $0.team != team }
            shown.counted = shown.counted.filter { $0.key.team != team }
            for gauge in loadDrawn.remove(where: { $0.team == team }) + loadLatency.remove(where: { $0.team == team }) { registry.unregisterGauge(gauge) }
            for counter in loadDraws.remove(where: { $0.team == team }) { registry.unregisterCounter(counter) }
        }
    }

    /// The role an endpoint belongs to: its first path segment (`ds`, `acs`, `3ds-server`).
    static func role(of route: String) -> String {
        // The pattern's first segment ("/ds/areq": ds), read in place: this runs for every message answered.
        let path = route.utf8.first == UInt8(ascii: "/") ? route.utf8.dropFirst() : route.utf8[...]
        return String(Substring(path[..<(path.firstIndex(of: UInt8(ascii: "/")) ?? path.endIndex)]))
    }

    private struct RequestSeries: Hashable {
        let route: String
        let method: HTTPMethod?
        let status: Int
    }
    private struct MessageSeries: Hashable { let role, received, answer, transStatus: String }
    private struct ErroSeries: Hashable { let role, direction, code: String }
    private struct LoadDrawnSeries: Hashable, Sendable { let team, scenario: String }
    private struct LoadLegSeries: Hashable, Sendable { let team, leg: String }
    private struct LoadLatencySeries: Hashable { let team, leg, quantile: String }
    private struct PassedOnSeries: Hashable { let route, outcome: String }
}

/// The series of one metric family by a small key, made on first use.
private final class SeriesCache<Key: Hashable & Sendable, Series: Sendable>: Sendable {
    private let series = Mutex<[Key: Series]>([:])
    private let make: @Sendable (Key) -> Series

    init(_ make: @escaping @Sendable (Key) -> Series) { self.make = make }

    /// Takes the series of the keys `drop` names out of the cache: the caller unregisters them.
    func remove(where drop: (Key) -> Bool) -> [Series] {
        series.withLock { series in
            let dropped = series.filter { drop($0.key) }
            for key in dropped.keys { series[key] = nil }
            return Array(dropped.values)
        }
    }

    subscript(key: Key) -> Series {
        series.withLock { series in
            if let found = series[key] { return found }
            let made = make(key)
            series[key] = made
            return made
        }
    }
}
