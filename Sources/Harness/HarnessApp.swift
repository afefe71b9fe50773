public import AccessControlServer
import Cluster
public import Configuration
public import DirectoryServer
import EMV3DS
import EMVCrypto
public import EventLoops
public import Foundation
import JOSE
public import Journal
import JSON
public import Logging
public import Messaging
public import Net
public import Runs
public import Scenarios
public import Store
import Synchronization
public import ThreeDSServer

/// The running harness: its loops, its server and the routes of every role.
public final class HarnessApp: Sendable {
    public let configuration: HarnessConfiguration
    public let group: EventLoopGroup
    public let server: HTTPServer
    public let threeDSServer: ThreeDSServer
    public let directoryServer: DirectoryServer
    public let accessControlServer: AccessControlServer
    public let scenarios: ScenarioSource
    public let endpoints = LocalEndpoints()
    public let metrics = HarnessMetrics(version: HarnessVersion.current)
    /// The durable store behind the roles' in-memory records; nil when `store.enabled` is false.
    public let archive: (any TransactionArchive)?
    /// Every transaction as the roles saw it together: the inspector's and the runs' source.
    public let journal: Journal
    public let runs: RunRegistry
    private let logger: Logger
    private let scenarioPath: String
    /// The roles' calls to each other without a socket (`server.roleCalls: in-process`); nil: over HTTP.
    private let inProcessCalls: InProcessCalls?
    /// Several instances on one store (`cluster.enabled`); nil for one alone.
    private let cluster: Cluster?
    /// `GET /health/ready`: the store answers, the cluster's changes are made, not draining.
    private let readiness: Readiness
    /// Probes the store every few seconds, until shutdown.
    private let storeWatch = Mutex<Task<Void, Never>?>(nil)
    /// The roles' work beside the answers (time limits, decoupled results, follow-up AReqs): cancelled before the server stops.
    private let background: BackgroundWork

