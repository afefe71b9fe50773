import CLibPQ
import Foundation
public import Net
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
    private final class Writer: @unchecked Sendable {
        var connection: PostgresConnection?
        var flushing = false
        var removable: Int64 = 0
        var writesSinceRetention = 0
        var lastRetention = ContinuousClock.now
    }

    public let durability: StoreDurability
    private let url: String
    private let retention: SQLiteArchive.Retention
    private let queue: WriteQueue
    /// The blocking connection of the start: the schema, and the runs kept (``recentAtStart(role:limit:)``).
    private let reader: Mutex<PostgresReader>
    private let readConnection = Mutex<PostgresConnection?>(nil)
    /// Set when the store closes: no connection is made after it (the loop is stopping).
    private let gaveUp = Atomic<Bool>(false)
    private let group: EventLoopGroup
    private let loop: EventLoop
    private let writer = Writer()
    private let drained = DispatchSemaphore(value: 0)
    private let onLoss: @Sendable (Int, String) -> Void
    private let now: @Sendable () -> Int64
    /// The URL at which the other instances reach this one, written with each record (``home(role:id:)``).
    private let instanceURL = Mutex<String?>(nil)

    /// The schema this code reads and writes (`harness_schema.version`); an older one is migrated at start.
    static let schemaVersion = 6
    /// What takes a database of each older version one version on, in one transaction each.
    static let migrations: [Int: String] = [
        // 2: each record names the instance that holds it in memory (``home(role:id:)``).
        1: "ALTER TABLE transactions ADD COLUMN home text",
        // 3: jobs due later that any instance runs once (``schedule(_:)``).
        2: jobsTable,
        // 4: the instances of a cluster, the counts they share (``ClusterStore``), and a lease on each job claimed.
        3: clusterTables + "; ALTER TABLE harness_jobs ADD COLUMN IF NOT EXISTS claimed_until bigint",
        // 5: which transaction took each use, so that its DS and its ACS on two instances take one use between them.
        4: countUsesTable,
        // 6: the changes made through the balancer, which an instance started later makes too (``ClusterStore/changes()``).
        5: changesTable,
    ]
    static let changesTable = """
        CREATE TABLE harness_changes (seq bigserial PRIMARY KEY, id text UNIQUE NOT NULL, kind text NOT NULL, method text NOT NULL,
                                      target text NOT NULL, content_type text, body text NOT NULL, made bigint NOT NULL, expires bigint)
        """
    static let countUsesTable = "CREATE TABLE harness_counter_uses (id text NOT NULL, transaction text NOT NULL, PRIMARY KEY (id, transaction))"
    static let clusterTables = """
        CREATE TABLE harness_instances (url text PRIMARY KEY, seen bigint NOT NULL);
        CREATE TABLE harness_counters (id text PRIMARY KEY, remaining integer NOT NULL, expires bigint NOT NULL)
        """
    static let jobsTable = """
        CREATE TABLE harness_jobs (id text PRIMARY KEY, kind text NOT NULL, due bigint NOT NULL, payload text NOT NULL, home text,
                                   claimed_until bigint);
        CREATE INDEX harness_jobs_by_due ON harness_jobs (due)
        """
    /// The write queue's name for jobs (no role of records has it): queued and written with the records, to their own table.
    static let jobRole = " job"
    /// The same for shared counts.
    static let counterRole = " counter"
    /// Records per upsert statement: 5 parameters each, well under PostgreSQL's 65,535.
    static let rowsPerStatement = 500

    /// Connects to `url`, makes the schema when the database has none, and refuses one of another
    /// version, saying why. Blocks the caller while it does (at start, before anything is served).
    public init(url: String, retention: SQLiteArchive.Retention, durability: StoreDurability = .behind, maxPending: Int = StoreDefaults.maxPendingRecords,
                now: @escaping @Sendable () -> Int64 = SQLiteArchive.wallClock,
                onLoss: @escaping @Sendable (Int, String) -> Void = { _, _ in }) throws(PostgresError) {
        self.url = url
        self.retention = retention
        self.durability = durability
        queue = WriteQueue(maxPending: maxPending)
        self.now = now
        self.onLoss = onLoss
        let connection = try PostgresReader(url: url)
        try Self.prepareSchema(connection)
        // The records retention may remove, counted once here and then kept up to date, as the embedded store does.
        let counted = try connection.query("SELECT count(*) FROM transactions WHERE \(retention.removable)")
        reader = Mutex(connection)
        group = EventLoopGroup(loopCount: 1, threadName: SQLiteArchive.writerThreadName)
        loop = group.loops[0]
        writer.removable = counted.first?.first.flatMap { $0 }.flatMap { Int64($0) } ?? 0
    }

    /// The schema made, migrated or checked under an advisory lock, so that instances starting together do it once.
    private static func prepareSchema(_ connection: PostgresReader) throws(PostgresError) {
        // The server's notices ("relation … already exists, skipping") are not news to whoever starts the harness.
        _ = try connection.query("SET client_min_messages TO warning")
        _ = try connection.query("SELECT pg_advisory_lock(7210331)")
        defer { _ = try? connection.query("SELECT pg_advisory_unlock(7210331)") }
        _ = try connection.query("CREATE TABLE IF NOT EXISTS harness_schema (version integer NOT NULL)")
        let versions = try connection.query("SELECT version FROM harness_schema").compactMap { $0.first ?? nil }.compactMap { Int($0) }
        switch versions {
        case []:
            _ = try connection.query("""
                CREATE TABLE IF NOT EXISTS transactions (
                    role text NOT NULL, id text NOT NULL, updated bigint NOT NULL, record text NOT NULL, home text, PRIMARY KEY (role, id));
                CREATE INDEX IF NOT EXISTS transactions_by_time ON transactions (updated);
                \(jobsTable);
                \(clusterTables);
                \(countUsesTable);
                \(changesTable);
                INSERT INTO harness_schema (version) VALUES (\(schemaVersion))
                """)
        case let found where found.count == 1 && found[0] < schemaVersion && migrations[found[0]] != nil:
            for from in found[0]..<schemaVersion {
                guard let step = migrations[from] else { break }
                _ = try connection.query("BEGIN; \(step); UPDATE harness_schema SET version = \(from + 1); COMMIT")
            }
        case [schemaVersion]:
            break
        default:
            throw PostgresError(operation: "open the store", message: "schema version \(versions.map(String.init).joined(separator: ", ")); "
                                + "this harness reads versions 1 to \(schemaVersion) (and migrates the older to \(schemaVersion)): use another database, or a harness of that version")
        }
        preferLZ4(connection)
    }

    /// Records over 2 KB (journal entries, challenge records) are compressed as PostgreSQL stores them: with lz4 where the
    /// server has it (14 and later, built with it, as Debian's is), not the default pglz, which took two thirds of the
    /// database's CPU per challenge (perf, docs/benchmarks.md). Changed once; a server without lz4 keeps pglz.
    private static func preferLZ4(_ connection: PostgresReader) {
        let method = try? connection.query("SELECT attcompression FROM pg_attribute WHERE attrelid = 'transactions'::regclass AND attname = 'record'")
        guard let method, method.first?.first != "l" else { return }
        // A moment's exclusive lock: not waited for behind a long transaction of another client (the next start tries again).
        _ = try? connection.query("SET lock_timeout = '2s'")
        _ = try? connection.query("ALTER TABLE transactions ALTER COLUMN record SET COMPRESSION lz4")
        _ = try? connection.query("RESET lock_timeout")
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
    private func read(_ sql: String, _ parameters: [String?]) async -> [[String?]]? {
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
    private func rows(_ sql: String, _ parameters: [String?]) async throws(PostgresError) -> [[String?]] {
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

    public func home(role: String, id: String) async -> String? {
        if queue.unwritten(WriteQueue.Key(role: role, id: id)) != nil { return instanceURL.withLock { $0 } }
        return await read("SELECT home FROM transactions WHERE role = $1 AND id = $2", [role, id])?.first?.first ?? nil
    }

    public func claimHome(role: String, id: String, from previous: String?) async -> Bool {
        guard let here = instanceURL.withLock({ $0 }) else { return false }
        if queue.unwritten(WriteQueue.Key(role: role, id: id)) != nil { return true }  // this instance's own
        // A compare-and-set on the home under the row's lock: of two instances taking it from one gone home, the second finds
        // the first's name there. A record of no home (written before the cluster) is anyone's.
        let rows = await read("""
            UPDATE transactions SET home = $3 WHERE role = $1 AND id = $2 AND (home IS NULL OR home = $3 OR home = $4) RETURNING id
            """, [role, id, here, previous ?? here])
        return rows?.isEmpty == false
    }

    public func schedule(_ job: ScheduledJob) {
        let row = JobRow(kind: job.kind, due: job.due, payload: job.payload)
        save(role: Self.jobRole, id: job.id) { row.encoded }
    }

    /// How long a claim holds a job: longer than any run (an RReq waits 30 s for its RRes at most).
    static let jobLeaseMilliseconds: Int64 = 120_000

    public func claimJob(id: String) async -> Bool {
        let key = WriteQueue.Key(role: Self.jobRole, id: id)
        if queue.unwritten(key) != nil {
            // Not in the database yet: taken here, and removed by the write that follows (or never inserted).
            save(role: Self.jobRole, id: id) { JobRow.claimed }
            return true
        }
        for attempt in 1...3 {
            let now = SQLiteArchive.wallClock()
            if let rows = await read("""
                UPDATE harness_jobs SET claimed_until = $2 WHERE id = $1 AND (claimed_until IS NULL OR claimed_until < $3) RETURNING id
                """, [id, String(now + Self.jobLeaseMilliseconds), String(now)]) {
                return !rows.isEmpty
            }
            if attempt < 3 { try? await Task.sleep(for: .seconds(1)) }
        }
        // A database that cannot answer three times leaves the job to the instance whose timer it is: late is better than never.
        return true
    }

    public func claimOverdueJobs(dueBefore: Int64, limit: Int) async -> [ScheduledJob] {
        let now = SQLiteArchive.wallClock()
        let rows = await read("""
            UPDATE harness_jobs SET claimed_until = $3 WHERE id IN
            (SELECT id FROM harness_jobs WHERE due < $1 AND (claimed_until IS NULL OR claimed_until < $4)
             ORDER BY due LIMIT $2 FOR UPDATE SKIP LOCKED)
            RETURNING id, kind, due, payload
            """, [String(dueBefore), String(max(0, limit)), String(now + Self.jobLeaseMilliseconds), String(now)]) ?? []
        return rows.compactMap { row in
            guard let id = row[0], let kind = row[1], let due = row[2].flatMap({ Int64($0) }), let payload = row[3] else { return nil }
            return ScheduledJob(id: id, kind: kind, due: due, payload: Array(payload.utf8))
        }
    }

    public func releaseJob(id: String) async {
        _ = await read("UPDATE harness_jobs SET claimed_until = NULL WHERE id = $1", [id])
    }

    public func finishJob(id: String) async {
        if queue.unwritten(WriteQueue.Key(role: Self.jobRole, id: id)) != nil {
            // Not in the database yet (or claimed here): never inserted, or removed by the write that follows.
            return save(role: Self.jobRole, id: id) { JobRow.claimed }
        }
        _ = await read("DELETE FROM harness_jobs WHERE id = $1", [id])
    }

    /// A job as the write queue holds it: its columns in one line each (kind, due, payload), or "claimed" alone.
    private struct JobRow {
        let kind: String
        let due: Int64
        let payload: [UInt8]
        static let claimed = Array("claimed".utf8)
        var encoded: [UInt8] { Array("\(kind)\n\(due)\n".utf8) + payload }

        /// nil for a claimed one.
        static func decode(_ bytes: [UInt8]) -> JobRow? {
            let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
            guard lines.count == 3, let due = Int64(String(decoding: lines[1], as: UTF8.self)) else { return nil }
            return JobRow(kind: String(decoding: lines[0], as: UTF8.self), due: due, payload: Array(lines[2]))
        }
    }

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
        loop.execute { self.writer.connection?.close() }
        readConnection.withLock { connection in
            connection?.close()
            connection = nil
        }
        group.shutdown()
        reader.withLock { $0.close() }
    }

    // MARK: The writer's loop

    /// Starts writing unless a write is under way (which takes what came meanwhile when it ends).
    private func kick() {
        guard !writer.flushing else { return }
        writer.flushing = true
        Task(executorPreference: loop) { await self.writeWhatIsQueued() }
    }

    private func writeWhatIsQueued() async {
        let window = durability.batchWindowSeconds
        if window > 0, !queue.isClosing { try? await Task.sleep(for: .seconds(window)) }
        while true {
            let (batch, upTo, closing) = queue.takeBatch()
            if !batch.isEmpty { await write(batch) }
            queue.batchDone()
            queue.settle(upTo: upTo)
            if WriteQueue.retentionDue(writesSince: writer.writesSinceRetention, lastAt: writer.lastRetention, closing: closing) {
                await applyRetention()
            }
            // A save whose kick came while this write was waiting (for retention, say) found it busy: look again.
            if batch.isEmpty, queue.status.pending == 0 {
                writer.flushing = false
                if closing { drained.signal() }
                return
            }
        }
    }

    /// Writes `batch` in one transaction, once more on a new connection when the connection was lost
    /// (a server restarted meanwhile); counts it written, or lost with the reason.
    private func write(_ batch: WriteQueue.Batch) async {
        let records = batch.map { (key: $0.key, json: String(decoding: $0.value(), as: UTF8.self)) }
        let jobs = records.filter { $0.key.role == Self.jobRole || $0.key.role == Self.counterRole }.count
        for attempt in 1...2 {
            do throws(PostgresError) {
                try await write(records)
                queue.counted(written: batch.count - jobs)
                return
            } catch {
                // A connection that failed is dropped: the next write makes a new one.
                writer.connection?.close()
                writer.connection = nil
                if attempt == 1, error.isConnectionLoss, !gaveUp.load(ordering: .relaxed) { continue }
                onLoss(queue.lost(batch.count, because: error.description), "\(error)")
                return
            }
        }
    }

    private func write(_ all: [(key: WriteQueue.Key, json: String)]) async throws(PostgresError) {
        let stamp = String(now())
        let home = instanceURL.withLock { $0 }
        let connection = try await openConnection()
        let records = all.filter { $0.key.role != Self.jobRole && $0.key.role != Self.counterRole }
        let jobs = all.filter { $0.key.role == Self.jobRole }
        if !jobs.isEmpty { try await writeJobs(jobs, home: home, on: connection) }
        let counters = all.filter { $0.key.role == Self.counterRole }
        if !counters.isEmpty { try await writeCounters(counters, on: connection) }
        let chunks = stride(from: 0, to: records.count, by: Self.rowsPerStatement).map { records[$0..<min($0 + Self.rowsPerStatement, records.count)] }
        if chunks.count > 1 { _ = try await connection.query("BEGIN") }
        var added: Int64 = 0
        for chunk in chunks {
            let values = Self.placeholders(rows: chunk.count, columns: 5)
            let parameters: [String?] = chunk.flatMap { [$0.key.role, $0.key.id, stamp, $0.json, home] }
            let rows = try await connection.query("""
                INSERT INTO transactions (role, id, updated, record, home) VALUES \(values)
                ON CONFLICT (role, id) DO UPDATE SET updated = EXCLUDED.updated, record = EXCLUDED.record, home = EXCLUDED.home
                RETURNING role, (xmax = 0) AS inserted
                """, parameters)
            added += Int64(rows.rows.filter { $0[1] == "t" && !retention.keptRoles.contains($0[0] ?? "") }.count)
        }
        if chunks.count > 1 { _ = try await connection.query("COMMIT") }
        writer.removable += added
        writer.writesSinceRetention += records.count
    }

    /// The VALUES list of a multi-row insert: `($1, $2), ($3, $4)` for 2 rows of 2 columns.
    private static func placeholders(rows: Int, columns: Int) -> String {
        (0..<rows).map { row in "(" + (1...columns).map { "$\(row * columns + $0)" }.joined(separator: ", ") + ")" }.joined(separator: ", ")
    }

    /// Jobs inserted (the first of an id stays), and those claimed before their insert removed.
    private func writeJobs(_ jobs: [(key: WriteQueue.Key, json: String)], home: String?, on connection: PostgresConnection) async throws(PostgresError) {
        var claimed: [String] = []
        var rows: [(id: String, row: JobRow)] = []
        for job in jobs {
            if let row = JobRow.decode(Array(job.json.utf8)) { rows.append((job.key.id, row)) } else { claimed.append(job.key.id) }
        }
        for chunk in stride(from: 0, to: rows.count, by: Self.rowsPerStatement).map({ rows[$0..<min($0 + Self.rowsPerStatement, rows.count)] }) {
            let values = Self.placeholders(rows: chunk.count, columns: 5)
            let parameters: [String?] = chunk.flatMap { [$0.id, $0.row.kind, String($0.row.due), String(decoding: $0.row.payload, as: UTF8.self), home] }
            _ = try await connection.query("INSERT INTO harness_jobs (id, kind, due, payload, home) VALUES \(values) ON CONFLICT (id) DO NOTHING", parameters)
        }
        if !claimed.isEmpty {
            // One text parameter: the ids, as a PostgreSQL array literal of quoted elements.
            let literal = "{" + claimed.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }.joined(separator: ",") + "}"
            _ = try await connection.query("DELETE FROM harness_jobs WHERE id = ANY($1::text[])", [literal])
        }
    }

    /// Shared counts, each "remaining expires" as queued: inserted once (an id is never counted anew).
    private func writeCounters(_ counters: [(key: WriteQueue.Key, json: String)], on connection: PostgresConnection) async throws(PostgresError) {
        for counter in counters {
            let fields = counter.json.split(separator: " ")
            guard fields.count == 2 else { continue }
            _ = try await connection.query("INSERT INTO harness_counters (id, remaining, expires) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
                                           [counter.key.id, String(fields[0]), String(fields[1])])
        }
    }

    private func openConnection() async throws(PostgresError) -> PostgresConnection {
        if let connection = writer.connection { return connection }
        guard !gaveUp.load(ordering: .relaxed) else { throw PostgresError(operation: "write", message: "the store is closed") }
        let connection = try await PostgresConnection.connect(url, on: loop)
        // The server keeps what it acknowledged across the harness's crash; `synced` waits for its disk too.
        _ = try await connection.query("SET synchronous_commit = \(durability == .synced ? "on" : "off")")
        writer.connection = connection
        return connection
    }

    /// Removes records older than the maximum age, then the oldest past the maximum count.
    private func applyRetention() async {
        writer.lastRetention = .now
        writer.writesSinceRetention = 0
        do throws(PostgresError) {
            let connection = try await openConnection()
            _ = try await connection.query("DELETE FROM harness_counters WHERE expires < $1", [String(now())])
            _ = try await connection.query("DELETE FROM harness_counter_uses u WHERE NOT EXISTS (SELECT 1 FROM harness_counters c WHERE c.id = u.id)")
            let aged = try await connection.query("DELETE FROM transactions WHERE updated < $1 AND \(retention.removable)",
                                                  [String(now() - retention.maxAgeSeconds * 1000)])
            var removed = Int64(aged.affected)
            writer.removable -= removed
            let excess = writer.removable - Int64(retention.maxRecords)
            if excess > 0 {
                let oldest = try await connection.query("""
                    DELETE FROM transactions WHERE ctid IN \
                    (SELECT ctid FROM transactions WHERE \(retention.removable) ORDER BY updated LIMIT $1)
                    """, [String(excess)])
                removed += Int64(oldest.affected)
                writer.removable -= Int64(oldest.affected)
            }
            if removed > 0 { queue.counted(removed: Int(removed)) }
        } catch {
            queue.failed("retention: \(error)")
        }
    }
}

