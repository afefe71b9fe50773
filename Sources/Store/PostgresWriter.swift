import EventLoops
import Foundation
import Postgres
import Synchronization

// The writer's loop: the queued records, jobs and counts written in batches, and retention.
extension PostgresArchive {
    /// Starts writing unless a write is under way (which takes what came meanwhile when it ends).
    func kick() {
        guard !writer.value.flushing else { return }
        writer.value.flushing = true
        Task(executorPreference: loop) { await self.writeWhatIsQueued() }
    }

    func writeWhatIsQueued() async {
        let window = durability.batchWindowSeconds
        if window > 0, !queue.isClosing { try? await Task.sleep(for: .seconds(window)) }
        while true {
            let (batch, upTo, closing) = queue.takeBatch()
            if !batch.isEmpty { await write(batch) }
            queue.batchDone()
            queue.settle(upTo: upTo)
            if WriteQueue.retentionDue(writesSince: writer.value.writesSinceRetention, lastAt: writer.value.lastRetention, closing: closing) {
                await applyRetention()
            }
            // A save whose kick came while this write was waiting (for retention, say) found it busy: look again.
            if batch.isEmpty, queue.status.pending == 0 {
                writer.value.flushing = false
                if closing { drained.signal() }
                return
            }
        }
    }

    /// Writes `batch` in one transaction, once more on a new connection when the connection was lost
    /// (a server restarted meanwhile); counts it written, or lost with the reason.
    func write(_ batch: WriteQueue.Batch) async {
        let records = batch.map { (key: $0.key, json: String(decoding: $0.value(), as: UTF8.self)) }
        let jobs = records.filter { $0.key.role == Self.jobRole || $0.key.role == Self.counterRole }.count
        for attempt in 1...2 {
            do throws(PostgresError) {
                try await write(records)
                queue.counted(written: batch.count - jobs)
                return
            } catch {
                // A connection that failed is dropped: the next write makes a new one.
                writer.value.connection?.close()
                writer.value.connection = nil
                if attempt == 1, error.isConnectionLoss, !gaveUp.load(ordering: .relaxed) { continue }
                onLoss(queue.lost(batch.count, because: error.description), "\(error)")
                return
            }
        }
    }

    func write(_ all: [(key: WriteQueue.Key, json: String)]) async throws(PostgresError) {
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
        writer.value.removable += added
        writer.value.writesSinceRetention += records.count
    }

    /// The VALUES list of a multi-row insert: `($1, $2), ($3, $4)` for 2 rows of 2 columns.
    static func placeholders(rows: Int, columns: Int) -> String {
        (0..<rows).map { row in "(" + (1...columns).map { "$\(row * columns + $0)" }.joined(separator: ", ") + ")" }.joined(separator: ", ")
    }

    /// Jobs inserted (the first of an id stays), and those claimed before their insert removed.
    func writeJobs(_ jobs: [(key: WriteQueue.Key, json: String)], home: String?, on connection: PostgresConnection) async throws(PostgresError) {
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
    func writeCounters(_ counters: [(key: WriteQueue.Key, json: String)], on connection: PostgresConnection) async throws(PostgresError) {
        for counter in counters {
            let fields = counter.json.split(separator: " ")
            guard fields.count == 2 else { continue }
            _ = try await connection.query("INSERT INTO harness_counters (id, remaining, expires) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING",
                                           [counter.key.id, String(fields[0]), String(fields[1])])
        }
    }

    func openConnection() async throws(PostgresError) -> PostgresConnection {
        if let connection = writer.value.connection { return connection }
        guard !gaveUp.load(ordering: .relaxed) else { throw PostgresError(operation: "write", message: "the store is closed") }
        let connection = try await PostgresConnection.connect(url, on: loop)
        // The server keeps what it acknowledged across the harness's crash; `synced` waits for its disk too.
        _ = try await connection.query("SET synchronous_commit = \(durability == .synced ? "on" : "off")")
        writer.value.connection = connection
        return connection
    }

    /// Removes records older than the maximum age, then the oldest past the maximum count.
    func applyRetention() async {
        writer.value.lastRetention = .now
        writer.value.writesSinceRetention = 0
        do throws(PostgresError) {
            let connection = try await openConnection()
            _ = try await connection.query("DELETE FROM harness_counters WHERE expires < $1", [String(now())])
            _ = try await connection.query("DELETE FROM harness_counter_uses u WHERE NOT EXISTS (SELECT 1 FROM harness_counters c WHERE c.id = u.id)")
            let aged = try await connection.query("DELETE FROM transactions WHERE updated < $1 AND \(retention.removable)",
                                                  [String(now() - retention.maxAgeSeconds * 1000)])
            var removed = Int64(aged.affected)
            writer.value.removable -= removed
            let excess = writer.value.removable - Int64(retention.maxRecords)
            if excess > 0 {
                let oldest = try await connection.query("""
                    DELETE FROM transactions WHERE ctid IN \
                    (SELECT ctid FROM transactions WHERE \(retention.removable) ORDER BY updated LIMIT $1)
                    """, [String(excess)])
                removed += Int64(oldest.affected)
                writer.value.removable -= Int64(oldest.affected)
            }
            if removed > 0 { queue.counted(removed: Int(removed)) }
        } catch {
            queue.failed("retention: \(error)")
        }
    }

    /// A job as the write queue holds it: its columns in one line each (kind, due, payload), or "claimed" alone.
    struct JobRow {
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
}