    /// Builds the app; relative file paths in `configuration` are resolved against `baseDirectory`.
    /// Fails, naming the file, when the test PKI or the scenario file cannot be read. `clock` is what every part reads the
    /// time from (tests of sdkMaxTimeout give one that jumps minutes).
    public init(configuration: HarnessConfiguration, baseDirectory: String = FileManager.default.currentDirectoryPath,
                logger: Logger = Logger(label: "harness"), clock: HarnessClock = .system) throws {
        self.configuration = configuration
        self.logger = logger
        inProcessCalls = configuration.server.roleCalls == .inProcess ? InProcessCalls() : nil
        try configuration.checkAdminExposure(source: "configuration")
        if configuration.cluster.enabled, configuration.cluster.instanceURL == nil, ["0.0.0.0", "::"].contains(configuration.server.host) {
            // Else each instance would name itself by 127.0.0.1, and none would find another.
            throw ConfigurationError.invalid(source: "cluster.instanceURL", reason: "required when server.host is \(configuration.server.host): "
                                             + "the URL the other instances reach this one at (THREEDS_HARNESS_INSTANCE_URL, e.g. http://harness-2:8080)")
        }
        func resolve(_ path: String) -> String { path.hasPrefix("/") ? path : baseDirectory + "/" + path }
        let pki = TestPKI(directory: resolve(configuration.pkiDirectory))
        let (keys, signers) = try Self.schemeKeys(configuration.directoryServers, pki: pki)
        let scenarioPath = resolve(configuration.scenarios)
        self.scenarioPath = scenarioPath
        scenarios = ScenarioSource(try ScenarioFile.load(path: scenarioPath))
        let schemes = configuration.directoryServers.map(\.scheme)
        // What SDKs are configured with, per DS id: read and signed once.
        let sdkConfigurations = try Self.sdkConfigurations(configuration.directoryServers, pki: pki)

        let archive = try Self.openArchive(configuration, path: resolve(configuration.dataDirectory) + "/harness.sqlite", clock: clock, logger: logger)
        self.archive = archive
        // A journal entry holds every message of its transaction (several KiB): memory keeps the newest, the store all.
        journal = Journal(capacity: min(configuration.maxTransactions, Self.transactionsInMemory), archive: archive,
                          savesBeforeAnswers: configuration.cluster.enabled)
        // In a cluster the store holds every instance's runs: each is taken up by its home, or by one instance once its home is gone.
        runs = RunRegistry(archive: archive, issuedCards: scenarios.issuedCards, readsAtStart: !configuration.cluster.enabled)
        journal.setListener(runs)
        let loops = EventLoopGroup(loopCount: configuration.loopCount)
        group = loops
        do {
            let clientTLS = Self.clientTLS(configuration.tls, pki: pki, resolve: resolve)
            let inProcess = inProcessCalls
            // One client per role: each waits for its peers as long as its role does.
            func peer(timeoutMs: UInt64) throws -> EMVPeer {
                EMVPeer(client: try HTTPClient(group: loops, configuration: HTTPClientConfiguration(tls: clientTLS, readTimeoutMilliseconds: timeoutMs)),
                        inProcess: inProcess)
            }
            let capacity = configuration.maxTransactions
            // With the store on, each role keeps in memory its transactions under way and its newest settled ones; the store, all.
            let inMemory = Self.transactionsInMemory
            let sharing = configuration.cluster.enabled ? Cluster.sharedWork(archive, logger: logger.named("cluster")) : SoleInstance()
            let background = BackgroundWork(on: loops)
            self.background = background
            var dsSettings = configuration.directoryServerSettings(schemes: schemes, keys: keys)
            dsSettings.clock = clock
            directoryServer = DirectoryServer(settings: dsSettings, scenarios: scenarios,
                                              peer: try peer(timeoutMs: configuration.directoryServer.acsTimeoutMs),
                                              endpoints: endpoints, capacity: capacity, archive: archive, inMemory: inMemory,
                                              sharing: sharing, cardRangeEpoch: configuration.cluster.enabled ? Cluster.cardRangeEpoch(archive) : nil,
                                              journal: journal, logger: logger.named("ds"))
            var acsSettings = configuration.accessControlServerSettings(schemes: schemes, signers: signers)
            acsSettings.browserPages = try Self.browserPages(resolve(configuration.accessControlServer.pageTemplates))
            acsSettings.clock = clock
            accessControlServer = AccessControlServer(settings: acsSettings,
                                                      scenarios: scenarios, peer: try peer(timeoutMs: 30_000), endpoints: endpoints,
                                                      capacity: capacity, archive: archive, inMemory: inMemory,
                                                      sharing: sharing, background: background, journal: journal, logger: logger.named("acs"))
            threeDSServer = ThreeDSServer(settings: configuration.threeDSServer, peer: try peer(timeoutMs: configuration.threeDSServer.directoryServerTimeoutMs),
                                          endpoints: endpoints, capacity: capacity, archive: archive, inMemory: inMemory,
                                          sharing: sharing, background: background, directoryServerID: { pan in schemes.first { $0.contains(pan: pan) }?.rid },
                                          tokenDirectoryServer: { rid, key in sdkConfigurations[rid]?.tokenStyle(key) },
                                          logger: logger.named("3ds-server"))
            var router = Self.baseRoutes()
            // Answers wait for the records they made to be written, when the durability asks for it.
            // In a cluster the open journal entries changed are saved first: another instance that takes a transaction up has its entry.
            if let archive, archive.durability != .behind {
                let notStored = NotStoredAnswer(logger: logger.named("store"))
                router.answerGate = { [journal] request in
                    journal.saveChanged()
                    // Nothing acknowledged that a restart or another instance cannot read.
                    return await archive.written() ? nil : notStored.response(for: request)
                }
            }
            router.get("/admin/memory", Self.memoryRoute(threeDSServer, directoryServer, accessControlServer, journal))
            router.get("/metrics", Self.metricsRoute(metrics, archive, scenarios.loadMix, threeDSServer, directoryServer, accessControlServer))
            if let token = configuration.admin.token {
                // The inspector shows decrypted messages: the same token guards it.
                router.guardPaths(under: "admin", BearerToken(token).check)
                router.guardPaths(under: "inspector", BearerToken(token).check)
            }
            SDKConfigRoutes(configurations: configuration.directoryServers.compactMap { sdkConfigurations[$0.rid] },
                            tlsRootPath: pki.directory + "/tls/root-ca.pem", token: configuration.sdkConfigToken?.value,
                            endpoints: endpoints).register(on: &router)
            let loadMixRoutes = LoadMixRoutes(scenarios: scenarios, endChallenges: { [accessControlServer] in accessControlServer.endLoadMixChallenges(team: $0) })
            loadMixRoutes.register(on: &router)
            TeamRoutes(scenarios: scenarios, loadMix: loadMixRoutes, directoryServer: directoryServer, metrics: metrics).register(on: &router)
            // Every route is a team's under /teams/{team} (docs/operations.md), and a name that is no team's is refused on any.
            router.admission = HarnessTeam.admit
            router.check = { request throws(HTTPError) in _ = try request.team() }
            var made: Cluster?
            if configuration.cluster.enabled, let archive {
                made = try Cluster(archive: archive, runs: runs, journal: journal, scenarios: scenarios, group: loops, tls: clientTLS,
                                   adminToken: configuration.admin.token, metrics: metrics, logger: logger.named("cluster"), journalRole: DirectoryServer.role,
                                   runJob: { [accessControlServer] job in await accessControlServer.runOverdue(job) },
                                   runBegun: { [directoryServer] in directoryServer.beginPreparationScope() })
            }
            let cluster = made
            self.cluster = cluster
            AdminRoutes(scenarios: scenarios, reloader: ScenarioReloader(path: scenarioPath, shownPath: configuration.scenarios, scenarios: scenarios),
                        counts: sharing, clock: clock).register(on: &router)
            threeDSServer.register(on: &router)
            directoryServer.register(on: &router)
            accessControlServer.register(on: &router)
            let templates = resolve(configuration.accessControlServer.pageTemplates)
            var runRoutes = RunRoutes(runs: runs, journal: journal, scenarios: scenarios, reportStyle: RunRoutes.reportStyle(folder: templates),
                                      runStarting: { [directoryServer] in directoryServer.beginPreparationScope() },
                                      publicURL: configuration.server.publicURL)
            runRoutes.cluster = cluster?.runs
            runRoutes.register(on: &router)
            InspectorRoutes(journal: journal, page: InspectorPage(folder: templates)).register(on: &router)
            DemoRoutes(templateFolder: templates, scenarios: scenarios, threeDSServer: threeDSServer).register(on: &router)
            // Passing on and spreading go around the routes registered by now: the roles', the runs', the admin ones.
            cluster?.install(on: &router)
            // Not ready until the changes the cluster made before this instance started are made here too.
            let readiness = Readiness(archive: archive, changesMade: { cluster?.changesMade ?? true }, metrics: metrics, logger: logger.named("readiness"))
            readiness.register(on: &router)
            self.readiness = readiness
            let (threeDSServer, directoryServer, accessControlServer) = (threeDSServer, directoryServer, accessControlServer)
            RecordListRoute.register("/3ds-server/transactions", on: &router) { await threeDSServer.transactions.newestJSON(limit: $0, where: $1) }
            RecordListRoute.register("/admin/ds/transactions", on: &router) { await directoryServer.newestRecords(limit: $0, where: $1) }
            RecordListRoute.register("/admin/acs/transactions", on: &router) { await accessControlServer.transactions.newestJSON(limit: $0, where: $1) }
            server = try HTTPServer(configuration: configuration.serverConfiguration(baseDirectory: baseDirectory),
                                    router: router, group: group, logger: logger,
                                    observer: Observers(all: [metrics, MessageLog(logger: logger.named("messages")), SlowAnswerLog(logger: logger.named("http"))]))
        } catch {
            group.shutdown()
            archive?.close(timeoutSeconds: 10)
            throw error
        }
    }

