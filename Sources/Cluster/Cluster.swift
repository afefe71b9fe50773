public import EventLoops
import Foundation
public import Journal
public import Logging
public import Net
public import Runs
public import Scenarios
public import Store
import Synchronization

/// Several instances on one store, as one harness (docs/scale.md): requests passed on to their transaction's home,
/// changes spread to every instance and made by those started later, test runs across instances, and the background
/// work of a live instance (announcing itself, running the jobs of instances that died). The harness installs it
/// with one call, ``install(on:)``, once every role's routes are registered, and starts it once it listens.
public final class Cluster: Sendable {
    /// Runs a job of an instance that died (``ScheduledJob``: a decoupled result due, a challenge's time limit); false when
    /// it is not this instance's to run yet. The ACS's.
    public typealias JobRunner = @Sendable (ScheduledJob) async -> Bool

    /// The header a request passed on by another instance carries (its URL): its home serves it, whatever it finds.
    public static let forwardedHeader = "X-Harness-Forwarded-From"
    /// When a change was made (milliseconds since 1970), on a change made again by an instance started later: a pin lives
    /// as long as where it was set. Read only with ``forwardedHeader``, which the balancer removes.
    public static let changeMadeHeader = "X-Harness-Change-Made"

    /// The test runs of every instance: what the run routes ask about runs whose home is another instance.
    public let runs: ClusterRuns
    /// The store the instances share, as the roles' records and as the cluster's own tables.
    public let archive: any TransactionArchive
    public let store: any ClusterStore
    private let runJob: JobRunner
    private let localRuns: RunRegistry
    private let scenarios: ScenarioSource
    private let client: HTTPClient
    /// Asks other instances (and this one's `instanceURL`) what needs an answer within seconds.
    private let asking: HTTPClient
    private let probe = InstanceProbe()
    /// Whether the URL this instance started at answers as itself, asked once at ``start(at:server:)``.
    private let urlCheck = Mutex<Task<String?, Never>?>(nil)
    private let change: ClusterChange
    private let instanceURL = InstanceURL()
    private let credential: ClusterCredential
    private let metrics: any ClusterMetrics
    private let adminToken: String?
    private let logger: Logger
    /// Announces this instance and runs the jobs of instances that died, from ``start(at:server:)`` until ``shutdown()``.
    private let housekeeping = Mutex<Task<Void, Never>?>(nil)

    /// The cluster over `archive`, which must be a ``ClusterStore`` (PostgreSQL): nil otherwise. Becomes the journal's
    /// listener (runs attach transactions at their homes), and counts the scenarios' pins in the store.
    /// `runJob` runs the jobs of instances that died; `runBegun` is told when a run another instance began becomes known here;
    /// `journalRole` is the store's role of the records keyed as the journal is, by dsTransID (the DS's).
    public init?(archive: any TransactionArchive, runs: RunRegistry, journal: Journal, scenarios: ScenarioSource,
                 group: EventLoopGroup, tls: TLSConfiguration, adminToken: String?, metrics: any ClusterMetrics, logger: Logger,
                 journalRole: String, runJob: @escaping JobRunner, runBegun: @escaping @Sendable () -> Void) throws {
        guard let store = archive as? any ClusterStore else { return nil }
        guard let secret = store.clusterSecret() else { throw StartError.noSecret }
        credential = ClusterCredential(secret: secret)
        self.archive = archive
        self.store = store
        self.runJob = runJob
        self.localRuns = runs
        self.scenarios = scenarios
        self.metrics = metrics
        self.adminToken = adminToken
        self.logger = logger
        client = try HTTPClient(group: group, configuration: ClusterRoutes.passingOn(tls: tls))
        // An AReq waits for its run's home to attach it: asked with a short limit.
        let asking = try HTTPClient(group: group, configuration: HTTPClientConfiguration(tls: tls, readTimeoutMilliseconds: ClusterRuns.askTimeoutMilliseconds))
        self.asking = asking
        self.runs = ClusterRuns(local: runs, journal: journal, archive: archive, store: store, client: asking, instanceURL: instanceURL,
                                credential: credential, journalRole: journalRole, issuedCards: scenarios.issuedCards, adminToken: adminToken,
                                logger: logger, runBegun: runBegun)
        change = ClusterChange(store: store, client: client, instanceURL: instanceURL, credential: credential, applied: ClusterChange.Applied(),
                               logger: logger)
        self.runs.setChange(change)
        journal.setListener(self.runs)
        scenarios.shareCounts { await store.use($0, for: $1) }
    }