/// A blocking libpq connection: the schema at start, and reads on the caller's thread. Used under
/// the archive's lock only: `@unchecked` for that.
final class PostgresReader: @unchecked Sendable {
    private var connection: OpaquePointer?

    init(url: String) throws(PostgresError) {
        let connection = PQconnectdb(url)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            PQfinish(connection)
            throw PostgresError(operation: "connect", message: message)
        }
        self.connection = connection
    }

    /// The rows of `sql` (several statements when there are no parameters), as text.
    func query(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> [[String?]] {
        guard let connection else { throw PostgresError(operation: "query", message: "the connection is closed") }
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        let values = copies.map { $0.map { UnsafePointer($0) } }
        guard let result = parameters.isEmpty ? PQexec(connection, sql) : PQexecParams(connection, sql, Int32(values.count), nil, values, nil, nil, 0) else {
            throw PostgresError(operation: "query", message: String(cString: PQerrorMessage(connection)))
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
            throw PostgresError(operation: "query", message: String(cString: PQresultErrorMessage(result)),
                                sqlState: PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) })
        }
        return (0..<PQntuples(result)).map { row in
            (0..<PQnfields(result)).map { column in PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column)) }
        }
    }

    func close() {
        PQfinish(connection)
        connection = nil
    }

    deinit { PQfinish(connection) }
}

