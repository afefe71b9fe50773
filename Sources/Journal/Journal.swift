public import EMV3DS
import Foundation
public import JSON
public import Store
import Synchronization

/// Told of each transaction as it begins: the run case it belongs to, if any (in a cluster, the run may live
/// at another instance: asked, not read).
public protocol JournalListener: Sendable {
    func attachment(for entry: JournalEntry) async -> RunAttachment
}

/// Where a transaction was attached as it began.
public enum RunAttachment: Sendable, Equatable {
    case attached(JournalEntry.RunCase)
    /// Its `caseTag` attached it to nothing: why, for its record.
    case refused(String)
    /// No run takes it.
    case none
}

/// Every transaction as the three roles saw it together (``JournalEntry``): in memory as the
/// cache, in the archive (role `journal`) to outlive the process. An entry is saved when it
/// ends (and after any later change), when it leaves memory, and at `flush` (a clean stop): a
/// transaction changes ten times in its life, and an entry is kilobytes. It feeds the
/// inspector's live list: each change has a number, and a reader waits for the next.
public final class Journal: Sendable {
    private let entries: TransactionStore<JournalEntry>
    private let archive: (any TransactionArchive)?
    private let listener = Mutex<(any JournalListener)?>(nil)
    private let feed = Mutex(Feed())
    /// Entries changed and not saved since, while open: in a cluster they are saved before the answer that made them
    /// (``saveChanged()``), so another instance that takes a transaction up has its entry. Nil on one instance.
    private let changed: Mutex<Set<String>>?
    static let role = "journal"

    private struct Feed {
        var sequence: UInt64 = 0
        /// The latest changes, oldest first: what a live reader is sent.
        var changes: [(sequence: UInt64, dsTransID: String)] = []
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
        static let kept = 1024
    }

    /// `savesBeforeAnswers`: in a cluster, an open entry's changes are saved before each answer (``saveChanged()``), not
    /// only when it ends.
    public init(capacity: Int = StoreDefaults.maxTransactions, archive: (any TransactionArchive)? = nil, savesBeforeAnswers: Bool = false) {
        // An open entry pushed out of memory is saved as it is; an ended one already was.
        entries = TransactionStore(capacity: capacity) { entry in
            if entry.state == .open { Self.save(entry, to: archive) }
        }
        self.archive = archive
        changed = savesBeforeAnswers && archive != nil ? Mutex([]) : nil
    }

    /// Saves the open entries changed since the last call: before an answer, in a cluster.
    public func saveChanged() {
        guard let ids = changed?.withLock({ changed -> Set<String> in defer { changed = [] }; return changed }), !ids.isEmpty else { return }
        for id in ids { if let entry = entries.get(id), entry.state == .open { save(entry) } }
    }

    /// The entry of `dsTransID` read from the store into memory, when memory does not hold it: with its transaction, taken
    /// up by this instance of a cluster, whose later messages and checks it records.
    public func takeUp(_ dsTransID: String?) async {
        guard let dsTransID, !entries.contains(dsTransID), let archive,
              let entry = await archive.record(role: Self.role, id: dsTransID).flatMap({ try? JSONReader.parse($0.json).value }).flatMap(JournalEntry.init(stored:))
        else { return }
        _ = entries.insert(dsTransID, entry)
    }

    private static func save(_ entry: JournalEntry, to archive: (any TransactionArchive)?) {
        archive?.save(role: role, id: entry.dsTransID) { entry.archivedJSON }
    }

    private func save(_ entry: JournalEntry) { Self.save(entry, to: archive) }

    /// Saves every open entry: at a clean stop, so a challenge under way outlives it.
    public func flush() {
        for (_, entry) in entries.newest(limit: entries.capacity, where: { $0.state == .open }) { save(entry) }
    }

    public func setListener(_ listener: any JournalListener) { self.listener.withLock { $0 = listener } }

    /// Starts the entry of a transaction the DS has just given `dsTransID`.
    public func open(_ entry: JournalEntry) async {
        var entry = entry
        let listener = listener.withLock { $0 }
        let attachment = await listener?.attachment(for: entry) ?? (entry.caseTag == nil ? .none : .refused("no test run is kept"))
        switch attachment {
        case .attached(let runCase): entry.runCase = runCase
        case .refused(let problem): entry.caseTagProblem = problem
        case .none: break
        }
        entries.put(entry.dsTransID, entry)
        // One opened ended (a refused PReq's) is saved as any that ends.
        if entry.state == .ended { save(entry) } else { changed?.withLock { _ = $0.insert(entry.dsTransID) } }
        published(entry.dsTransID)
    }

