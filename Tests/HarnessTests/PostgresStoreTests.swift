import EventLoops
import Foundation
import Postgres
import Store
import Testing
import TestSupport

/// The shared store on PostgreSQL (Debian's server, started in a temporary directory by each test):
/// libpq's asynchronous API on a libuv loop, the archive several instances write and read, its schema.
@Suite("PostgreSQL store", .serialized)
struct PostgresStoreTests {
    private static let retention = SQLiteArchive.Retention(maxRecords: 1000, maxAgeSeconds: 86_400)

    /// The test server's own start: a port taken between its draw and the server's bind (by any process) is drawn
    /// again, where the server would have stopped with "could not bind" and failed the suite that needed it.
    @Test(.enabled(if: TemporaryPostgres.missing == nil, Comment(rawValue: TemporaryPostgres.missing ?? "")))
    func aTestServerWhosePortIsTakenBeforeItBindsStartsOnAnother() throws {
        let taken = try RefusingPort()
        var drawn: [Int] = []
        let server = try TemporaryPostgres { drawn.append(drawn.isEmpty ? taken.port : try ChildProcessPort.free()); return drawn.last ?? 0 }
        defer { server.stop() }
        #expect(drawn.count == 2 && !server.url.contains(":\(taken.port)/"))
        #expect(try server.psql("SELECT 1") == "1")
    }

    @Test(.enabled(if: TemporaryPostgres.missing == nil, Comment(rawValue: TemporaryPostgres.missing ?? "")))
    func aConnectionRunsQueriesInOrderOnItsLoopAndSaysWhatTheServerRefused() async throws {
        let server = try TemporaryPostgres()
        defer { server.stop() }
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let connection = try await PostgresConnection.connect(server.url, on: group.loops[0])
        // Asked for at once, answered in order.
        async let first = connection.query("SELECT $1::int + 1 AS n", ["41"])
        async let second = connection.query("SELECT $1::text IS NULL, 'b'", [nil])
        let (one, two) = try await (first, second)
        #expect(one.rows == [["42"]] && one.columns == ["n"])
        #expect(two.rows == [["t", "b"]])
        do {
            _ = try await connection.query("SELECT * FROM no_such_table")
            Issue.record("a query of a missing table succeeded")
        } catch {
            #expect(error.sqlState == "42P01" && error.description.contains("no_such_table"), "\(error)")
        }
        // An error leaves the connection usable; several statements give the last one's rows.
        #expect(try await connection.query("CREATE TABLE t (a int); INSERT INTO t VALUES (1), (2); SELECT count(*) FROM t").rows == [["2"]])
        #expect(try await connection.query("DELETE FROM t WHERE a > $1", ["0"]).affected == 2)
        // The server gone: the query fails, it does not hang.
        server.stop()
        await #expect(throws: PostgresError.self) { try await connection.query("SELECT 1") }
        await #expect(throws: PostgresError.self) { try await PostgresConnection.connect(server.url, on: group.loops[0]) }
    }

