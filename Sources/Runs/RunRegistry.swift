public import EMV3DS
public import Foundation
public import Journal
import JSON
import Messaging
public import Scenarios
public import Store
import Synchronization

/// The test runs: started, attached to as transactions begin, retried, finished. Each change is
/// saved to the archive (role `run`, kept whatever the retention), and runs are read back at
/// start, so a run outlives a restart and can be finished after it.
///
/// Attaching reads two small indexes of the open runs, not the runs: its cost does not grow
/// with the number of runs kept or the transactions a run has taken.
public final class RunRegistry: JournalListener {
    private let state: Mutex<Registry>
    private let archive: (any TransactionArchive)?
    private let clock: @Sendable () -> Date
    private let issuedCards: IssuedCards?
    public static let role = "run"
    /// At most this many runs are kept in memory (the oldest finished ones go first); a run holds
    /// a few hundred cases and the ids of their transactions.
    public static let capacity = 1_000
    /// The largest answer about a run a client reads whole (its JSON, JUnit or HTML report): each case carries its checks
    /// with their text, about 12 KB, so a run of every negative case is over 10 MB.
    public static let maxReportBytes = 64 * 1024 * 1024

    private struct Registry {
        var runs: [String: TestRun] = [:]
        /// The open runs, newest first: the scenario fallback gives a transaction to the newest.
        var open: [String] = []
        var indexes: [String: OpenRunIndex] = [:]
        /// Card issued to a case → its run and the case's position, for every run kept.
        var cards: [String: (run: String, position: Int)] = [:]
        /// When each open run began or was opened again by a retry: the newest takes a transaction by its scenario first.
        var openedAt: [String: Date] = [:]

        /// Drops the oldest finished run past ``RunRegistry/capacity``; the cards it had issued.
        mutating func makeRoom() -> [String] {
            guard runs.count > RunRegistry.capacity,
                  let oldest = runs.values.filter({ $0.state == .finished }).min(by: { $0.createdAt < $1.createdAt }) else { return [] }
            runs[oldest.id] = nil
            let cards = oldest.cases.compactMap(\.card)
            for card in cards { self.cards[card] = nil }
            return cards
        }

        /// Indexes the run's cards; `issuedCards` is told of them too when they are read back.
        mutating func keep(cardsOf run: TestRun, restoringIn issuedCards: IssuedCards? = nil) {
            for (position, runCase) in run.cases.enumerated() {
                guard let card = runCase.card else { continue }
                cards[card] = (run.id, position)
                issuedCards?.restore(card, for: runCase.scenario)
            }
        }
    }

    /// What attaching needs of an open run.
    private struct OpenRunIndex {
        /// Case id → position.
        var cases: [String: Int] = [:]
        /// "scenario|version|deviceChannel" → positions of the cases that have no transaction in this attempt, in order.
        var waiting: [String: [Int]] = [:]

        init(_ run: TestRun) {
            for (index, runCase) in run.cases.enumerated() {
                cases[runCase.id] = index
                if runCase.awaitsFirstTransaction { waiting[Self.key(runCase), default: []].append(index) }
            }
        }

        static func key(_ runCase: RunCase) -> String { key(runCase.scenario, runCase.version, runCase.channel.deviceChannel) }
        static func key(_ scenario: String, _ version: String, _ channel: String) -> String { scenario + "|" + version + "|" + channel }

        mutating func taken(_ index: Int, key: String) {
            waiting[key]?.removeAll { $0 == index }
        }

    }

    /// `issuedCards`: where the cards issued to cases are told to the scenario source (nil: no card is issued).
    /// `readsAtStart`: false in a cluster, where the store holds every instance's runs and each is taken up by one
    /// instance only when its own is gone (``adopt(_:)``).
    public init(archive: (any TransactionArchive)?, issuedCards: IssuedCards? = nil, readsAtStart: Bool = true,
                clock: @escaping @Sendable () -> Date = Date.init) {
        self.archive = archive
        self.clock = clock
        self.issuedCards = issuedCards
        state = Mutex(Registry())
        guard readsAtStart else { return }
        let kept = archive?.recentAtStart(role: Self.role, limit: Self.capacity).compactMap { record in
            (try? JSONReader.parse(record.json).value).flatMap(TestRun.init(json:))
        } ?? []
        for run in kept.sorted(by: { $0.createdAt < $1.createdAt }) { adopt(run) }
    }