    /// The DS's card-range serials' epoch, the same for every instance of the store: nil for a store that is no cluster's.
    public static func cardRangeEpoch(_ archive: (any TransactionArchive)?) -> String? {
        (archive as? any ClusterStore)?.clusterEpoch()
    }

    /// What the roles share over `archive` with the other instances: ``SoleInstance`` for a store that is no cluster's.
    public static func sharedWork(_ archive: (any TransactionArchive)?, logger: Logger) -> any SharedWork {
        guard let store = archive as? any ClusterStore else { return SoleInstance() }
        return ClusterWork(store: store, logger: logger)
    }

    /// Registers the cluster's own routes, and puts passing on and spreading around the roles' and the runs' routes:
    /// after every route is registered.
    public func install(on router: inout Router) {
        probe.register(on: &router)
        runs.register(on: &router)
        change.register(on: &router)
        ClusterLoadMix(store: store, client: client, instanceURL: instanceURL, credential: credential, logger: logger).register(on: &router)
        ClusterRoutes(store: store, client: client, instanceURL: instanceURL, credential: credential, metrics: metrics,
                      logger: logger).register(on: &router)
        // Every request proves that another instance sent it, or is taken as an outside party's; then the admission before.
        let earlier = router.admission
        router.admission = { [credential] request in
            credential.admit(&request)
            earlier?(&request)
        }
    }

    /// True once the changes made before this instance started are made here too: not ready until then.
    public var changesMade: Bool { change.applied.replayed }

    /// Names this instance `url` (as the others reach it), then announces it, makes the changes kept from before it
    /// started, and runs the jobs of instances that died, until ``shutdown()``.
    public func start(at url: String, server: HTTPServer) {
        instanceURL.set(url)
        metrics.setClusterInstance(url)
        scenarios.loadMix.draw(as: url)
        store.setInstanceURL(url)
        let (store, change, runJob, token, logger) = (store, change, runJob, adminToken, logger)
        let (probe, asking) = (probe, asking)
        let check = Task { await probe.problem(with: url, client: asking) }
        urlCheck.withLock { $0 = check }
        housekeeping.withLock {
            $0 = Task {
                // Not announced at a URL that is not this instance's: the others would take it for a live instance there.
                if let problem = await check.value {
                    logger.critical("not joining the cluster: cluster.instanceURL \(url) \(problem)")
                    return
                }
                // Announced first, so that a change made meanwhile is spread here too (made once: by its id).
                await store.announce(url)
                await change.replay(on: server, adminToken: token)
                await ClusterHousekeeping.run(store, instanceURL: url, logger: logger, runner: runJob)
            }
        }
    }

    /// Why the URL this instance was started at (``start(at:server:)``) cannot be its `instanceURL`; nil when it answers there
    /// as itself.
    public func instanceURLProblem() async -> String? {
        guard let url = instanceURL.value, let check = urlCheck.withLock({ $0 }) else { return nil }
        return await check.value.map { "cluster.instanceURL \(url) \($0)" }
    }

    /// Why a cluster cannot start.
    public enum StartError: Error, CustomStringConvertible {
        case noSecret

        public var description: String {
            "the store has no cluster secret (table harness_secret, made with the schema): the database answered none; check store.url"
        }
    }

    /// Stops the background work (before the server stops).
    public func shutdown() {
        housekeeping.withLock { $0?.cancel() }
    }
}

/// What the cluster counts, for `/metrics`.
public protocol ClusterMetrics: Sendable {
    /// A request passed on to its transaction's home, by route pattern, and how it went (`answered`, `home-unreachable`, `home-failed`,
    /// `store-unavailable`).
    func passedOn(route: String, outcome: String)
    /// This instance, as the others reach it.
    func setClusterInstance(_ url: String)
}