    /// `GET /admin/memory`: heap in use and the transactions each role keeps (`bench/run memory`).
    private static func memoryRoute(_ threeDSServer: ThreeDSServer, _ directoryServer: DirectoryServer,
                                    _ accessControlServer: AccessControlServer, _ journal: Journal) -> SyncHandler {
        { _, _ in
            func count(_ value: Int) -> JSONValue { .number(String(value)) }
            // Records in memory, and stored since start (in memory or in the store only).
            let transactions: JSONValue = .object([("threeDSServer", count(threeDSServer.transactions.count)),
                                                   ("directoryServer", count(directoryServer.transactionCount)),
                                                   ("accessControlServer", count(accessControlServer.transactions.count))])
            let stored: JSONValue = .object([("threeDSServer", count(threeDSServer.transactions.stored)),
                                             ("directoryServer", count(directoryServer.transactionsStored)),
                                             ("accessControlServer", count(accessControlServer.transactions.stored))])
            let journal: JSONValue = .object([("entriesInMemory", count(journal.entriesInMemory)), ("memoryBound", count(journal.memoryBound))])
            return .emv(.object([("heapBytesInUse", count(ProcessMemory.heapBytesInUse)), ("transactions", transactions),
                                ("transactionsStored", stored), ("journal", journal)]))
        }
    }

