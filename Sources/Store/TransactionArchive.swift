/// A transaction record as the archive keeps it: the role's JSON view, as written.
public struct ArchivedRecord: Sendable, Equatable {
    /// `3ds-server`, `ds` or `acs`.
    public let role: String
    public let id: String
    /// Milliseconds since 1970 of the last change saved.
    public let updated: Int64
    public let json: [UInt8]

    public init(role: String, id: String, updated: Int64, json: [UInt8]) {
        self.role = role
        self.id = id
        self.updated = updated
        self.json = json
    }
}

/// What the archive has done: for `/metrics`, the log and tests.
public struct ArchiveStatus: Sendable, Equatable {
    /// Records written since start (a record changed five times before a write counts once).
    public var written = 0
    /// Records that were to be written and never will be: the queue was full, or a write failed.
    public var lost = 0
    /// Records waiting to be written.
    public var pending = 0
    /// Records removed by retention since start.
    public var removed = 0
    /// The last failure, if any.
    public var lastError: String?
}

/// When a saved record is on disk, against the answer that made it (`store.durability`).
public enum StoreDurability: String, Sendable, CaseIterable {
    /// Written behind the answers, in batches: a record is on disk up to the batch window (250 ms) and
    /// its write later; a `kill -9` in between loses it. The cheapest, and the default.
    case behind
    /// The answer waits until the records it made are written (in the operating system's hands):
    /// what was answered survives the harness's crash, not the machine's.
    case answered
    /// As `answered`, and each write flushed to the disk (`fsync`): what was answered survives the machine's crash too.
    case synced

    /// How long a writer lets changes gather after the first: a record is on disk this much later than in memory at
    /// most (plus the write), and a batch holds what came meanwhile. None when answers wait for their writes:
    /// what came during a write is the next batch.
    var batchWindowSeconds: Double { self == .behind ? 0.25 : 0 }
}

/// Where transaction records outlive the process. Saving never blocks: records are queued,
/// made into JSON and written in batches off the caller's thread (write-behind). One small
/// protocol, so that a server database can stand where SQLite stands.
public protocol TransactionArchive: Sendable {
    /// Queues the record of (`role`, `id`); `encode` makes its JSON later, on the writer's thread.
    /// A record queued again before it is written is written once, as last queued.
    func save(role: String, id: String, _ encode: @escaping @Sendable () -> [UInt8])
    /// The record as last written (records still queued are the caller's, in memory). Awaited,
    /// so that a database's answer never holds the loop that asks.
    func record(role: String, id: String) async -> ArchivedRecord?
    /// The newest records of `role`, newest first.
    func recent(role: String, limit: Int) async -> [ArchivedRecord]
    /// The same, blocking the caller: at start only (the test runs kept), before anything is served.
    func recentAtStart(role: String, limit: Int) -> [ArchivedRecord]
    var status: ArchiveStatus { get }
    /// When a saved record is on disk, against the answer that made it.
    var durability: StoreDurability { get }
    /// Returns once every record saved before the call is written (or lost, or the archive closed):
    /// what an answer waits for unless the durability is `behind`. False when they may not be stored: a write
    /// failed or a save was refused, and no write has succeeded since.
    @discardableResult func written() async -> Bool
    /// Writes what is queued (within `timeoutSeconds`) and closes; later saves are lost.
    func close(timeoutSeconds: Double)
    /// Why the store cannot serve a transaction now (it does not answer a query within a few seconds), or nil when it can:
    /// what readiness (`GET /health/ready`) and `threeds_store_up` say.
    func probe() async -> String?
}

extension TransactionArchive {
    /// An archive that says nothing of its writes is written behind the answers.
    public var durability: StoreDurability { .behind }
    @discardableResult public func written() async -> Bool { true }
    /// A local file answers as long as the process runs.
    public func probe() async -> String? { nil }
}

/// Work due later that must be done once even if the instance that set it dies: a decoupled
/// authentication's RReq, a challenge's time limit. Its instance runs it from its own timer after claiming it
/// (``SharedWork/claim(_:)``); another instance claims it once it is overdue.
public struct ScheduledJob: Sendable, Equatable {
    /// Unique: scheduling the same id again replaces nothing (the first stays).
    public let id: String
    /// What runs it (`acs.rreq`).
    public let kind: String
    /// Milliseconds since 1970.
    public let due: Int64
    /// Everything the run needs, as JSON: another instance has nothing else.
    public let payload: [UInt8]
    /// The record whose home does the job when its time comes (a challenge's, for its time limit); nil when the first
    /// instance to claim it does. Known to the instance that scheduled it, not stored.
    public let home: RecordID?

    public init(id: String, kind: String, due: Int64, payload: [UInt8], home: RecordID? = nil) {
        self.id = id
        self.kind = kind
        self.due = due
        self.payload = payload
        self.home = home
    }
}

/// A record type a role keeps and the archive can write.
public protocol ArchivableRecord: Sendable {
    /// The record as JSON: what `GET .../transactions/{id}` answers.
    var archivedJSON: [UInt8] { get }
    /// True when no message is due for the transaction any more: a settled record may leave
    /// memory once the archive has it (see ``TransactionStore``); one under way stays.
    var isSettled: Bool { get }
}

extension ArchivableRecord {
    /// Never settled unless the record says so: it stays in memory up to the store's capacity.
    public var isSettled: Bool { false }
}
