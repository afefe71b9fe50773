import Postgres
import Synchronization

extension PostgresArchive: ClusterStore {
    public func home(role: String, id: String) async throws(StoreUnavailable) -> String? {
        if queue.unwritten(WriteQueue.Key(role: role, id: id)) != nil { return instanceURL.withLock { $0 } }
        return try await answer("SELECT home FROM transactions WHERE role = $1 AND id = $2", [role, id]).first?.first ?? nil
    }

    public func claimHome(role: String, id: String, from previous: String?) async throws(StoreUnavailable) -> Bool {
        guard let here = instanceURL.withLock({ $0 }) else { return false }
        if queue.unwritten(WriteQueue.Key(role: role, id: id)) != nil { return true }  // this instance's own
        // A compare-and-set on the home under the row's lock: of two instances taking it from one gone home, the second finds
        // the first's name there. A record of no home (written before the cluster) is anyone's.
        let rows = try await answer("""
            UPDATE transactions SET home = $3 WHERE role = $1 AND id = $2 AND (home IS NULL OR home = $3 OR home = $4) RETURNING id
            """, [role, id, here, previous ?? here])
        return !rows.isEmpty
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
            let now = now()
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

    public func claimOverdueJobs(dueBefore: Int64, limit: Int) async throws(StoreUnavailable) -> [ScheduledJob] {
        let now = now()
        let rows = try await answer("""
            UPDATE harness_jobs SET claimed_until = $3 WHERE id IN
            (SELECT id FROM harness_jobs WHERE due < $1 AND (claimed_until IS NULL OR claimed_until < $4)
             ORDER BY due LIMIT $2 FOR UPDATE SKIP LOCKED)
            RETURNING id, kind, due, payload
            """, [String(dueBefore), String(max(0, limit)), String(now + Self.jobLeaseMilliseconds), String(now)])
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

    /// The rows of a query, or why the store gave none.
    func answer(_ sql: String, _ parameters: [String?]) async throws(StoreUnavailable) -> [[String?]] {
        guard let rows = await read(sql, parameters) else { throw StoreUnavailable(queue.status.lastError ?? "the store is closed") }
        return rows
    }

    public func clusterEpoch() -> String? {
        reader.withLock { try? $0.query("SELECT oid FROM pg_database WHERE datname = current_database()") }?.first?.first.flatMap { $0 }.map { "db" + $0 }
    }

    public func clusterSecret() -> String? {
        reader.withLock { try? $0.query("SELECT secret FROM harness_secret LIMIT 1") }?.first?.first.flatMap { $0 }
    }

    public func announce(_ url: String) async {
        _ = await read("INSERT INTO harness_instances (url, seen) VALUES ($1, $2) ON CONFLICT (url) DO UPDATE SET seen = EXCLUDED.seen",
                       [url, String(now())])
    }

    public func instances(seenSince: Int64) async -> [String]? {
        await read("SELECT url FROM harness_instances WHERE seen >= $1 ORDER BY url", [String(seenSince)])?.compactMap { $0.first ?? nil }
    }

    public func record(_ change: RecordedChange, supersedes: [String]) async -> Bool {
        // One statement: the superseded and expired ones go as the change comes. The kinds as one array literal of plain names (`run-` and a
        // run's id, `pins:` and a team's name): none needs quoting in it.
        let kinds = "{" + supersedes.filter { $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-:._".contains($0)) } }.joined(separator: ",") + "}"
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
            """, [String(now())])
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
        let now = String(now())
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
    func written(id: String, role: String) async {
        if queue.unwritten(WriteQueue.Key(role: role, id: id)) != nil { _ = await written() }
    }
}