    /// Changes the entry of `dsTransID`, if the journal has it (an id no DS of this harness gave has none).
    public func update(_ dsTransID: String?, _ change: (inout JournalEntry) -> Void) {
        guard let dsTransID else { return }
        let updated = entries.update(dsTransID) { entry -> JournalEntry? in
            change(&entry)
            return entry.state == .ended ? entry : nil
        }
        guard let updated else { return }
        if let ended = updated { save(ended) } else { changed?.withLock { _ = $0.insert(dsTransID) } }
        published(dsTransID)
    }

    /// Adds a message between two parties: `body` as it came or went, JSON unless `isJSON` is false
    /// (a JWE that did not decrypt, an answer a fault garbled).
    public func message(_ dsTransID: String?, from: Participant, to: Participant, type: String, body: [UInt8], note: String? = nil,
                        isJSON: Bool = true) {
        update(dsTransID) { $0.add(from: from, to: to, type: type, body: body, note: note, isJSON: isJSON) }
    }

    public func message(_ dsTransID: String?, from: Participant, to: Participant, _ json: JSONValue, note: String? = nil) {
        message(dsTransID, from: from, to: to, type: json["messageType"]?.stringValue ?? "message", body: JSONWriter.write(json), note: note)
    }

    /// A message that relays the first one of its `type` from `source`, kept as what it changed of it: `original` as read,
    /// `relayed` as sent (`body`, its bytes, kept only when there is no message to relay).
    public func relayed(_ dsTransID: String?, from: Participant, to: Participant, type: String, of source: Participant, original: JSONValue,
                        relayed: JSONValue, body: [UInt8]) {
        update(dsTransID) { $0.add(from: from, to: to, type: type, relaying: source, original: original, relayed: relayed, body: body) }
    }

    public func check(_ dsTransID: String?, _ result: CheckResult) {
        update(dsTransID) { $0.record(result) }
    }

    /// Ends the entry (first reason kept); `transStatus` is the final one when given.
    public func end(_ dsTransID: String?, transStatus: String? = nil, because reason: String) {
        update(dsTransID) { $0.end(transStatus: transStatus, because: reason) }
    }

    public func entry(_ dsTransID: String) -> JournalEntry? { entries.get(dsTransID) }

    /// Whether memory holds the entry of `dsTransID` (without copying it out).
    public func holds(_ dsTransID: String) -> Bool { entries.contains(dsTransID) }

    /// Entries held in memory now, and at most (the newest; the store keeps every one).
    public var entriesInMemory: Int { entries.count }
    public var memoryBound: Int { entries.capacity }

    /// The entry's JSON: from memory, else from the archive (an entry of an earlier process).
    public func json(_ dsTransID: String) async -> JSONValue? {
        if let entry = entries.get(dsTransID) { return entry.json }
        return await archive?.record(role: Self.role, id: dsTransID).flatMap { try? JSONReader.parse($0.json).value }.map(JournalEntry.expanded)
    }

    /// What grading reads of an entry: its summary, checks and whether it has ended.
    public typealias Outline = (summary: JSONValue, checks: [CheckResult], ended: Bool)

    /// The outline of an entry in memory, as it stands (nothing written or parsed).
    public func outline(_ dsTransID: String) -> Outline? {
        entries.get(dsTransID).map { ($0.summary, $0.checks, $0.state == .ended) }
    }

    /// The outlines of those of `dsTransIDs` that memory no longer holds, from the store.
    public func storedOutlines(_ dsTransIDs: [String]) async -> [String: Outline] {
        guard let archive else { return [:] }
        var found: [String: Outline] = [:]
        for id in dsTransIDs where !entries.contains(id) {
            guard let json = await archive.record(role: Self.role, id: id).flatMap({ try? JSONReader.parse($0.json).value }) else { continue }
            found[id] = Self.outline(ofRecord: json)
        }
        return found
    }

    /// The outline of an entry as stored, or as ``json(_:)`` shows it.
    public static func outline(ofRecord json: JSONValue) -> Outline {
        (summary(ofRecord: json), (json["checks"]?.arrayValue ?? []).compactMap(CheckResult.init(json:)),
         json["state"]?.stringValue == JournalEntry.State.ended.rawValue)
    }

