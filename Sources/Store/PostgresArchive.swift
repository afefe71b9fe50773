import EventLoops
import Foundation
public import Postgres
import Synchronization

/// The shared ``TransactionArchive``: one PostgreSQL database that several harness instances
/// write to and read from (`store.backend: postgres`, `store.url`).
///
/// Writes go as the embedded store's do: queued (a record saved again before its write is written
/// once, as last saved), then written in batches by a connection of its own on a loop of its own
/// (the thread `store-writer`), through libpq's asynchronous API on a libuv poll handle, so no
/// loop that serves requests waits for the database. Each batch is one upsert per 500 records.
/// Reads (a record no longer in memory: `GET …/transactions/{id}`, the inspector, a run's grading)
/// are awaited on a second connection on the same loop; only the start blocks (schema, runs kept).
public final class PostgresArchive: TransactionArchive {
    /// What the writer's loop alone touches.
    final class Writer {
        var connection: PostgresConnection?
        var flushing = false
        var removable: Int64
        var writesSinceRetention = 0
        var lastRetention = ContinuousClock.now

        init(removable: Int64) { self.removable = removable }
    }

    public let durability: StoreDurability
    let url: String
    let retention: SQLiteArchive.Retention
    let queue: WriteQueue
    /// The blocking connection of the start: the schema, and the runs kept (``recentAtStart(role:limit:)``).
    let reader: Mutex<BlockingPostgresConnection>
    let readConnection = Mutex<PostgresConnection?>(nil)
    /// Set when the store closes: no connection is made after it (the loop is stopping).
    let gaveUp = Atomic<Bool>(false)
    let group: EventLoopGroup
    let loop: EventLoop
    let writer: LoopBound<Writer>
    let drained = DispatchSemaphore(value: 0)
    let onLoss: @Sendable (Int, String) -> Void
    let now: @Sendable () -> Int64
    public let clock: HarnessClock
    /// The URL at which the other instances reach this one, written with each record (``home(role:id:)``).
    let instanceURL = Mutex<String?>(nil)

    /// The write queue's name for jobs (no role of records has it): queued and written with the records, to their own table.
    static let jobRole = " job"
    /// The same for shared counts.
    static let counterRole = " counter"
    /// Records per upsert statement: 5 parameters each, well under PostgreSQL's 65,535.
    static let rowsPerStatement = 500

    /// Connects to `url`, makes the schema when the database has none, and refuses one of another
    /// version, saying why. Blocks the caller while it does (at start, before anything is served).
    public init(url: String, retention: SQLiteArchive.Retention, durability: StoreDurability = .behind, maxPending: Int = StoreDefaults.maxPendingRecords,
                clock: HarnessClock = .system,
                onLoss: @escaping @Sendable (Int, String) -> Void = { _, _ in }) throws(PostgresError) {
        self.url = url
        self.retention = retention
        self.durability = durability
        queue = WriteQueue(maxPending: maxPending)
        self.now = clock.wallMilliseconds
        self.clock = clock
        self.onLoss = onLoss
        let connection = try BlockingPostgresConnection(url: url)
        try Self.prepareSchema(connection)
        // The records retention may remove, counted once here and then kept up to date, as the embedded store does.
        let counted = try connection.query("SELECT count(*) FROM transactions WHERE \(retention.removable)")
        reader = Mutex(connection)
        group = EventLoopGroup(loopCount: 1, threadName: SQLiteArchive.writerThreadName)
        loop = group.loops[0]
        writer = LoopBound(Writer(removable: counted.first?.first.flatMap { $0 }.flatMap { Int64($0) } ?? 0), on: loop)
    }

    public func save(role: String, id: String, _ encode: @escaping @Sendable () -> [UInt8]) {
        let (accepted, wasEmpty, lost) = queue.save(WriteQueue.Key(role: role, id: id), encode)
        if accepted {
            if wasEmpty { loop.execute { self.kick() } }
        } else if lost == 1 || lost % 1000 == 0 {
            onLoss(lost, "the store's queue is full (\(queue.maxPending) records waiting) or it is closed")
        }
    }