extension PostgresError {
    /// The connection is gone (its SQLSTATE class 08, the server shutting down 57P0x, or libpq's own
    /// failure without one): a new connection may succeed where this one failed.
    var isConnectionLoss: Bool {
        guard let sqlState else { return true }
        return sqlState.hasPrefix("08") || sqlState.hasPrefix("57P0")
    }
}

/// What the instances of a cluster share besides records and jobs: who is alive, and counts that each use
/// takes one of (a pin's transactions), whichever instance the use comes to.
public protocol ClusterStore: Sendable {
    /// Says this instance is alive, at `url`.
    func announce(_ url: String) async
    /// The instances that announced themselves since `seenSince` (milliseconds since 1970); nil when the store cannot answer.
    func instances(seenSince: Int64) async -> [String]?
    /// Keeps a count of `remaining` uses under `id` until `expires`, written as the records are (before the answer that made it).
    func startCount(id: String, remaining: Int, expires: Int64)
    /// What names this store for as long as it lives, the same for every instance (the database's oid): the epoch of
    /// the DS's card-range serials, so that a serial one instance gave is known to the others. Asked once, at start.
    func clusterEpoch() -> String?
    /// Takes one use of the count `id` for `transaction`: true while there was one left (for one transaction per use; the
    /// same transaction asking again, its other role, gets the same answer), false when it is used up, expired or unknown,
    /// nil when the store cannot answer.
    func use(_ id: String, for transaction: String?) async -> Bool?
    /// Keeps `change` for the instances started later, and drops the earlier ones of the kinds it `supersedes` and those
    /// expired: false when the store cannot.
    func record(_ change: RecordedChange, supersedes: [String]) async -> Bool
    /// The changes kept and not expired, oldest first; nil when the store cannot say.
    func changes() async -> [RecordedChange]?
}

