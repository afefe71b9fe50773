import CSQLite
import Foundation
import Synchronization

/// The embedded ``TransactionArchive``: one SQLite file in WAL mode, written by one thread
/// of its own in batches, read through a second connection.
///
/// Bounded: at most `maxPending` records wait; past that a save is counted as lost (and
/// reported) rather than held. Retention keeps at most `maxRecords` records, none older
/// than `maxAge`.
public final class SQLiteArchive: TransactionArchive {
    public struct Retention: Sendable, Equatable {
        public var maxRecords: Int
        public var maxAgeSeconds: Int64
        /// Roles whose records retention never removes (and does not count): test runs, which
        /// are few and what a user comes back for.
        public var keptRoles: [String]
        public init(maxRecords: Int, maxAgeSeconds: Int64, keptRoles: [String] = []) {
            self.maxRecords = maxRecords
            self.maxAgeSeconds = maxAgeSeconds
            self.keptRoles = keptRoles
        }

        /// The SQL condition of the records retention may remove.
        var removable: String {
            keptRoles.isEmpty ? "TRUE" : "role NOT IN (" + keptRoles.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }.joined(separator: ",") + ")"
        }
    }

    public let path: String
    public let durability: StoreDurability
    private let retention: Retention
    private let queue: WriteQueue
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let reader: Mutex<SQLiteConnection>
    /// Told of losses (the first, then one in a thousand) with the count so far and the reason.
    private let onLoss: @Sendable (Int, String) -> Void
    /// Milliseconds since 1970: the time records are stamped with and retention measures by.
    private let now: @Sendable () -> Int64

    /// The writer thread's name, as /proc/PID/task/TID/comm shows it.
    public static let writerThreadName = "store-writer"


    /// The schema this code reads and writes (`PRAGMA user_version`). 2: records in a rowid
    /// table, appended in the order written, found by a unique index on (role, id). Version 1 kept
    /// them in a WITHOUT ROWID table keyed by (role, id): random keys (UUIDs) put each record,
    /// kilobytes with its overflow pages, on a page of its own, twice the bytes and the CPU per
    /// write; a version 1 file is moved over at open.
    static let schemaVersion: Int64 = 2

    /// Opens (creating it and its folder when missing) the archive at `path`. Fails, saying
    /// why, when the file cannot be created or read, or is another program's database.
    /// `pageLimit` caps the file at that many pages (4 KiB each), as a full disk would: for tests.
    public init(path: String, retention: Retention, durability: StoreDurability = .behind, maxPending: Int = StoreDefaults.maxPendingRecords, pageLimit: Int? = nil,
                clock: HarnessClock = .system,
                onLoss: @escaping @Sendable (Int, String) -> Void = { _, _ in }) throws(SQLiteError) {
        self.path = path
        self.durability = durability
        self.now = clock.wallMilliseconds
        self.retention = retention
        queue = WriteQueue(maxPending: maxPending)
        self.onLoss = onLoss
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
                throw SQLiteError(operation: "create \(folder)", code: SQLITE_CANTOPEN, message: "\(error.localizedDescription)")
            }
        }
        let writer = try SQLiteConnection(path: path)
        try Self.prepareSchema(writer, path: path)
        // Each commit flushed to the disk before it returns: what `synced` promises.
        if durability == .synced { try writer.execute("PRAGMA synchronous = FULL") }
        if let pageLimit { try writer.execute("PRAGMA max_page_count = \(pageLimit)") }
        reader = Mutex(try SQLiteConnection(path: path, readOnly: true))
        // An insert, and an update when the record is there: two statements rather than one upsert,
        // so that the writer knows what each save added and counts the records without a scan.
        let insert = try writer.prepare("""
            INSERT INTO transactions (role, id, updated, record) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (role, id) DO NOTHING
            """)
        let update = try writer.prepare("UPDATE transactions SET updated = ?3, record = ?4 WHERE role = ?1 AND id = ?2")
        let owned = WriterConnection(connection: writer, insert: insert, update: update)
        // The thread holds the archive until `close` ends it.
        let thread = Thread {
            // Named for the kernel, so that its CPU and bytes can be read apart (`bench/run store`).
            Thread.current.name = SQLiteArchive.writerThreadName
            self.write(with: owned)
        }
        thread.start()
    }

    private static func prepareSchema(_ connection: SQLiteConnection, path: String) throws(SQLiteError) {
        // WAL: readers never wait for the writer. synchronous OFF: no fsync; a crash of the
        // harness loses nothing the OS has, a crash of the machine may lose the last batches
        // (records of a test tool, not ledgers), and the writer's time goes to writing, not
        // waiting for the disk. A page cache and a memory map large enough that upserts read
        // from memory, not with a system call per page.
        try connection.execute("""
            PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;
            PRAGMA cache_size = -32768; PRAGMA mmap_size = 268435456
            """)
        let version = try connection.integer("PRAGMA user_version")
        guard [0, 1, schemaVersion].contains(version) else {
            throw SQLiteError(operation: "open \(path)", code: SQLITE_MISMATCH,
                              message: "schema version \(version); this harness reads \(schemaVersion): move the file away")
        }
        guard version != schemaVersion else { return }
        try connection.execute("BEGIN IMMEDIATE")
        do throws(SQLiteError) {
            if version == 1 { try connection.execute("ALTER TABLE transactions RENAME TO transactions_v1") }
            try connection.execute("""
                CREATE TABLE transactions (
                    role TEXT NOT NULL, id TEXT NOT NULL, updated INTEGER NOT NULL, record BLOB NOT NULL,
                    UNIQUE (role, id));
                """)
            if version == 1 {
                // The old index went with the renamed table and goes with it.
                try connection.execute("""
                    INSERT INTO transactions (role, id, updated, record)
                        SELECT role, id, updated, record FROM transactions_v1 ORDER BY updated;
                    DROP TABLE transactions_v1;
                    """)
            }
            try connection.execute("""
                CREATE INDEX transactions_by_time ON transactions (updated);
                PRAGMA user_version = \(schemaVersion);
                COMMIT
                """)
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    public func save(role: String, id: String, _ encode: @escaping @Sendable () -> [UInt8]) {
        let (accepted, wasEmpty, lost) = queue.save(WriteQueue.Key(role: role, id: id), encode)
        if accepted {
            if wasEmpty { wake.signal() }
        } else if lost == 1 || lost % 1000 == 0 {
            onLoss(lost, "the store's queue is full (\(queue.maxPending) records waiting) or it is closed")
        }
    }

    // A read of the file holds its caller for a page read or two: the same on a loop as off it.
    public func record(role: String, id: String) async -> ArchivedRecord? { readRecord(role: role, id: id) }
    public func recent(role: String, limit: Int) async -> [ArchivedRecord] { readRecent(role: role, limit: limit) }
    public func recentAtStart(role: String, limit: Int) -> [ArchivedRecord] { readRecent(role: role, limit: limit) }

    func readRecord(role: String, id: String) -> ArchivedRecord? {
        if let unwritten = queue.unwritten(WriteQueue.Key(role: role, id: id)) {
            return ArchivedRecord(role: role, id: id, updated: now(), json: unwritten())
        }
        return reader.withLock { connection in
            do {
                let statement = try connection.prepare("SELECT updated, record FROM transactions WHERE role = ?1 AND id = ?2")
                try statement.bind(.text(role), .text(id))
                guard try statement.step() else { return nil }
                return ArchivedRecord(role: role, id: id, updated: statement.integer(0), json: statement.blob(1))
            } catch {
                return nil
            }
        }
    }

    func readRecent(role: String, limit: Int) -> [ArchivedRecord] {
        reader.withLock { connection in
            var records: [ArchivedRecord] = []
            do {
                let statement = try connection.prepare("SELECT id, updated, record FROM transactions WHERE role = ?1 ORDER BY updated DESC LIMIT ?2")
                try statement.bind(.text(role), .integer(Int64(max(0, limit))))
                while try statement.step() {
                    records.append(ArchivedRecord(role: role, id: statement.text(0), updated: statement.integer(1), json: statement.blob(2)))
                }
            } catch {}
            return records
        }
    }

    public var status: ArchiveStatus { queue.status }

    @discardableResult public func written() async -> Bool { await queue.written() }

    public func close(timeoutSeconds: Double = 10) {
        guard queue.close() else { return }
        wake.signal()
        if finished.wait(timeout: .now() + timeoutSeconds) == .timedOut {
            onLoss(status.pending, "the store did not finish writing within \(timeoutSeconds) s of shutdown")
            queue.settle(upTo: .max, all: true)  // no answer waits for a writer that gave up
        }
    }

    // MARK: The writer's thread

    private func write(with writer: WriterConnection) {
        var lastRetention = ContinuousClock.now
        var writesSinceRetention = 0
        // The records retention may remove, counted once here and then kept up to date: a
        // `count(*)` at each retention scanned an index of the whole file (24 ms at 200,000
        // records, every second under load, growing with the store).
        var removable: Int64 = 0
        do throws(SQLiteError) {
            removable = try writer.connection.integer("SELECT count(*) FROM transactions WHERE \(retention.removable)")
        } catch {
            queue.failed("counting the records: \(error)")
        }
        while true {
            // Wakes for work, or once a second for retention and to see a close; then lets a
            // batch gather: one commit per window, not one per record, is what keeps the store cheap.
            let window = durability.batchWindowSeconds
            if wake.wait(timeout: .now() + 1) == .success, window > 0, !queue.isClosing {
                Thread.sleep(forTimeInterval: window)
            }
            let (batch, upTo, closing) = queue.takeBatch()
            if !batch.isEmpty {
                removable += writeBatch(batch, with: writer)
                writesSinceRetention += batch.count
                queue.batchDone()
            }
            queue.settle(upTo: upTo)
            if WriteQueue.retentionDue(writesSince: writesSinceRetention, lastAt: lastRetention, closing: closing) {
                applyRetention(writer.connection, removable: &removable)
                lastRetention = .now
                writesSinceRetention = 0
            }
            // Closing was read in the lock that emptied the queue, and no save is taken after it.
            if closing { break }
        }
        queue.settle(upTo: .max, all: true)
        finished.signal()
    }

    /// Writes `batch` in one transaction; returns how many records it added that retention may remove.
    private func writeBatch(_ batch: WriteQueue.Batch, with writer: WriterConnection) -> Int64 {
        let now = now()
        let connection = writer.connection
        do throws(SQLiteError) {
            try connection.execute("BEGIN IMMEDIATE")
            var added: Int64 = 0
            for (key, encode) in batch {
                let record = encode()
                try writer.insert.bind(.text(key.role), .text(key.id), .integer(now), .blob(record))
                _ = try writer.insert.step()
                if connection.changes > 0 {
                    if !retention.keptRoles.contains(key.role) { added += 1 }
                } else {
                    try writer.update.bind(.text(key.role), .text(key.id), .integer(now), .blob(record))
                    _ = try writer.update.step()
                }
            }
            try connection.execute("COMMIT")
            queue.counted(written: batch.count)
            return added
        } catch {
            try? connection.execute("ROLLBACK")
            let lost = queue.lost(batch.count, because: error.description)
            onLoss(lost, error.isFull ? "the disk (or the store's page limit) is full: \(error)" : "\(error)")
            return 0
        }
    }

    /// Removes records older than the maximum age, then the oldest past the maximum count.
    /// `removable` counts the records retention may remove, and is kept to what is left.
    private func applyRetention(_ connection: SQLiteConnection, removable: inout Int64) {
        let cutoff = now() - retention.maxAgeSeconds * 1000
        var removed: Int64 = 0
        defer { if removed > 0 { queue.counted(removed: Int(removed)) } }
        do throws(SQLiteError) {
            let aged = try connection.prepare("DELETE FROM transactions WHERE updated < ?1 AND \(retention.removable)")
            try aged.bind(.integer(cutoff))
            _ = try aged.step()
            removed += connection.changes
            removable -= connection.changes
            let excess = removable - Int64(retention.maxRecords)
            if excess > 0 {
                let oldest = try connection.prepare("""
                    DELETE FROM transactions WHERE rowid IN \
                    (SELECT rowid FROM transactions WHERE \(retention.removable) ORDER BY updated LIMIT ?1)
                    """)
                try oldest.bind(.integer(excess))
                _ = try oldest.step()
                removed += connection.changes
                removable -= connection.changes
            }
        } catch {
            queue.failed("retention: \(error)")
        }
    }
}

/// The writer's connection, made on the caller's thread and from then on used on the
/// writer's thread alone: `@unchecked` for that one hand-over.
private struct WriterConnection: @unchecked Sendable {
    let connection: SQLiteConnection
    let insert: SQLiteStatement
    let update: SQLiteStatement
}
