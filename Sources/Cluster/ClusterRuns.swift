import EMV3DS
import Foundation
public import Journal
public import JSON
import Logging
import Net
public import Runs
import Scenarios
import Store
import Synchronization

/// Test runs in a cluster (docs/scale.md): a run lives in the memory of the instance that began it (its home), which
/// attaches every transaction to its cases, one after the other, whichever instance the transaction reached. The
/// others know each run from what its home told them as it began or opened again (its cases' scenarios and its
/// cards), and ask the home to attach theirs. The first instance that needs a run whose home is gone takes it up
/// from the store. A run's report is made at its home, which reads its transactions from the store, or from the
/// memory of the instance that holds one still under way.
public final class ClusterRuns: JournalListener {
    let local: RunRegistry
    private let journal: Journal
    private let archive: any TransactionArchive
    private let store: any ClusterStore
    private let client: HTTPClient
    private let instanceURL: InstanceURL
    private let credential: ClusterCredential
    /// The store's role of the records keyed as the journal is, by dsTransID (the DS's): their home holds the entry under way.
    private let journalRole: String
    private let issuedCards: IssuedCards
    private let adminToken: String?
    private let change: Mutex<ClusterChange?> = Mutex(nil)
    private let known = Mutex(Known())
    private let logger: Logger
    /// Called when another instance tells of a run it began: the roles' judging of what came before starts anew here too
    /// (the DS's PReq checks), as at the run's home.
    private let runBegun: @Sendable () -> Void

    /// The runs homed elsewhere, as their homes told them.
    private struct Known {
        var runs: [String: KnownRun] = [:]
        /// Card issued to a case → its run.
        var cards: [String: String] = [:]
    }

    private struct KnownRun {
        var home: String
        /// When it began, or was opened again by its latest retry: the newest open run takes a transaction by its scenario first.
        let openedAt: Date
        /// The keys (``RunRegistry/caseKey(_:)``) of its cases: what it may take by the scenario fallback.
        let keys: Set<String>
        /// As its home last said: a finished run is not asked for a transaction by its scenario.
        var open: Bool
    }

    init(local: RunRegistry, journal: Journal, archive: any TransactionArchive, store: any ClusterStore, client: HTTPClient,
         instanceURL: InstanceURL, credential: ClusterCredential, journalRole: String, issuedCards: IssuedCards, adminToken: String?, logger: Logger,
         runBegun: @escaping @Sendable () -> Void = {}) {
        self.runBegun = runBegun
        self.local = local
        self.journal = journal
        self.archive = archive
        self.store = store
        self.client = client
        self.instanceURL = instanceURL
        self.credential = credential
        self.journalRole = journalRole
        self.issuedCards = issuedCards
        self.adminToken = adminToken
        self.logger = logger
    }

    func setChange(_ change: ClusterChange) { self.change.withLock { $0 = change } }

    /// How long an instance waits for another's answer about a run: an AReq waits for the attachment.
    static let askTimeoutMilliseconds: UInt64 = 5_000
    /// The runs of other homes known at most: as many as an instance keeps itself.
    static let knownCapacity = RunRegistry.capacity
    /// A run's kept change lives this long: an instance started later knows of the runs of the last day (and finds an older
    /// one a transaction names in the store).
    static let keptMilliseconds: Int64 = 86_400_000

    // MARK: Attaching

    /// The case of the run the tag or the card names, else of the newest open run (here or elsewhere) waiting for the
    /// entry's scenario, version and channel.
    public func attachment(for entry: JournalEntry) async -> RunAttachment {
        let attachment = await caseAttachment(for: entry)
        if attachment == .none, entry.caseTag == nil, !entry.refusedParties.isEmpty { await noteRefusedOutsideCases(entry) }
        return attachment
    }