    @Test(.enabled(if: TemporaryPostgres.missing == nil, Comment(rawValue: TemporaryPostgres.missing ?? "")))
    func whatOneInstanceWritesAnotherReadsAndARestartKeeps() async throws {
        let server = try TemporaryPostgres()
        defer { server.stop() }
        // Room for all: retention, at close, would remove 200 of records written in one millisecond, any 200.
        let retention = SQLiteArchive.Retention(maxRecords: 10_000, maxAgeSeconds: 86_400)
        let one = try PostgresArchive(url: server.url, retention: retention, durability: .answered)
        let other = try PostgresArchive(url: server.url, retention: retention)
        for id in 0..<1200 { one.save(role: "ds", id: "t\(id)", { Array(#"{"id":"\#(id)"}"#.utf8) }) }
        one.save(role: "ds", id: "t3", { Array(#"{"id":"3","changed":true}"#.utf8) })
        await one.written()
        #expect(one.status.written >= 1200 && one.status.lost == 0, "\(one.status)")
        // Read by the other instance from the database, not from a queue.
        #expect(await other.record(role: "ds", id: "t3")?.json == Array(#"{"id":"3","changed":true}"#.utf8))
        #expect(await other.record(role: "acs", id: "t3") == nil)
        #expect(await other.recent(role: "ds", limit: 5).count == 5)
        #expect(try server.psql("SELECT count(*) FROM transactions") == "1200")
        one.close(timeoutSeconds: 10)
        other.close(timeoutSeconds: 10)
        let reopened = try PostgresArchive(url: server.url, retention: retention)
        defer { reopened.close(timeoutSeconds: 10) }
        #expect(await reopened.record(role: "ds", id: "t1199")?.json == Array(#"{"id":"1199"}"#.utf8))
    }

    /// A server that restarts between two batches: the writer's connection is gone, the next batch is
    /// written on a new one (nothing lost); a query the server does not answer in time fails, it does not hang.
    @Test(.enabled(if: TemporaryPostgres.missing == nil, Comment(rawValue: TemporaryPostgres.missing ?? "")))
    func aServerRestartLosesNoBatchAndASilentServerFailsAQueryInTime() async throws {
        let server = try TemporaryPostgres()
        defer { server.stop() }
        let archive = try PostgresArchive(url: server.url, retention: Self.retention, durability: .answered)
        defer { archive.close(timeoutSeconds: 10) }
        archive.save(role: "ds", id: "before", { Array(#"{"id":"before"}"#.utf8) })
        await archive.written()
        try server.restart()
        archive.save(role: "ds", id: "after", { Array(#"{"id":"after"}"#.utf8) })
        await archive.written()
        #expect(archive.status.written == 2 && archive.status.lost == 0, "\(archive.status)")
        #expect(try server.psql("SELECT count(*) FROM transactions") == "2")

        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        // A limit that a loaded machine's connect stays within, and the query's sleep is well past.
        let connection = try await PostgresConnection.connect(server.url, on: group.loops[0], timeoutMilliseconds: 2_000)
        do {
            _ = try await connection.query("SELECT pg_sleep(10)")
            Issue.record("a query past its time limit succeeded")
        } catch {
            #expect(error.description.contains("no answer from the server within 2000 ms"), "\(error)")
        }
    }

    @Test(.enabled(if: TemporaryPostgres.missing == nil, Comment(rawValue: TemporaryPostgres.missing ?? "")))
    func aDatabaseOfANewerSchemaVersionIsRefusedSayingWhyAndAnOlderOneIsMigrated() async throws {
        let server = try TemporaryPostgres()
        defer { server.stop() }
        // Version 1: records without the instance that holds them.
        _ = try server.psql("""
            CREATE TABLE harness_schema (version integer NOT NULL); INSERT INTO harness_schema VALUES (1);
            CREATE TABLE transactions (role text NOT NULL, id text NOT NULL, updated bigint NOT NULL, record text NOT NULL, PRIMARY KEY (role, id));
            INSERT INTO transactions VALUES ('acs', 'old', 1, '{}')
            """)
        let migrated = try PostgresArchive(url: server.url, retention: Self.retention, durability: .answered)
        #expect(try server.psql("SELECT version FROM harness_schema") == "7")
        // Large records compressed with lz4, not pglz (two thirds of the database's CPU per challenge with pglz).
        #expect(try server.psql("SELECT attcompression FROM pg_attribute WHERE attrelid = 'transactions'::regclass AND attname = 'record'") == "l")
        #expect(try server.psql("SELECT count(*) FROM harness_jobs") == "0")
        #expect(await migrated.record(role: "acs", id: "old")?.json == Array("{}".utf8))
        #expect(try await migrated.home(role: "acs", id: "old") == nil)
        // Each record names the instance that wrote it last: where a later message of its transaction goes.
        migrated.setInstanceURL("http://10.0.0.7:8080")
        migrated.save(role: "acs", id: "new", { Array("{}".utf8) })
        await migrated.written()
        let other = try PostgresArchive(url: server.url, retention: Self.retention)
        #expect(try await other.home(role: "acs", id: "new") == "http://10.0.0.7:8080")
        #expect(try await other.home(role: "ds", id: "new") == nil)
        // A store that gives no answer says so: not a record of no home, which another instance would take up.
        let closed = try PostgresArchive(url: server.url, retention: Self.retention)
        closed.close(timeoutSeconds: 1)
        await #expect(throws: StoreUnavailable.self) { try await closed.home(role: "acs", id: "new") }
        // One secret for every instance of the store, made once by the migration: two random UUIDs, 64 hex digits.
        let secret = try #require(migrated.clusterSecret())
        #expect(secret.count == 64 && secret.allSatisfy(\.isHexDigit), "\(secret)")
        #expect(other.clusterSecret() == secret)
        other.close(timeoutSeconds: 10)
        migrated.close(timeoutSeconds: 10)

        _ = try server.psql("UPDATE harness_schema SET version = 9")
        #expect {
            try PostgresArchive(url: server.url, retention: Self.retention)
        } throws: { error in
            "\(error)".contains("schema version 9; this harness reads versions 1 to 7")
        }
        #expect(throws: PostgresError.self) { try PostgresArchive(url: "postgresql://harness@127.0.0.1:1/none", retention: Self.retention) }
    }

    /// Jobs of a cluster (a decoupled result due later): each is run once, by its instance's timer or, once
    /// overdue, by the one instance that claims it; one claimed before its write never reaches the database.
    @Test(.enabled(if: TemporaryPostgres.missing == nil, Comment(rawValue: TemporaryPostgres.missing ?? "")))
    func aJobIsClaimedOnceWhoeverAsks() async throws {
        let server = try TemporaryPostgres()
        defer { server.stop() }
        let one = try PostgresArchive(url: server.url, retention: Self.retention, durability: .answered)
        let other = try PostgresArchive(url: server.url, retention: Self.retention)
        defer { one.close(timeoutSeconds: 10); other.close(timeoutSeconds: 10) }
        func job(_ id: String, due: Int64) -> ScheduledJob { ScheduledJob(id: id, kind: "acs.rreq", due: due, payload: Array(#"{"n":"\#(id)"}"#.utf8)) }
        one.schedule(job("mine", due: 1_000))
        one.schedule(job("orphan", due: 2_000))
        one.schedule(job("later", due: 9_000))
        await one.written()
        #expect(try server.psql("SELECT count(*) FROM harness_jobs") == "3")
        // The instance's own timer, and another instance at once: one of them has it.
        async let mine = one.claimJob(id: "mine")
        async let theirs = other.claimJob(id: "mine")
        #expect(await [mine, theirs].filter { $0 }.count == 1)
        // Overdue ones go to the first that asks, with what they carry; the others find none (claimed: under a lease).
        async let first = other.claimOverdueJobs(dueBefore: 5_000, limit: 10)
        async let second = one.claimOverdueJobs(dueBefore: 5_000, limit: 10)
        let claimed = try await first + second
        #expect(claimed == [job("orphan", due: 2_000)])
        #expect(await one.claimJob(id: "orphan") == false)
        await other.finishJob(id: "orphan")
        // A runner that dies before it finishes leaves the job to be claimed again once its lease ends.
        _ = try server.psql("UPDATE harness_jobs SET claimed_until = 1 WHERE id = 'mine'")
        #expect(try await other.claimOverdueJobs(dueBefore: 5_000, limit: 10) == [job("mine", due: 1_000)])
        await other.finishJob(id: "mine")
        // Claimed while still queued: the write that follows removes it instead of leaving an orphan.
        one.schedule(job("quick", due: 1_000))
        #expect(await one.claimJob(id: "quick"))
        await one.written()
        #expect(try await other.claimOverdueJobs(dueBefore: 5_000, limit: 10).isEmpty)
        #expect(try server.psql("SELECT id FROM harness_jobs") == "later")
    }

    /// What the instances of a cluster share: who is alive, and counts (a pin's uses) that give each use to one
    /// caller whichever instance asks, until none is left or they expire.
    @Test(.enabled(if: TemporaryPostgres.missing == nil, Comment(rawValue: TemporaryPostgres.missing ?? "")))
    func aCountIsUsedUpOnceAcrossInstancesAndTheLiveOnesAreKnown() async throws {
        let server = try TemporaryPostgres()
        defer { server.stop() }
        let one = try PostgresArchive(url: server.url, retention: Self.retention, durability: .answered)
        let other = try PostgresArchive(url: server.url, retention: Self.retention)
        defer { one.close(timeoutSeconds: 10); other.close(timeoutSeconds: 10) }
        let now = HarnessClock.system.wallMilliseconds()
        one.startCount(id: "pin", remaining: 3, expires: now + 60_000)
        other.startCount(id: "pin", remaining: 3, expires: now + 60_000)  // the same pin, set on the other instance too: one count
        one.startCount(id: "expired", remaining: 5, expires: now - 1)
        await other.written()
        let uses = await withTaskGroup(of: Bool?.self) { group in
            for index in 0..<8 { group.addTask { await (index.isMultiple(of: 2) ? one : other).use("pin", for: "t\(index)") } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(uses.filter { $0 == true }.count == 3 && uses.filter { $0 == false }.count == 5, "\(uses)")
        #expect(await one.use("expired", for: nil) == false)
        #expect(await other.use("unknown", for: "t9") == false)
        // The other role of a transaction that took a use, on the other instance, has that use; one that took none, none.
        one.startCount(id: "second", remaining: 1, expires: now + 60_000)
        #expect(await one.use("second", for: "ds-1") == true)
        #expect(await other.use("second", for: "ds-1") == true)
        #expect(await other.use("second", for: "ds-2") == false)

        await one.announce("http://10.0.0.1:8080")
        await other.announce("http://10.0.0.2:8080")
        #expect(await one.instances(seenSince: now - 1_000) == ["http://10.0.0.1:8080", "http://10.0.0.2:8080"])
        #expect(await other.instances(seenSince: HarnessClock.system.wallMilliseconds() + 10_000) == [])
    }

    /// Two `serve` processes on one database: a transaction answered by the first is read from the
    /// second, and after a `kill -9` of the first every answered transaction is still there.
    @Test(.enabled(if: TemporaryPostgres.missing == nil, Comment(rawValue: TemporaryPostgres.missing ?? "")))
    func twoInstancesShareTheirRecordsAndAKill9LosesNothingAnswered() throws {
        let server = try TemporaryPostgres()
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shared-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // The first instance has the URL in its file, the second in the environment (a container's way).
        let inFile = folder + "/harness.yaml", fromEnvironment = folder + "/from-environment.yaml"
        try "store:\n  backend: postgres\n  url: \(server.url)\n  durability: answered\n".write(toFile: inFile, atomically: true, encoding: .utf8)
        try "store:\n  backend: postgres\n  durability: answered\n".write(toFile: fromEnvironment, atomically: true, encoding: .utf8)
        func serve(_ config: String, environment: [String] = []) throws -> (ChildProcess, port: Int) {
            let serve = try ChildProcess("/usr/bin/env", environment + [harnessBinary, "serve", "--config", config, "--data-directory", folder + "/data",
                                                                        "--http-port", "0", "--https-port", "0", "--loops", "1"], directory: repositoryRoot)
            let log = serve.awaitOutput { $0.contains("listening") ? $0 : nil } ?? ""
            return (serve, log.range(of: "http=127.0.0.1:").map { Int(log[$0.upperBound...].prefix { $0.isNumber }) ?? 0 } ?? 0)
        }
        let (first, port) = try serve(inFile)
        let (second, otherPort) = try serve(fromEnvironment, environment: ["THREEDS_HARNESS_STORE_URL=\(server.url)"])
        defer { second.signal(SIGTERM); _ = second.wait() }
        try #require(port > 0 && otherPort > 0, "\(first.output) \(second.output)")
        let simulate = try ChildProcess.run(harnessBinary, ["simulate", "--url", "http://127.0.0.1:\(port)", "--all-frictionless"], timeout: 120)
        first.signal(SIGKILL)
        _ = first.wait()
        #expect(simulate.status == 0, "\(simulate.output.suffix(2000))")
        let ids = simulate.output.split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("  ") && line.contains(": 3DS Server") ? String(line.dropFirst(2).prefix(36)) : nil
        }
        #expect(ids.count == 84)
        let missing = try ids.filter { id in
            try ChildProcess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10",
                                                   "http://127.0.0.1:\(otherPort)/3ds-server/transactions/\(id)"]).output != "200"
        }
        #expect(missing.isEmpty, "\(missing.count) of \(ids.count) answered transactions cannot be read from the other instance")
    }
}