/// A change made through the balancer (a pin, a load mix, a card-range change), as an instance started later makes it too.
public struct RecordedChange: Sendable, Equatable {
    /// The header a change carries its id in, from the instance that took it to the others (and to a role that counts
    /// its uses in the store under it: a pin, armed PRes faults).
    public static let idHeader = "X-Harness-Change-ID"
    /// The change's id, which every instance applied it under (a pin's id).
    public let id: String
    /// What it changes (`pins`, `load-mix`): a later change of a kind may make the earlier ones pointless.
    public let kind: String
    public let method: String
    public let target: String
    public let contentType: String?
    public let body: [UInt8]
    /// Milliseconds since 1970 when it was made, and after which it is dropped, if ever.
    public let made: Int64
    public let expires: Int64?

    public init(id: String, kind: String, method: String, target: String, contentType: String?, body: [UInt8], made: Int64, expires: Int64?) {
        self.id = id
        self.kind = kind
        self.method = method
        self.target = target
        self.contentType = contentType
        self.body = body
        self.made = made
        self.expires = expires
    }
}

extension PostgresArchive: ClusterStore {
    public func clusterEpoch() -> String? {
        reader.withLock { try? $0.query("SELECT oid FROM pg_database WHERE datname = current_database()") }?.first?.first.flatMap { $0 }.map { "db" + $0 }
    }