    /// Keeps a run read from the store as this instance's own: after a restart, or taken from an instance that is gone.
    public func adopt(_ run: TestRun) {
        let withdrawn = state.withLock { registry -> [String] in
            guard registry.runs[run.id] == nil else { return [] }
            registry.runs[run.id] = run
            registry.keep(cardsOf: run, restoringIn: issuedCards)
            if run.state == .open {
                // Newest first.
                let position = registry.open.firstIndex { registry.runs[$0].map { $0.createdAt < run.createdAt } ?? true } ?? registry.open.endIndex
                registry.open.insert(run.id, at: position)
                registry.indexes[run.id] = OpenRunIndex(run)
                registry.openedAt[run.id] = run.createdAt
            }
            return registry.makeRoom()
        }
        issuedCards?.withdraw(withdrawn)
    }

    /// Whether this instance holds run `id` (its home in a cluster).
    public func holds(_ id: String) -> Bool { state.withLock { $0.runs[id] != nil } }

    /// The run a card was issued to, when this instance holds it.
    public func run(issued card: String) -> String? { state.withLock { $0.cards[card]?.run } }

    /// The open runs with a case that would take `entry` by its scenario, version and channel, and when each began.
    public func openRuns(waitingFor entry: JournalEntry) -> [(id: String, openedAt: Date)] {
        guard let scenario = entry.scenario, let version = entry.version, let channel = entry.channel else { return [] }
        let key = OpenRunIndex.key(scenario, version, channel)
        return state.withLock { registry in
            registry.open.compactMap { id in
                guard registry.indexes[id]?.waiting[key]?.isEmpty == false, let opened = registry.openedAt[id] else { return nil }
                return (id, opened)
            }
        }
    }

    /// When run `id` began, or was opened again by its latest retry.
    public func openedAt(_ id: String) -> Date? { state.withLock { $0.openedAt[id] } }

    /// "scenario|version|deviceChannel": what a case takes by the scenario fallback.
    public static func caseKey(_ runCase: RunCase) -> String { OpenRunIndex.key(runCase) }
    public static func caseKey(of entry: JournalEntry) -> String? {
        guard let scenario = entry.scenario, let version = entry.version, let channel = entry.channel else { return nil }
        return OpenRunIndex.key(scenario, version, channel)
    }

    /// The run a case tag names.
    public static func runID(ofTag tag: String) -> String { split(tag).run }

    /// Starts a run of `suite` over `catalog`'s scenarios.
    public func start(_ suite: Suite, name: String?, catalog: ScenarioCatalog, timing: TestRun.Timing = .default) throws(SuiteError) -> TestRun {
        var cases = try suite.cases(from: catalog)
        if let issuedCards {
            // A scenario that scripts the 3DS Method has it from its own card's range: its cases keep that card.
            for index in cases.indices where catalog.scenario(named: cases[index].scenario)?.threeDSMethod == .standard {
                cases[index].card = issuedCards.issue(like: cases[index].pan, for: cases[index].scenario) { catalog.scenario(for: $0).pan == $0 }
            }
        }
        let id = UUID().uuidString.lowercased()
        let now = clock()
        let run = TestRun(id: id, name: name ?? "\(suite.name) \(UTCTime.iso8601(now))", suite: suite, createdAt: now, cases: cases, timing: timing)
        let withdrawn = state.withLock { registry -> [String] in
            registry.runs[id] = run
            registry.open.insert(id, at: 0)
            registry.indexes[id] = OpenRunIndex(run)
            registry.openedAt[id] = now
            registry.keep(cardsOf: run)
            save(run)
            return registry.makeRoom()
        }
        issuedCards?.withdraw(withdrawn)
        return run
    }

    /// The run, finished first if it has been idle too long.
    public func run(_ id: String) -> TestRun? {
        let now = clock()
        return state.withLock { registry in
            closeIdleRuns(at: now, in: &registry)
            return registry.runs[id]
        }
    }

    /// Every run, newest first.
    public var all: [TestRun] {
        let now = clock()
        return state.withLock { registry in
            closeIdleRuns(at: now, in: &registry)
            return Array(registry.runs.values)
        }.sorted { $0.createdAt > $1.createdAt }
    }

    /// Finishes a run: no transaction is attached to it any more. Nil when there is no such run.
    public func finish(_ id: String) -> TestRun? {
        let now = clock()
        return state.withLock { registry -> TestRun? in
            guard registry.runs[id] != nil else { return nil }
            Self.close(id, at: now, because: "finished", in: &registry)
            if let run = registry.runs[id] { save(run) }
            return registry.runs[id]
        }
    }

