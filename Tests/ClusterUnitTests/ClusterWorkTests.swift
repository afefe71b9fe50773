import EventLoops
import Logging
import Messaging
import Net
import Store
import Synchronization
import Testing
@testable import Cluster

/// What the roles share over the store: a record's home decides who does its job and who takes it over, and a store that
/// gives no answer is never read as a record of no home.
@Suite("Shared work over the cluster's store")
struct ClusterWorkTests {
    static let here = "http://10.0.0.1:8080", there = "http://10.0.0.2:8080"
    let challenge = RecordID(role: "acs", id: "c1")

    @Test func aChallengesTimeLimitIsEndedAtItsHomeWhoeverClaimsTheJob() async {
        let store = FakeClusterStore(homes: ["c1": Self.there])
        let work = ClusterWork(store: store, logger: Logger(label: "test"))
        let job = ScheduledJob(id: "acs.expire:c1", kind: "acs.expire", due: 0, payload: [], home: challenge)
        #expect(await work.claim(job) == false)
        store.set(home: Self.here, of: "c1")
        #expect(await work.claim(job))
        // Without a home record, the first to claim the job does it.
        #expect(await work.claim(ScheduledJob(id: "acs.rreq:c1", kind: "acs.rreq", due: 0, payload: [])))
        #expect(await work.claim(ScheduledJob(id: "acs.rreq:c1", kind: "acs.rreq", due: 0, payload: [])) == false)
    }

    @Test func aStoreWithoutAnswerLeavesATimersJobToItsInstanceRatherThanToNobody() async {
        let store = FakeClusterStore(homes: ["c1": Self.there])
        store.answering(false)
        let work = ClusterWork(store: store, logger: Logger(label: "test"))
        #expect(await work.claim(ScheduledJob(id: "acs.expire:c1", kind: "acs.expire", due: 0, payload: [], home: challenge)))
    }

    @Test func aLiveHomeKeepsItsRecordAndAGoneOneGivesItUp() async {
        let store = FakeClusterStore(homes: ["c1": Self.there], live: [Self.there])
        let work = ClusterWork(store: store, logger: Logger(label: "test"))
        #expect(await work.takeOver(challenge) == nil)
        store.setLive([])
        #expect(await work.takeOver(challenge) == TakeOver(previousHome: Self.there))
        // Unknown to the store (it gives no answer): not taken, rather than taken twice.
        store.answering(false)
        #expect(await work.takeOver(challenge) == nil)
    }

    @Test func aHomeSilentForLongerThanTheLiveWindowOnTheStoresClockGivesItsRecordUp() async {
        let store = FakeClusterStore(homes: ["c1": Self.there], live: [Self.there])
        let work = ClusterWork(store: store, logger: Logger(label: "test"))
        store.advance(milliseconds: ClusterHousekeeping.liveWindowMilliseconds)
        #expect(await work.takeOver(challenge) == nil)
        store.advance(milliseconds: 1)
        #expect(await work.takeOver(challenge) == TakeOver(previousHome: Self.there))
    }

    @Test func aCountLivesItsLifetimeOnTheStoresClock() {
        let store = FakeClusterStore(homes: [:])
        ClusterWork(store: store, logger: Logger(label: "test")).startCount(id: "pin", remaining: 2, lifetimeMilliseconds: 60_000)
        #expect(store.counts["pin"] == 1_060_000)
    }

    @Test func aRequestWhoseHomeTheStoreCannotNameIsAnswered503NotServedHere() async throws {
        let store = FakeClusterStore(homes: [:])
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let served = Atomic<Int>(0)
        var router = Router()
        let route = TransactionRoute(role: "acs", key: .pathParameter("id"), holds: { _ in false })
        router.post("/acs/{id}", tag: route) { _, _ in
            served.add(1, ordering: .relaxed)
            return .text("served")
        }
        let instanceURL = InstanceURL()
        instanceURL.set(Self.here)
        ClusterRoutes(store: store, client: try HTTPClient(group: group), instanceURL: instanceURL, credential: ClusterCredential(secret: "s"),
                      metrics: NoMetrics(), logger: Logger(label: "test")).register(on: &router)
        let server = try HTTPServer(configuration: ServerConfiguration(httpPort: 0), router: router, group: group)
        let request = HTTPRequest(method: .post, target: "/acs/c1", headers: HTTPHeaders(), body: [])
        #expect(await server.answer(request, isSecure: false).bodyText == "served")
        store.answering(false)
        let refused = await server.answer(request, isSecure: false)
        #expect(refused.status == .serviceUnavailable)
        #expect(refused.bodyText.contains("cannot say which instance holds transaction c1"))
        #expect(served.load(ordering: .relaxed) == 1)
    }
}

extension ClusterWorkTests {
    /// A request passed on to its home gets the home's answer however large an instance makes it: a run of every negative
    /// case is a JSON of over 10 MB, more than an HTTP client's default 8 MiB.
    @Test func anAnswerAsLargeAsARunsReportIsPassedOnWhole() async throws {
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let report = [UInt8](repeating: UInt8(ascii: "x"), count: 10_000_000)
        let route = TransactionRoute(role: "run", key: .pathParameter("id"), holds: { _ in true })
        var homeRouter = Router()
        homeRouter.get("/admin/runs/{id}", tag: route) { _, _ in HTTPResponse(headers: ["Content-Type": "application/json"], body: report) }
        let home = try HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", httpPort: 0), router: homeRouter, group: group)
        try home.start()
        defer { home.shutdown() }
        let store = FakeClusterStore(homes: ["r1": "http://127.0.0.1:\(try #require(home.httpPort))"])
        var router = Router()
        router.get("/admin/runs/{id}", tag: TransactionRoute(role: "run", key: .pathParameter("id"), holds: { _ in false })) { _, _ in
            .text("served here, not at the run's home", status: .notFound)
        }
        let instanceURL = InstanceURL()
        instanceURL.set(Self.here)
        ClusterRoutes(store: store, client: try HTTPClient(group: group, configuration: ClusterRoutes.passingOn(tls: TLSConfiguration())),
                      instanceURL: instanceURL, credential: ClusterCredential(secret: "s"), metrics: NoMetrics(), logger: Logger(label: "test"))
            .register(on: &router)
        let server = try HTTPServer(configuration: ServerConfiguration(httpPort: 0), router: router, group: group)
        let answer = await server.answer(HTTPRequest(method: .get, target: "/admin/runs/r1", headers: HTTPHeaders(), body: []), isSecure: false)
        #expect(answer.status == .ok && answer.body.count == report.count, "\(answer.status) \(answer.bodyText.prefix(200))")
    }