    /// A refused message of the party that no case took, kept by the open runs here and asked of the homes of those
    /// elsewhere: each keeps it if it tests a party the message failed.
    private func noteRefusedOutsideCases(_ entry: JournalEntry) async {
        local.noteRefusedOutsideCases(entry.dsTransID, tag: nil, parties: entry.refusedParties)
        let elsewhere = known.withLock { $0.runs.filter(\.value.open).map { (id: $0.key, home: $0.value.home) } }
        await withTaskGroup(of: Void.self) { group in
            for run in elsewhere {
                group.addTask { [self] in _ = try? await ask(run.home, .post, "/admin/runs/\(run.id)/attach", json: Self.facts(entry, noting: true)) }
            }
        }
    }

    private func caseAttachment(for entry: JournalEntry) async -> RunAttachment {
        if let tag = entry.caseTag {
            let id = RunRegistry.runID(ofTag: tag)
            if local.holds(id) { return local.attach(entry) }
            // Known from its home, or else found in the store (a run of which this instance missed the news); nowhere: the registry says why.
            guard let home = await home(of: id) else {
                _ = await held(id)
                return local.attach(entry)
            }
            return await attach(entry, to: id, at: home, noting: true).attachment
        }
        if let pan = entry.cardNumber {
            if local.run(issued: pan) != nil { return local.attach(entry) }
            if let (id, home) = known.withLock({ known in known.cards[pan].flatMap { id in known.runs[id].map { (id, $0.home) } } }) {
                return await attach(entry, to: id, at: home, noting: true).attachment
            }
        }
        guard let key = RunRegistry.caseKey(of: entry) else { return .none }
        let elsewhere = known.withLock { known in
            known.runs.filter { $0.value.open && $0.value.keys.contains(key) }.map { (id: $0.key, openedAt: $0.value.openedAt, home: Optional($0.value.home)) }
        }
        let here = local.openRuns(waitingFor: entry).map { (id: $0.id, openedAt: $0.openedAt, home: String?.none) }
        for candidate in (here + elsewhere).sorted(by: { $0.openedAt > $1.openedAt }) {
            guard let home = candidate.home else {
                let attachment = local.attach(entry, only: candidate.id)
                if case .attached = attachment { return attachment }
                continue
            }
            let asked = await attach(entry, to: candidate.id, at: home)
            // A home that may have attached it (it timed out, or closed the connection) ends the search: never two runs.
            if case .attached = asked.attachment { return asked.attachment }
            if !asked.sure { return .none }
        }
        return .none
    }

    /// The home of run `id` another instance holds: as known, else as the store names it.
    private func home(of id: String) async -> String? {
        if let home = known.withLock({ $0.runs[id]?.home }) { return home }
        guard let home = try? await store.home(role: RunRegistry.role, id: id), home != instanceURL.value else { return nil }
        return home
    }

    /// `entry` attached by run `id`'s home; the run taken up here when its home is gone (its connection refused). `sure`: false when the home may have attached it though no answer said so (it timed out, or closed
    /// the connection).
    /// `noting`: the run is the one the entry names (its tag, its card), so a refused message it takes in no case is kept
    /// by it; asked as one candidate of several, another may take it.
    private func attach(_ entry: JournalEntry, to id: String, at home: String, noting: Bool = false) async -> (attachment: RunAttachment, sure: Bool) {
        var home = home
        for _ in 0..<3 {
            let answer: HTTPResponse
            do throws(HTTPClientError) {
                answer = try await ask(home, .post, "/admin/runs/\(id)/attach", json: Self.facts(entry, noting: noting))
            } catch {
                switch error {
                case .invalidURL, .nameResolutionFailed, .connectFailed, .clientShutDown:
                    // Refused: nothing listens there, the home is gone (as ClusterRoutes takes a transaction from it). The run is
                    // taken from it here, unless another instance took it first: then asked there.
                    if await takeUp(id, from: home) {
                        logger.warning("a test run's home cannot be reached; taken over here", metadata: ["run": "\(id)", "home": "\(home)"])
                        return (attachHere(entry, to: id, noting: noting), true)
                    }
                    guard let holder = await holder(of: id, insteadOf: home) else { return (failed(entry, id, home, error.summary), true) }
                    if holder == instanceURL.value { return (attachHere(entry, to: id, noting: noting), true) }
                    home = holder
                    continue
                default:
                    return (failed(entry, id, home, error.summary), false)
                }
            }
            guard answer.status == .ok, let json = try? JSONReader.parse(answer.body).value else {
                // The home does not hold the run (it was taken from it): the store says who does.
                guard answer.status == .notFound, let holder = await holder(of: id, insteadOf: home) else {
                    return (failed(entry, id, home, "\(answer.status.code) \(answer.bodyText.prefix(200))"), answer.status.code < 500)
                }
                if holder == instanceURL.value { return (attachHere(entry, to: id, noting: noting), true) }
                home = holder
                continue
            }
            known.withLock { $0.runs[id]?.open = json["open"] == .bool(true) }
            if let caseID = json["caseID"]?.stringValue { return (.attached(JournalEntry.RunCase(run: id, caseID: caseID)), true) }
            return (json["problem"]?.stringValue.map(RunAttachment.refused) ?? .none, true)
        }
        return (failed(entry, id, home, "its home moved three times"), true)
    }