    /// Starts a new attempt of each case named (every failed case when `caseIDs` is empty is the
    /// caller's choice: it passes them), reopening a finished run. Throws for a case the run does not have.
    public func retry(_ id: String, cases caseIDs: [String]) throws(SuiteError) -> TestRun? {
        let now = clock()
        let run = try state.withLock { registry throws(SuiteError) -> TestRun? in
            guard var run = registry.runs[id] else { return nil }
            // Sets, not a search of one list per item of the other: a request may name thousands of cases (schemathesis
            // sent 9,504, and the two nested searches held the answer 11 s under CI load).
            let known = Set(run.cases.map(\.id)), named = Set(caseIDs)
            if let unknown = caseIDs.first(where: { !known.contains($0) }) { throw SuiteError("run \(id) has no case \(unknown)") }
            for index in run.cases.indices where named.contains(run.cases[index].id) { run.cases[index].retry() }
            run.lastActivityAt = now
            if run.state == .finished {
                run.state = .open
                run.finishedAt = nil
                run.finishedBecause = nil
                registry.open.insert(id, at: 0)
                registry.openedAt[id] = now
            }
            registry.runs[id] = run
            registry.indexes[id] = OpenRunIndex(run)
            save(run)
            return run
        }
        return run
    }

    /// The case a transaction belongs to: the one its `X-Harness-Case` tag names, else the one its
    /// card was issued to, else the first case of the newest open run with its scenario, version
    /// and channel and no transaction yet.
    public func attachment(for entry: JournalEntry) async -> RunAttachment { attach(entry) }

    /// `entry` attached (``runCase(for:only:)``), or for a tagged one that attaches nowhere, why.
    /// A refused message of the party that no case takes is kept by the runs it concerns
    /// (``noteRefusedOutsideCases(_:tag:parties:only:)``): by those of the parties it failed. Asked for one run (`only`), the
    /// caller says which parties (`noting`), or none: another run may take it.
    public func attach(_ entry: JournalEntry, only runID: String? = nil, noting: Set<ConformanceCheck.Party>? = nil) -> RunAttachment {
        if let attached = runCase(for: entry, only: runID) { return .attached(attached) }
        let parties = noting ?? (runID == nil ? entry.refusedParties : [])
        if !parties.isEmpty { noteRefusedOutsideCases(entry.dsTransID, tag: entry.caseTag, parties: parties, only: runID) }
        guard let tag = entry.caseTag else { return .none }
        return .refused(problem(withTag: tag, for: entry))
    }

    /// Keeps a refused message that no case took in the open run its tag names, or without a tag in every open run
    /// (`only`: that one) of a party it failed a check of: a 3DS Server whose PReq the DS refused sees why its cases
    /// were not attempted.
    public func noteRefusedOutsideCases(_ dsTransID: String, tag: String?, parties: Set<ConformanceCheck.Party>, only runID: String? = nil) {
        let now = clock()
        state.withLock { registry in
            closeIdleRuns(at: now, in: &registry)
            let named = tag.map { [Self.split($0).run] }
            for id in named ?? registry.open where runID == nil || runID == id {
                guard registry.indexes[id] != nil, var run = registry.runs[id], named != nil || parties.contains(run.suite.party) else { continue }
                run.noteRefusedOutsideCases(dsTransID)
                registry.runs[id] = run
                save(run)
            }
        }
    }

    /// Whether run `id` is open (nil: this instance does not hold it).
    public func isOpen(_ id: String) -> Bool? {
        let now = clock()
        return state.withLock { registry in
            closeIdleRuns(at: now, in: &registry)
            return registry.runs[id].map { $0.state == .open }
        }
    }

    /// `only`: the one run it may attach to (a run of this instance that another, which took the transaction, asks for).
    public func runCase(for entry: JournalEntry, only runID: String? = nil) -> JournalEntry.RunCase? {
        let now = clock()
        let attached = state.withLock { registry -> (run: TestRun, caseID: String)? in
            closeIdleRuns(at: now, in: &registry)
            let found: (run: TestRun, caseID: String)?
            // Another run than the one asked for takes nothing here.
            func allowed(_ id: String) -> Bool { runID == nil || runID == id }
            if let tag = entry.caseTag {
                found = allowed(Self.split(tag).run) ? Self.attachTagged(entry, tag: tag, at: now, in: &registry) : nil
            } else if let pan = entry.cardNumber, let issued = registry.cards[pan] {
                // A finished run's card attaches nowhere, as a tag naming it would not.
                found = registry.indexes[issued.run] == nil || !allowed(issued.run) ? nil
                    : Self.attach(entry.dsTransID, to: issued.position, of: issued.run, at: now, in: &registry)
            } else {
                found = Self.attachByScenario(entry, in: runID.map { [$0] }, at: now, in: &registry)
            }
            // Saved under the lock: the archive keeps the last save of a run, so saves go in the order of the changes.
            if let found { save(found.run) }
            return found
        }
        guard let attached else { return nil }
        return JournalEntry.RunCase(run: attached.run.id, caseID: attached.caseID)
    }