    public func record(role: String, id: String) async -> ArchivedRecord? {
        if let unwritten = queue.unwritten(WriteQueue.Key(role: role, id: id)) {
            return ArchivedRecord(role: role, id: id, updated: now(), json: unwritten())
        }
        let rows = await read("SELECT updated, record FROM transactions WHERE role = $1 AND id = $2", [role, id])
        guard let row = rows?.first, let updated = row[0].flatMap({ Int64($0) }), let record = row[1] else { return nil }
        return ArchivedRecord(role: role, id: id, updated: updated, json: Array(record.utf8))
    }

    public func recent(role: String, limit: Int) async -> [ArchivedRecord] {
        Self.records(role, await read(Self.recentQuery, [role, String(max(0, limit))]) ?? [])
    }

    public func recentAtStart(role: String, limit: Int) -> [ArchivedRecord] {
        Self.records(role, reader.withLock { try? $0.query(Self.recentQuery, [role, String(max(0, limit))]) } ?? [])
    }

    private static let recentQuery = "SELECT id, updated, record FROM transactions WHERE role = $1 ORDER BY updated DESC LIMIT $2"

    private static func records(_ role: String, _ rows: [[String?]]) -> [ArchivedRecord] {
        rows.compactMap { row in
            guard let id = row[0], let updated = row[1].flatMap({ Int64($0) }), let record = row[2] else { return nil }
            return ArchivedRecord(role: role, id: id, updated: updated, json: Array(record.utf8))
        }
    }

    /// The rows of a read, through the connection reads share (on the store's loop: awaited, so no
    /// serving loop waits); nil when the database cannot answer. Made at the first read, again after a failure.
    func read(_ sql: String, _ parameters: [String?]) async -> [[String?]]? {
        guard !gaveUp.load(ordering: .relaxed) else { return nil }
        do throws(PostgresError) { return try await rows(sql, parameters) } catch {
            queue.failed("read: \(error)")
            return nil
        }
    }

    /// How long a probe waits for the database's answer: longer, and a balancer's health check times out first.
    static let probeTimeout = Duration.seconds(2)

    public func probe() async -> String? {
        guard !gaveUp.load(ordering: .relaxed) else { return "the store is closed" }
        return await withTaskGroup(of: String?.self) { group in
            group.addTask { [self] in
                do throws(PostgresError) { _ = try await rows("SELECT 1", []); return nil } catch { return "PostgreSQL: \(error)" }
            }
            group.addTask { try? await Task.sleep(for: Self.probeTimeout); return "PostgreSQL did not answer within \(Self.probeTimeout)" }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The rows of a query on the connection reads share, made at the first read and again after a loss.
    func rows(_ sql: String, _ parameters: [String?]) async throws(PostgresError) -> [[String?]] {
        let connection: PostgresConnection
        if let existing = readConnection.withLock({ $0 }) {
            connection = existing
        } else {
            let made = try await PostgresConnection.connect(url, on: loop)
            connection = readConnection.withLock { current in
                guard let current else { current = made; return made }
                made.close()  // another read made one meanwhile
                return current
            }
        }
        do {
            return try await connection.query(sql, parameters).rows
        } catch {
            // A lost connection is made anew by the next read; an SQL error leaves it (and the reads queued on it) be.
            if error.isConnectionLoss {
                readConnection.withLock { if $0 === connection { $0 = nil } }
                connection.close()
            }
            throw error
        }
    }

    /// Names this instance in the records it writes from now on: its URL as the other instances reach it.
    public func setInstanceURL(_ url: String?) { instanceURL.withLock { $0 = url } }

    public var status: ArchiveStatus { queue.status }

    @discardableResult public func written() async -> Bool { await queue.written() }

    public func close(timeoutSeconds: Double = 10) {
        guard queue.close() else { return }
        loop.execute { self.kick() }
        if drained.wait(timeout: .now() + timeoutSeconds) == .timedOut {
            onLoss(status.pending, "the store did not finish writing within \(timeoutSeconds) s of shutdown")
        }
        gaveUp.store(true, ordering: .relaxed)
        queue.settle(upTo: .max, all: true)
        loop.execute { self.writer.value.connection?.close() }
        readConnection.withLock { connection in
            connection?.close()
            connection = nil
        }
        group.shutdown()
        reader.withLock { $0.close() }
    }
}