    /// Who holds run `id` now by the store, other than `previous`; this instance takes it up when it is named.
    private func holder(of id: String, insteadOf previous: String) async -> String? {
        guard let holder = try? await store.home(role: RunRegistry.role, id: id), holder != previous else { return nil }
        if holder == instanceURL.value { return await takeUp(id, from: nil) ? holder : nil }
        known.withLock { $0.runs[id]?.home = holder }
        return holder
    }

    private func failed(_ entry: JournalEntry, _ id: String, _ home: String, _ reason: String) -> RunAttachment {
        logger.warning("a transaction was not attached to a test run: its home failed", metadata: [
            "run": "\(id)", "home": "\(home)", "dsTransID": "\(entry.dsTransID)", "reason": "\(reason)"])
        return entry.caseTag == nil ? .none : .refused("the instance that holds run \(id) (\(home)) did not attach it: \(reason)")
    }

    /// What a run's home needs of a transaction to attach it.
    /// `entry` attached to run `id` held here; when `noting`, a refused message no case takes is kept by the run.
    private func attachHere(_ entry: JournalEntry, to id: String, noting: Bool) -> RunAttachment {
        local.attach(entry, only: id, noting: noting ? entry.refusedParties : nil)
    }

    /// What a run's home needs of `entry` to attach it; with `noting`, whom it failed if it was refused.
    private static func facts(_ entry: JournalEntry, noting: Bool = false) -> JSONValue {
        .object(omittingAbsent: [("dsTransID", .string(entry.dsTransID)), ("pan", .string(entry.cardNumber)), ("messageVersion", .string(entry.version)),
                                 ("deviceChannel", .string(entry.channel)), ("scenario", .string(entry.scenario)), ("caseTag", .string(entry.caseTag)),
                                 ("refusedParties", !noting || entry.refusedParties.isEmpty ? nil : .array(entry.refusedParties.map { .string($0.rawValue) }))])
    }

    /// Whether this instance holds run `id`, taking it up from the store when the store names this instance its home
    /// (it began the run, and was started again).
    public func held(_ id: String) async -> Bool {
        if local.holds(id) { return true }
        // A record of no home (written before the cluster) is anyone's.
        guard let here = instanceURL.value, (try? await store.home(role: RunRegistry.role, id: id)) ?? here == here else { return false }
        return await takeUp(id, from: nil)
    }

    /// Reads run `id` from the store and keeps it here, once the store names this instance its home: a compare-and-set from
    /// `previous` (nil: where the store names no other instance), so that of two instances taking a run up, one holds it.
    private func takeUp(_ id: String, from previous: String?) async -> Bool {
        guard let run = await storedRun(id), (try? await store.claimHome(role: RunRegistry.role, id: id, from: previous)) == true else { return false }
        local.adopt(run)
        known.withLock { known in
            known.runs[id] = nil
            known.cards = known.cards.filter { $0.value != id }
        }
        return true
    }

    // MARK: What the others know