    /// `GET /metrics`: the Prometheus text exposition format.
    private static func metricsRoute(_ metrics: HarnessMetrics, _ archive: (any TransactionArchive)?, _ loadMix: LoadMixBoard, _ threeDSServer: ThreeDSServer,
                                     _ directoryServer: DirectoryServer, _ accessControlServer: AccessControlServer) -> SyncHandler {
        { _, _ in
            let body = metrics.exposition(storedTransactions: [("3ds-server", threeDSServer.transactions.count),
                                                               ("ds", directoryServer.transactionCount),
                                                               ("acs", accessControlServer.transactions.count)],
                                          archive: archive?.status, loadMix: loadMix)
            return HTTPResponse(headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"], body: body)
        }
    }

    /// Binds the listeners; from then on the roles address each other at the bound ports.
    /// SIGTERM's first step: not ready from now on (`GET /health/ready` answers 503), while every request is still served,
    /// so that a balancer's health check moves traffic away before ``shutdown()`` stops taking connections.
    public func beginDrain() {
        logger.notice("draining: not ready; serving what comes until the stop", metadata: ["drainSeconds": "\(configuration.server.drainSeconds)"])
        readiness.beginDrain()
    }

    public func start() throws {
        storeWatch.withLock { $0 = readiness.watch() }
        do { try server.start() } catch {
            group.shutdown()
            throw error
        }
        var host = configuration.server.host
        if host == "0.0.0.0" { host = "127.0.0.1" }
        if host == "::" { host = "::1" }
        if host.contains(":") { host = "[\(host)]" }
        // The TLS certificate names localhost, so SDKs are given that name for HTTPS.
        let secureBase = server.httpsPort.map { "https://\(host == "127.0.0.1" ? "localhost" : host):\($0)" }
        endpoints.setSecureBaseURL(secureBase)
        if let port = server.httpPort {
            endpoints.setBaseURL("http://\(host):\(port)")
        } else if let secureBase {
            endpoints.setBaseURL(secureBase)
        }
        // Behind a load balancer, what the roles give other parties names the balancer.
        if let publicURL = configuration.server.publicURL {
            endpoints.setBaseURL(publicURL)
            endpoints.setSecureBaseURL(publicURL)
        }
        let plainBase = server.httpPort.map { "http://\(host):\($0)" }
        let instanceURL = cluster == nil ? nil : configuration.cluster.instanceURL
        // A role begins its leg of a transaction at this instance, not through the balancer: a transaction's roles stay on
        // the instance that began it, over HTTP too.
        endpoints.setOwnBaseURL(instanceURL ?? plainBase ?? secureBase)
        // The roles' calls to these bases are answered in process (to the balancer's too).
        let publicBase = configuration.server.publicURL.map { ($0, $0.hasPrefix("https://")) }
        let bases = [plainBase.map { ($0, false) }, secureBase.map { ($0, true) }, instanceURL.map { ($0, $0.hasPrefix("https://")) }, publicBase]
        inProcessCalls?.serve(server, at: bases.compactMap { $0 })
        if let cluster, let url = instanceURL ?? plainBase ?? secureBase {
            cluster.start(at: url, server: server)
            logger.info("one instance of a cluster", metadata: ["instance": "\(url)", "public": "\(configuration.server.publicURL ?? "-")"])
        }
        if configuration.tls.plainHTTPBypassesMutualTLS(configuration.server) {
            logger.warning("mutual TLS is required on HTTPS, but plain HTTP serves every route, /admin too, without a certificate",
                           metadata: ["http": "\(configuration.server.host):\(server.httpPort ?? 0)",
                                      "fix": "server.httpPort: null, or tls.plainHTTPBesideMutualTLS: refuse to make this an error"])
        }
    }

    /// Why this instance of a cluster cannot serve at the `instanceURL` it started at (the others would pass its requests on
    /// to another place): what `serve` refuses to go on with. Nil when it can, and for a harness alone.
    public func clusterInstanceProblem() async -> String? {
        await cluster?.instanceURLProblem()
    }

    /// Reads the scenario file again and puts it in force (SIGHUP, `POST /admin/reload`).
    /// A bad file changes nothing; transactions in flight keep the scenario they started with.
    public func reloadScenarios() throws(ConfigurationError) {
        let count = try ScenarioReloader(path: scenarioPath, scenarios: scenarios).reload()
        logger.info("scenarios reloaded", metadata: ["file": "\(scenarioPath)", "scenarios": "\(count)"])
    }

    /// Graceful stop: requests in flight finish, then the loops end.
    public func shutdown() {
        let clock = ContinuousClock()
        var steps: [(String, Duration)] = []
        func step(_ name: String, _ body: () -> Void) {
            let started = clock.now
            body()
            steps.append((name, clock.now - started))
        }
        // Live readers of the inspector are answered now, so none holds the server open.
        journal.wakeAll()
        cluster?.shutdown()
        storeWatch.withLock { $0?.cancel() }
        // Before the server and its clients stop: a task cancelled in the middle of a call ends it, or is left after the limit.
        step("background") {
            let left = background.closeAndWait(upTo: Self.backgroundStopLimit)
            if left > 0 { logger.warning("work beside the answers still running at the stop", metadata: ["tasks": "\(left)"]) }
        }
        step("server", server.shutdown)
        step("loops", group.shutdown)
        step("journal", journal.flush)
        // After the loops: every change is queued by now, and is written before this returns.
        step("store") { archive?.close(timeoutSeconds: 10) }
        logger.info("stopped", metadata: Logger.Metadata(uniqueKeysWithValues: steps.map { name, took in
            ("\(name)Ms", "\(took.components.seconds * 1000 + took.components.attoseconds / 1_000_000_000_000_000)")
        }))
    }

    /// How long the stop waits for the work beside the answers to end once cancelled.
    static let backgroundStopLimit = Duration.seconds(5)

    /// Journal entries, and each role's settled records, kept in memory when the store keeps them all.
    static let transactionsInMemory = 5_000

    static func baseRoutes() -> Router {
        var router = Router()
        let health = Array(#"{"status":"ok","version":"\#(HarnessVersion.current)"}"#.utf8)
        router.get("/health") { _, _ in HTTPResponse(headers: .json, body: health) }
        // Parses and re-serialises a JSON body with the reader and writer the roles use: the cost of
        // JSON on the request path, for benchmarks.
        router.post("/admin/echo") { request, _ in
            guard request.headers.mediaType == "application/json" else {
                throw HTTPError(.unsupportedMediaType, "expected Content-Type application/json")
            }
            let value: JSONValue
            do throws(JSONReader.SyntaxError) { value = try JSONReader.parse(request.body).value } catch {
                throw HTTPError(.badRequest, "body is not JSON: \(error.description)")
            }
            return HTTPResponse(headers: .json, body: JSONWriter.write(value))
        }
        return router
    }
}

extension Logger {
    /// A logger for a role: the same handler, with the role in its metadata.
    func named(_ role: String) -> Logger {
        var logger = self
        logger[metadataKey: "role"] = "\(role)"
        return logger
    }
}