    public func announce(_ url: String) async {
        _ = await read("INSERT INTO harness_instances (url, seen) VALUES ($1, $2) ON CONFLICT (url) DO UPDATE SET seen = EXCLUDED.seen",
                       [url, String(SQLiteArchive.wallClock())])
    }

    public func instances(seenSince: Int64) async -> [String]? {
        await read("SELECT url FROM harness_instances WHERE seen >= $1 ORDER BY url", [String(seenSince)])?.compactMap { $0.first ?? nil }
    }

    public func record(_ change: RecordedChange, supersedes: [String]) async -> Bool {
        // One statement: the superseded and expired ones go as the change comes. The kinds as one array literal of plain names (`run-` and a run's id).
        let kinds = "{" + supersedes.filter { $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") } }.joined(separator: ",") + "}"
        return await read("""
            WITH dropped AS (DELETE FROM harness_changes WHERE kind = ANY($9::text[]) OR expires < $7)
            INSERT INTO harness_changes (id, kind, method, target, content_type, body, made, expires) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (id) DO NOTHING
            """, [change.id, change.kind, change.method, change.target, change.contentType, String(decoding: change.body, as: UTF8.self),
                  String(change.made), change.expires.map { String($0) }, kinds]) != nil
    }

    public func changes() async -> [RecordedChange]? {
        let rows = await read("""
            SELECT id, kind, method, target, content_type, body, made, expires FROM harness_changes
            WHERE expires IS NULL OR expires > $1 ORDER BY seq
            """, [String(SQLiteArchive.wallClock())])
        return rows?.compactMap { row in
            guard let id = row[0], let kind = row[1], let method = row[2], let target = row[3], let body = row[5],
                  let made = row[6].flatMap({ Int64($0) }) else { return nil }
            return RecordedChange(id: id, kind: kind, method: method, target: target, contentType: row[4], body: Array(body.utf8), made: made,
                                  expires: row[7].flatMap { Int64($0) })
        }
    }