    /// Tells every other instance of a run this instance began, opened again or finished, before it answers.
    public func announce(_ run: TestRun) async {
        guard let here = instanceURL.value, let change = change.withLock({ $0 }) else { return }
        let cards = run.cases.compactMap { runCase in runCase.card.map { ($0, JSONValue.string(runCase.scenario)) } }
        let opened = local.openedAt(run.id) ?? run.createdAt
        let json = JSONValue.object([
            ("home", .string(here)), ("openedAtMs", .number(String(Int64(opened.timeIntervalSince1970 * 1000)))),
            ("open", .bool(run.state == .open)), ("keys", .array(Set(run.cases.map(RunRegistry.caseKey)).sorted().map(JSONValue.string))),
            ("cards", .object(cards)),
        ])
        if await !change.make(kind: "run-" + run.id, method: .post, target: "/admin/runs/\(run.id)/known", json: json,
                              keptMilliseconds: Self.keptMilliseconds, adminToken: adminToken) {
            logger.warning("not every instance knows of a test run: an untagged transaction that begins at one of them is not attached to it",
                           metadata: ["run": "\(run.id)"])
        }
    }

    func register(on router: inout Router) {
        router.post("/admin/runs/{id}/known") { [self] request, context async throws in
            try Self.betweenInstances(request)
            let id = try context.parameter("id")
            let json = try request.jsonBody()
            guard let home = json["home"]?.stringValue, let opened = json["openedAtMs"]?.numberText.flatMap(Double.init),
                  case .array(let keys)? = json["keys"] else { throw HTTPError(.badRequest, "a known run has home, openedAtMs and keys") }
            // The store knows better than the change who holds it now: this instance, started again, or one that took it over.
            let holder = (try? await store.home(role: RunRegistry.role, id: id)) ?? home
            if holder == instanceURL.value {
                _ = await held(id)
                return .text("held here\n")
            }
            let cards = (json["cards"]?.objectMembers ?? []).compactMap { member in member.value.stringValue.map { (member.key, $0) } }
            let run = KnownRun(home: holder, openedAt: Date(timeIntervalSince1970: opened / 1000), keys: Set(keys.compactMap(\.stringValue)),
                               open: json["open"] != .bool(false))
            var begun = false
            let dropped = known.withLock { known -> [String]? in
                // Checked under this lock: a take-up here removes the run from what is known after it holds it.
                guard !local.holds(id) else { return nil }
                begun = known.runs[id] == nil && run.open
                known.runs[id] = run
                for (card, _) in cards { known.cards[card] = id }
                guard known.runs.count > Self.knownCapacity, let oldest = known.runs.min(by: { $0.value.openedAt < $1.value.openedAt })?.key else { return [] }
                known.runs[oldest] = nil
                let gone = known.cards.filter { $0.value == oldest }.map(\.key)
                for card in gone { known.cards[card] = nil }
                return gone
            }
            guard let dropped else { return .text("held here\n") }
            if begun { runBegun() }
            for (card, scenario) in cards { issuedCards.restore(card, for: scenario) }
            issuedCards.withdraw(dropped)
            return .text("known\n")
        }
        router.post("/admin/runs/{id}/attach") { [self] request, context async throws in
            try Self.betweenInstances(request)
            let id = try context.parameter("id")
            guard await held(id) else { throw HTTPError(.notFound, "run \(id) is not held here") }
            let json = try request.jsonBody()
            guard let dsTransID = json["dsTransID"]?.stringValue else { throw HTTPError(.badRequest, "give the transaction's dsTransID") }
            var entry = JournalEntry(dsTransID: dsTransID, ids: TransactionIDs(), pan: json["pan"]?.stringValue, version: json["messageVersion"]?.stringValue,
                                     channel: json["deviceChannel"]?.stringValue, scenario: json["scenario"]?.stringValue)
            entry.caseTag = json["caseTag"]?.stringValue
            let refusedParties = Set((json["refusedParties"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(ConformanceCheck.Party.init(rawValue:)) })
            let attachment = local.attach(entry, only: id, noting: refusedParties)
            var answer: [(String, JSONValue?)] = [("open", .bool(local.isOpen(id) ?? false))]
            switch attachment {
            case .attached(let runCase): answer.append(("caseID", .string(runCase.caseID)))
            case .refused(let problem): answer.append(("problem", .string(problem)))
            case .none: break
            }
            return HTTPResponse(headers: .json, body: JSONWriter.write(.object(omittingAbsent: answer)))
        }
    }

    /// The instances' own routes answer only what another instance passed on (the balancer drops the header from clients).
    private static func betweenInstances(_ request: HTTPRequest) throws {
        guard request.headers[Cluster.forwardedHeader] != nil else {
            throw HTTPError(.forbidden, "this route is for the instances of a cluster, one to another")
        }
    }

    // MARK: Reports

    /// What grading reads of `dsTransIDs`: this instance's memory, the store, and for a transaction under way at another
    /// instance (the store has it only once it ended), that instance's memory.
    public func outlines(_ dsTransIDs: [String]) async -> [String: Journal.Outline] {
        var found = await journal.storedOutlines(dsTransIDs)
        let underWay = dsTransIDs.filter { !journal.holds($0) && found[$0]?.ended != true }
        guard let here = instanceURL.value, !underWay.isEmpty else { return found }
        let fetched = await withTaskGroup(of: (String, Journal.Outline?).self) { group in
            for id in underWay {
                group.addTask { [self] in
                    guard let home = try? await store.home(role: journalRole, id: id), home != here,
                          let answer = try? await ask(home, .get, "/inspector/transactions/\(id)"),
                          answer.status == .ok, let json = try? JSONReader.parse(answer.body).value else { return (id, nil) }
                    return (id, Journal.outline(ofRecord: json))
                }
            }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        found.merge(fetched) { $1 }
        return found
    }

    /// The listings of the runs the other live instances hold, and of those whose home is gone (graded here from the store).
    public func listingsElsewhere(excluding listed: Set<String>, grade: (TestRun) async -> JSONValue) async -> [JSONValue] {
        guard let here = instanceURL.value else { return [] }
        let peers = (await store.liveInstances() ?? []).filter { $0 != here }
        var listings = await withTaskGroup(of: [JSONValue].self) { group in
            for peer in peers {
                group.addTask { [self] in
                    guard let answer = try? await ask(peer, .get, "/admin/runs"), answer.status == .ok,
                          let runs = (try? JSONReader.parse(answer.body).value)?["runs"]?.arrayValue else { return [] }
                    return runs
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        // A run two instances list (one took it up as the other came back) is listed once.
        var seen = listed
        listings = listings.filter { $0["id"]?.stringValue.map { seen.insert($0).inserted } ?? false }
        for id in known.withLock({ Array($0.runs.keys) }) where !seen.contains(id) {
            guard let run = await storedRun(id) else { continue }
            listings.append(await grade(run))
            seen.insert(id)
        }
        return listings
    }

    /// Run `id` as the store keeps it.
    private func storedRun(_ id: String) async -> TestRun? {
        await archive.record(role: RunRegistry.role, id: id).flatMap { try? JSONReader.parse($0.json).value }.flatMap(TestRun.init(json:))
    }

    /// The answer of instance `base` to a request of this one (passed on, with the admin token).
    private func ask(_ base: String, _ method: HTTPMethod, _ target: String, json: JSONValue? = nil) async throws(HTTPClientError) -> HTTPResponse {
        try await client.execute(request(method, target, json: json), url: base + target)
    }

    /// A request of this instance to another: passed on, with the admin token.
    private func request(_ method: HTTPMethod, _ target: String, json: JSONValue? = nil) -> HTTPRequest {
        let body = json.map(JSONWriter.write) ?? []
        var headers: HTTPHeaders = ["Content-Length": String(body.count)]
        if json != nil { headers.set("Content-Type", "application/json") }
        if let adminToken { headers.set("Authorization", "Bearer " + adminToken) }
        var request = HTTPRequest(method: method, target: target, headers: headers, body: body)
        credential.sign(&request, from: instanceURL.value ?? "")
        return request
    }
}