    /// Why `entry`'s tag attached it to nothing, for the transaction's record.
    public func problem(withTag tag: String, for entry: JournalEntry) -> String {
        let (runID, caseID) = Self.split(tag)
        return state.withLock { registry in
            guard let run = registry.runs[runID] else { return "names no run (\(HarnessCaseHeader.name): RUN/CASE, ids from GET /admin/runs)" }
            guard run.state == .open else { return "names run \(runID), which is finished" }
            guard let position = Self.position(of: caseID, in: runID, for: entry, in: registry) else {
                return caseID.map { "run \(runID) has no case \($0)" }
                    ?? "run \(runID) has no case of scenario \(entry.scenario ?? "none"), version \(entry.version ?? "none"), deviceChannel \(entry.channel ?? "none")"
            }
            return "case \(run.cases[position].id) has its \(RunCase.maxTransactionsPerAttempt) transactions for this attempt: retry it for more"
        }
    }

    /// The first waiting case of the newest open run with the entry's scenario, version and channel.
    private static func attachByScenario(_ entry: JournalEntry, in runs: [String]?, at now: Date, in registry: inout Registry) -> (run: TestRun, caseID: String)? {
        guard let scenario = entry.scenario, let version = entry.version, let channel = entry.channel else { return nil }
        let key = OpenRunIndex.key(scenario, version, channel)
        for id in runs ?? registry.open {
            if let position = registry.indexes[id]?.waiting[key]?.first { return attach(entry.dsTransID, to: position, of: id, at: now, in: &registry) }
        }
        return nil
    }

    private static func split(_ tag: String) -> (run: String, case: String?) {
        guard let slash = tag.firstIndex(of: "/") else { return (tag, nil) }
        return (String(tag[..<slash]), String(tag[tag.index(after: slash)...]))
    }

    private static func attachTagged(_ entry: JournalEntry, tag: String, at now: Date, in registry: inout Registry) -> (run: TestRun, caseID: String)? {
        let (runID, caseID) = split(tag)
        guard registry.indexes[runID] != nil, let position = position(of: caseID, in: runID, for: entry, in: registry) else { return nil }
        return attach(entry.dsTransID, to: position, of: runID, at: now, in: &registry)
    }

    /// Where the case a tag names stands in open run `runID`: the case `caseID`, or without one, the
    /// case the entry's scenario, version and channel match.
    private static func position(of caseID: String?, in runID: String, for entry: JournalEntry, in registry: Registry) -> Int? {
        if let caseID { return registry.indexes[runID]?.cases[caseID] }
        let key = OpenRunIndex.key(entry.scenario ?? "", entry.version ?? "", entry.channel ?? "")
        return registry.runs[runID]?.cases.firstIndex { OpenRunIndex.key($0) == key }
    }

    private static func attach(_ dsTransID: String, to position: Int, of runID: String, at now: Date,
                               in registry: inout Registry) -> (run: TestRun, caseID: String)? {
        guard var run = registry.runs[runID] else { return nil }
        // The run's record is taken out while it changes, so that its cases are not copied.
        registry.runs[runID] = nil
        defer { registry.runs[runID] = run }
        let key = OpenRunIndex.key(run.cases[position])
        guard run.cases[position].attach(dsTransID, at: now) else { return nil }
        registry.indexes[runID]?.taken(position, key: key)
        run.lastActivityAt = now
        return (run, run.cases[position].id)
    }

    /// Finishes the open runs idle past their time: under the lock of whatever reads or attaches next.
    private func closeIdleRuns(at now: Date, in registry: inout Registry) {
        for id in registry.open where registry.runs[id].map({ $0.idleUntil <= now }) ?? true {
            let idleFor = registry.runs[id].map { Int($0.timing.idle) } ?? 0
            Self.close(id, at: now, because: "idle: no transaction for \(idleFor) s", in: &registry)
            if let run = registry.runs[id] { save(run) }
        }
    }

    private static func close(_ id: String, at now: Date, because reason: String, in registry: inout Registry) {
        registry.runs[id]?.finish(at: now, because: reason)
        registry.open.removeAll { $0 == id }
        registry.indexes[id] = nil
        registry.openedAt[id] = nil
    }

    private func save(_ run: TestRun) {
        archive?.save(role: Self.role, id: run.id) { run.archivedJSON }
    }
}