    public func startCount(id: String, remaining: Int, expires: Int64) {
        save(role: Self.counterRole, id: id) { Array("\(remaining) \(expires)".utf8) }
    }

    public func use(_ id: String, for transaction: String?) async -> Bool? {
        await written(id: id, role: Self.counterRole)
        let now = String(SQLiteArchive.wallClock())
        guard let transaction else {
            return await read("UPDATE harness_counters SET remaining = remaining - 1 WHERE id = $1 AND remaining > 0 AND expires > $2 RETURNING 1",
                              [id, now]).map { !$0.isEmpty }
        }
        // One statement: a use this transaction took already, or a new one taken and written down as its.
        let rows = await read("""
            WITH prior AS (SELECT 1 FROM harness_counter_uses WHERE id = $1 AND transaction = $2),
            taken AS (UPDATE harness_counters SET remaining = remaining - 1
                      WHERE id = $1 AND remaining > 0 AND expires > $3 AND NOT EXISTS (SELECT 1 FROM prior) RETURNING 1),
            recorded AS (INSERT INTO harness_counter_uses (id, transaction) SELECT $1, $2 FROM taken RETURNING 1)
            SELECT (SELECT count(*) FROM prior) + (SELECT count(*) FROM recorded)
            """, [id, transaction, now])
        return rows.map { ($0.first?.first ?? nil).flatMap { Int($0) }.map { $0 > 0 } ?? false }
    }

    /// Waits for a count this instance queued to be written, so that its first use finds it.
    private func written(id: String, role: String) async {
        if queue.unwritten(WriteQueue.Key(role: role, id: id)) != nil { _ = await written() }
    }
}