    /// `GET /admin/load-mix` answers for the live instances; when the store cannot name them, the summary is this
    /// instance's alone and says so ("1 of unknown"), never "1 of 1".
    @Test func aLoadMixSummaryTheStoreCannotCompleteSaysItIsOneInstancesAlone() async throws {
        let store = FakeClusterStore(homes: [:], live: [Self.here])
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        var router = Router()
        router.get(ClusterLoadMix.path) { _, _ in HTTPResponse(headers: .json, body: Array(#"{"active":true,"drawn":7,"byScenario":{}}"#.utf8)) }
        let instanceURL = InstanceURL()
        instanceURL.set(Self.here)
        ClusterLoadMix(store: store, client: try HTTPClient(group: group), instanceURL: instanceURL, credential: ClusterCredential(secret: "s"),
                       logger: Logger(label: "test")).register(on: &router)
        let server = try HTTPServer(configuration: ServerConfiguration(httpPort: 0), router: router, group: group)
        let request = HTTPRequest(method: .get, target: ClusterLoadMix.path, headers: HTTPHeaders(), body: [])
        #expect(await server.answer(request, isSecure: false).headers[ClusterChange.appliedHeader] == "1 of 1")
        store.answering(false)
        let alone = await server.answer(request, isSecure: false)
        #expect(alone.status == .ok && alone.headers[ClusterChange.appliedHeader] == "1 of unknown", "\(alone.headers)")
    }
}

private struct NoMetrics: ClusterMetrics {
    func passedOn(route: String, outcome: String) {}
    func setClusterInstance(_ url: String) {}
}

/// A store in memory, on a clock the test moves, that can stop answering.
final class FakeClusterStore: ClusterStore {
    private struct State {
        var homes: [String: String]
        /// When each instance last announced itself.
        var announced: [String: Int64] = [:]
        var claimed: Set<String> = []
        var answering = true
        var counts: [String: Int64] = [:]
    }
    private let state: Mutex<State>
    private let now = Wall()
    let clock: HarnessClock

    /// Milliseconds since 1970, as the test sets them.
    private final class Wall: Sendable {
        let milliseconds = Atomic<Int64>(1_000_000)
    }

    init(homes: [String: String], live: [String] = []) {
        state = Mutex(State(homes: homes))
        clock = HarnessClock(wallMilliseconds: { [now] in now.milliseconds.load(ordering: .relaxed) })
        setLive(live)
    }

    func set(home: String, of id: String) { state.withLock { $0.homes[id] = home } }
    /// Only `urls` announced themselves, just now.
    func setLive(_ urls: [String]) {
        let now = clock.wallMilliseconds()
        state.withLock { $0.announced = Dictionary(uniqueKeysWithValues: urls.map { ($0, now) }) }
    }
    func answering(_ answering: Bool) { state.withLock { $0.answering = answering } }
    func advance(milliseconds: Int64) { now.milliseconds.add(milliseconds, ordering: .relaxed) }

    private func answer<T>(_ body: (inout State) -> T) throws(StoreUnavailable) -> T {
        let result: T? = state.withLock { $0.answering ? body(&$0) : nil }
        guard let result else { throw StoreUnavailable("paused") }
        return result
    }

    func setInstanceURL(_ url: String?) {}
    func home(role: String, id: String) async throws(StoreUnavailable) -> String? { try answer { $0.homes[id] } }
    func claimHome(role: String, id: String, from previous: String?) async throws(StoreUnavailable) -> Bool {
        try answer { state in
            let home = state.homes[id]
            guard home == nil || home == ClusterWorkTests.here || home == previous else { return false }
            state.homes[id] = ClusterWorkTests.here
            return true
        }
    }
    func schedule(_ job: ScheduledJob) {}
    func claimJob(id: String) async -> Bool { (try? answer { $0.claimed.insert(id).inserted }) ?? true }
    func claimOverdueJobs(dueBefore: Int64, limit: Int) async throws(StoreUnavailable) -> [ScheduledJob] { try answer { _ in [] } }
    func finishJob(id: String) async {}
    func releaseJob(id: String) async {}
    func announce(_ url: String) async {
        let now = clock.wallMilliseconds()
        state.withLock { $0.announced[url] = now }
    }
    func instances(seenSince: Int64) async -> [String]? { try? answer { $0.announced.filter { $0.value >= seenSince }.map(\.key) } }
    func startCount(id: String, remaining: Int, expires: Int64) { state.withLock { $0.counts[id] = expires } }
    /// Each count's expiry.
    var counts: [String: Int64] { state.withLock { $0.counts } }
    func clusterEpoch() -> String? { nil }
    func clusterSecret() -> String? { "s" }
    func use(_ id: String, for transaction: String?) async -> Bool? { nil }
    func record(_ change: RecordedChange, supersedes: [String]) async -> Bool { false }
    func changes() async -> [RecordedChange]? { nil }
}