    /// A stored entry's summary: the record without its checks and messages.
    static func summary(ofRecord json: JSONValue) -> JSONValue {
        var summary = json
        summary.set("messages", nil)
        summary.set("checks", nil)
        return summary
    }

    /// What the inspector's list filters by; nil matches all.
    public struct Filter: Sendable {
        public var pan: String?
        public var scenario: String?
        /// A transStatus (Y, C…), a state (open, ended) or a verdict (pass, fail, warning).
        public var status: String?
        public var run: String?

        public init(pan: String? = nil, scenario: String? = nil, status: String? = nil, run: String? = nil) {
            self.pan = pan
            self.scenario = scenario
            self.status = status
            self.run = run
        }

        public func accepts(_ summary: JSONValue) -> Bool {
            if let pan {
                guard let masked = summary["acctNumber"]?.stringValue, pan == masked || CardNumber.masked(pan) == masked || (pan.count == 4 && masked.hasSuffix(pan)) else { return false }
            }
            if let scenario, summary["scenario"]?.stringValue != scenario { return false }
            if let run, summary["run"]?.stringValue != run { return false }
            if let status, !["transStatus", "state", "verdict"].contains(where: { summary[$0]?.stringValue == status }) { return false }
            return true
        }
    }

    /// The newest entries' summaries, newest first: memory, then the archive for what memory no longer has.
    public func list(limit: Int, filter: Filter = Filter()) async -> [JSONValue] {
        var found = entries.newest(limit: limit) { filter.accepts($0.summary) }.map(\.record.summary)
        guard found.count < limit, let archive else { return found }
        let seen = Set(found.compactMap { $0["dsTransID"]?.stringValue })
        for record in await archive.recent(role: Self.role, limit: max(limit * 4, 200)) where !seen.contains(record.id) {
            guard found.count < limit, let json = try? JSONReader.parse(record.json).value else { continue }
            let summary = Self.summary(ofRecord: json)
            if filter.accepts(summary) { found.append(summary) }
        }
        return found
    }

    /// The change number now: a live reader's starting cursor.
    public var sequence: UInt64 { feed.withLock { $0.sequence } }

    /// The summaries of entries changed after `cursor`, oldest change first, and the new cursor;
    /// nil when `cursor` is older than the changes kept (the reader should list again).
    public func changes(after cursor: UInt64) -> (entries: [JSONValue], cursor: UInt64)? {
        let (ids, now, complete) = feed.withLock { feed -> ([String], UInt64, Bool) in
            // A cursor past the newest change is an earlier process's; one before the oldest kept has missed some.
            let complete = cursor <= feed.sequence && (feed.changes.first.map { $0.sequence <= cursor + 1 } ?? true)
            var seen = Set<String>()
            var ids: [String] = []
            for change in feed.changes.reversed() where change.sequence > cursor && seen.insert(change.dsTransID).inserted {
                ids.append(change.dsTransID)
            }
            return (ids.reversed(), feed.sequence, complete)
        }
        guard complete else { return nil }
        return (ids.compactMap { entries.get($0)?.summary }, now)
    }

    /// Returns when a change after `cursor` is made, or after `timeout`, or at `wakeAll`.
    public func waitForChange(after cursor: UInt64, timeout: Duration) async {
        let id = feed.withLock { feed -> UInt64 in
            feed.nextWaiter += 1
            return feed.nextWaiter
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            self.resume(id)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = feed.withLock { feed -> Bool in
                guard feed.sequence <= cursor else { return true }
                feed.waiters[id] = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
        timer.cancel()
    }

    private func resume(_ id: UInt64) {
        feed.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }

    /// Ends every wait: at shutdown, so no reader holds the server open.
    public func wakeAll() {
        let waiters = feed.withLock { feed in
            defer { feed.waiters = [:] }
            return Array(feed.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    /// Numbers the change and wakes the readers; the numbers follow the order of the list.
    private func published(_ dsTransID: String) {
        let waiters = feed.withLock { feed -> [CheckedContinuation<Void, Never>] in
            feed.sequence += 1
            feed.changes.append((feed.sequence, dsTransID))
            if feed.changes.count > Feed.kept * 2 { feed.changes.removeFirst(feed.changes.count - Feed.kept) }
            defer { feed.waiters = [:] }
            return Array(feed.waiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    public var count: Int { entries.count }
}
