import Foundation
import JSON
import Logging
import Net
import Store
import Synchronization

/// Whether this instance can serve a transaction now, apart from whether it lives: `GET /health` is liveness (the
/// process answers), `GET /health/ready` readiness, what a balancer checks. Ready when the durable store answers,
/// the changes the cluster made before this instance started are made, and the instance is not draining (it took
/// SIGTERM and stops after `server.drainSeconds`).
final class Readiness: Sendable {
    private struct State {
        var draining = false
        /// What the store's last probe found: nil when it answered.
        var storeProblem: String?
    }

    static let path = "/health/ready"
    /// How often the store is probed when nobody asks: the gauge and the log follow an outage by themselves.
    static let probeInterval = Duration.seconds(5)

    private let state = Mutex(State())
    private let archive: (any TransactionArchive)?
    private let changesMade: @Sendable () -> Bool
    private let metrics: HarnessMetrics
    private let logger: Logger

    init(archive: (any TransactionArchive)?, changesMade: @escaping @Sendable () -> Bool, metrics: HarnessMetrics, logger: Logger) {
        self.archive = archive
        self.changesMade = changesMade
        self.metrics = metrics
        self.logger = logger
    }

    /// SIGTERM: not ready from now on, so the balancer sends elsewhere while what is in flight finishes.
    func beginDrain() {
        state.withLock { $0.draining = true }
        metrics.setReady(false)
    }

    var isDraining: Bool { state.withLock { $0.draining } }

    /// Probes the store; a change is logged once and shown in `threeds_store_up`.
    @discardableResult
    func probeStore() async -> String? {
        guard let archive else { return nil }
        let problem = await archive.probe()
        let before = state.withLock { state -> String? in
            defer { state.storeProblem = problem }
            return state.storeProblem
        }
        metrics.setStoreUp(problem == nil)
        if let problem, before == nil {
            logger.error("the store does not answer: this instance is not ready", metadata: ["reason": "\(problem)", "readiness": "\(Self.path)"])
        } else if problem == nil, let before {
            logger.notice("the store answers again: this instance is ready", metadata: ["was": "\(before)"])
        }
        return problem
    }

    /// Why this instance is not ready; empty when it is.
    func reasons() async -> [String] {
        var reasons: [String] = []
        if isDraining { reasons.append("draining: the instance is stopping (SIGTERM); send new requests elsewhere") }
        if !changesMade() { reasons.append("starting: checking cluster.instanceURL, then making the changes the cluster made before this instance started") }
        if let problem = await probeStore() { reasons.append("store: \(problem)") }
        return reasons
    }

    func register(on router: inout Router) {
        router.get(Self.path) { [self] _, _ in
            let reasons = await reasons()
            metrics.setReady(reasons.isEmpty)
            let body = JSONValue.object(omittingAbsent: [("status", .string(reasons.isEmpty ? "ready" : "not ready")),
                                                         ("reasons", reasons.isEmpty ? nil : .array(reasons.map(JSONValue.string)))])
            return HTTPResponse(status: reasons.isEmpty ? .ok : .serviceUnavailable, headers: .json, body: JSONWriter.write(body))
        }
    }

    /// Probes the store every ``probeInterval`` until cancelled.
    func watch() -> Task<Void, Never>? {
        guard archive != nil else { return nil }
        return Task { [self] in
            while !Task.isCancelled {
                await probeStore()
                try? await Task.sleep(for: Self.probeInterval)
            }
        }
    }
}
