import Foundation
import Store
import Synchronization
import Testing
import TestSupport

/// The durable store on its own: write-behind, retention, and what it does when it cannot write.
@Suite("Durable store (SQLite)")
struct StoreTests {
    private func folder() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)").path
    }

    private func record(_ id: Int, bytes: Int = 16) -> @Sendable () -> [UInt8] {
        { Array(#"{"id":"\#(id)","pad":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: bytes) + Array(#""}"#.utf8) }
    }

    @Test func whatIsSavedIsReadBackAfterItCloses() async throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/nested/harness.sqlite"  // folders are made
        let archive = try SQLiteArchive(path: path, retention: .init(maxRecords: 100, maxAgeSeconds: 86_400))
        for id in 0..<10 { archive.save(role: "ds", id: "t\(id)", record(id)) }
        archive.save(role: "ds", id: "t3", { Array(#"{"id":"3","changed":true}"#.utf8) })  // the last save wins
        archive.close(timeoutSeconds: 10)
        #expect(archive.status.written >= 10 && archive.status.lost == 0 && archive.status.pending == 0)

        let reopened = try SQLiteArchive(path: path, retention: .init(maxRecords: 100, maxAgeSeconds: 86_400))
        defer { reopened.close(timeoutSeconds: 10) }
        #expect(await reopened.record(role: "ds", id: "t3")?.json == Array(#"{"id":"3","changed":true}"#.utf8))
        #expect(await reopened.record(role: "acs", id: "t3") == nil)
        #expect(await reopened.recent(role: "ds", limit: 100).count == 10)
    }

    /// A record that left memory is read from the store, so the store answers with what was last
    /// saved even before its writer has put it on disk.
    @Test func aRecordIsReadAsLastSavedBeforeItIsWritten() async throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let archive = try SQLiteArchive(path: directory + "/harness.sqlite", retention: .init(maxRecords: 100, maxAgeSeconds: 86_400))
        defer { archive.close(timeoutSeconds: 10) }
        archive.save(role: "ds", id: "t1", record(1))
        #expect(await archive.record(role: "ds", id: "t1")?.json == record(1)())
        archive.save(role: "ds", id: "t1", { Array(#"{"id":"1","changed":true}"#.utf8) })
        #expect(await archive.record(role: "ds", id: "t1")?.json == Array(#"{"id":"1","changed":true}"#.utf8))
        #expect(await archive.record(role: "acs", id: "t1") == nil)
    }

    /// What an answer waits for with `store.durability: answered`: every record saved before the call, committed.
    @Test func writtenReturnsOnceWhatWasSavedBeforeIsCommitted() async throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let archive = try SQLiteArchive(path: directory + "/harness.sqlite", retention: .init(maxRecords: 100, maxAgeSeconds: 86_400),
                                        durability: .answered)
        defer { archive.close(timeoutSeconds: 10) }
        await archive.written()  // nothing saved: at once
        for id in 0..<20 { archive.save(role: "ds", id: "t\(id)", record(id)) }
        await archive.written()
        #expect(archive.status.written == 20 && archive.status.pending == 0, "\(archive.status)")
        archive.save(role: "ds", id: "t0", { Array(#"{"id":"0","changed":true}"#.utf8) })
        await archive.written()
        #expect(archive.status.written == 21, "\(archive.status)")
    }

    /// The writer's thread carries its name to the kernel, so that `top -H`, `perf` and
    /// `bench/run store` can tell its CPU and bytes from the loops'.
    @Test func theWriterRunsOnAThreadNamedForIt() throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let archive = try SQLiteArchive(path: directory + "/harness.sqlite", retention: .init(maxRecords: 100, maxAgeSeconds: 86_400))
        defer { archive.close(timeoutSeconds: 10) }
        func names() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap {
                try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        // The thread names itself as it starts: wait for that, within a bound.
        let deadline = ContinuousClock.now + .seconds(10)
        while !names().contains(SQLiteArchive.writerThreadName), ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(names().contains(SQLiteArchive.writerThreadName))
    }

    @Test func retentionKeepsTheNewestWithinTheCountAndTheAge() async throws {
        let file = ClockedFile(folder())
        defer { file.remove() }
        func open() throws -> SQLiteArchive { try file.open(.init(maxRecords: 5, maxAgeSeconds: 3_600)) }
        // Four records, then a second later four more: closing writes them and applies retention.
        let first = try open()
        for id in 0..<4 { first.save(role: "3ds-server", id: "old\(id)", record(id)) }
        first.close(timeoutSeconds: 10)
        file.clock.withLock { $0 += 1_000 }
        let second = try open()
        for id in 0..<4 { second.save(role: "3ds-server", id: "new\(id)", record(id)) }
        second.close(timeoutSeconds: 10)
        #expect(second.status.removed == 3)

        let kept = try open()
        let ids = Set(await kept.recent(role: "3ds-server", limit: 100).map(\.id))
        kept.close(timeoutSeconds: 10)
        #expect(ids.count == 5 && ids.isSuperset(of: ["new0", "new1", "new2", "new3"]), "\(ids)")

        // Two hours later every record is past the age.
        file.clock.withLock { $0 += 7_200_000 }
        let later = try open()
        later.close(timeoutSeconds: 10)
        #expect(later.status.removed == 5)
        #expect(try await open().recent(role: "3ds-server", limit: 100).isEmpty)
    }

    /// Retention counts records as they are added, not with a scan: a record saved again is
    /// still one record, and the roles it keeps (test runs) are not counted.
    @Test func retentionCountsARecordSavedAgainOnceAndKeptRolesNotAtAll() async throws {
        let file = ClockedFile(folder())
        defer { file.remove() }
        func open() throws -> SQLiteArchive { try file.open(.init(maxRecords: 3, maxAgeSeconds: 3_600, keptRoles: ["run"])) }
        let first = try open()
        for id in ["a", "b", "c"] { first.save(role: "ds", id: id, record(1)) }
        for id in 0..<5 { first.save(role: "run", id: "run\(id)", record(id)) }
        first.close(timeoutSeconds: 10)
        #expect(first.status.removed == 0)

        file.clock.withLock { $0 += 1_000 }
        let second = try open()
        second.save(role: "ds", id: "a", { Array(#"{"id":"a","again":true}"#.utf8) })  // three records still
        second.close(timeoutSeconds: 10)
        #expect(second.status.removed == 0)

        file.clock.withLock { $0 += 1_000 }
        let third = try open()
        third.save(role: "ds", id: "d", record(4))  // four: one of the oldest, b or c (saved together), goes
        third.close(timeoutSeconds: 10)
        #expect(third.status.removed == 1)

        let kept = try open()
        defer { kept.close(timeoutSeconds: 10) }
        let ids = Set(await kept.recent(role: "ds", limit: 100).map(\.id))
        #expect(ids.count == 3 && ids.isSuperset(of: ["a", "d"]), "\(ids)")
        #expect(await kept.record(role: "ds", id: "a")?.json == Array(#"{"id":"a","again":true}"#.utf8))
        #expect(await kept.recent(role: "run", limit: 100).count == 5)
    }

    @Test func aFullDiskIsACountedLossNotACrashNorAHang() throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let reasons = Mutex<[String]>([])
        // 40 pages of 4 KiB: the schema fits, a few records do, then the file is full.
        let archive = try SQLiteArchive(path: directory + "/harness.sqlite", retention: .init(maxRecords: 1_000, maxAgeSeconds: 86_400),
                                        pageLimit: 40, onLoss: { _, reason in reasons.withLock { $0.append(reason) } })
        for id in 0..<200 { archive.save(role: "acs", id: "t\(id)", record(id, bytes: 8_000)) }
        archive.close(timeoutSeconds: 10)
        let status = archive.status
        #expect(status.lost > 0 && status.written + status.lost == 200, "\(status)")
        #expect(status.lastError?.contains("full") == true, "\(status)")
        #expect(reasons.withLock { $0.first?.contains("full") } == true)
    }

    @Test func aFullQueueIsACountedLoss() throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let archive = try SQLiteArchive(path: directory + "/harness.sqlite", retention: .init(maxRecords: 100, maxAgeSeconds: 86_400),
                                        maxPending: 1)
        // The writer takes the first record and is held in its encoding: the queue is then the caller's alone.
        archive.save(role: "ds", id: "held") {
            started.signal()
            release.wait()
            return Array("{}".utf8)
        }
        #expect(started.wait(timeout: .now() + 10) == .success)
        archive.save(role: "ds", id: "queued", record(1))
        archive.save(role: "ds", id: "queued", record(2))   // the same record again: no room needed
        archive.save(role: "ds", id: "refused", record(3))
        #expect(archive.status.lost == 1 && archive.status.pending == 1)
        release.signal()
        archive.close(timeoutSeconds: 10)
        #expect(archive.status.written == 2)
    }

    @Test func aFolderThatCannotBeMadeIsAnErrorSayingWhere() throws {
        let file = folder()
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect {
            _ = try SQLiteArchive(path: file + "/data/harness.sqlite", retention: .init(maxRecords: 1, maxAgeSeconds: 1))
        } throws: { error in
            "\(error)".contains(file + "/data")
        }
    }

    @Test func anotherSchemaIsRefusedRatherThanOverwritten() throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/harness.sqlite"
        // Another program's database, made with Python's own sqlite3 module (python3 is a test tool already).
        let made = try ChildProcess.run("python3", ["-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1]); db.execute("PRAGMA user_version = 7"); db.execute("CREATE TABLE theirs (x)"); db.commit()
            """, path])
        #expect(made.status == 0, "\(made.output)")
        #expect {
            _ = try SQLiteArchive(path: path, retention: .init(maxRecords: 1, maxAgeSeconds: 1))
        } throws: { error in
            "\(error)".contains("schema version 7")
        }
    }

    @Test func aFileOfTheFirstSchemaIsMovedOverWithItsRecords() async throws {
        let directory = folder()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/harness.sqlite"
        // Schema version 1 as the harness wrote it until the store moved to a rowid table.
        let made = try ChildProcess.run("python3", ["-c", """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.executescript("CREATE TABLE transactions (role TEXT NOT NULL, id TEXT NOT NULL, updated INTEGER NOT NULL, "
                             "record BLOB NOT NULL, PRIMARY KEY (role, id)) WITHOUT ROWID; "
                             "CREATE INDEX transactions_by_time ON transactions (updated); PRAGMA user_version = 1;")
            db.execute("INSERT INTO transactions VALUES ('run', 'r1', 1000, ?)", (b'{"id":"r1"}',))
            db.commit()
            """, path])
        #expect(made.status == 0, "\(made.output)")
        let archive = try SQLiteArchive(path: path, retention: .init(maxRecords: 10, maxAgeSeconds: 86_400 * 365 * 100))
        #expect(await archive.record(role: "run", id: "r1") == ArchivedRecord(role: "run", id: "r1", updated: 1000, json: Array(#"{"id":"r1"}"#.utf8)))
        archive.save(role: "run", id: "r1") { Array(#"{"id":"r1","finished":true}"#.utf8) }
        archive.close(timeoutSeconds: 10)
        #expect(archive.status.written == 1)
        let reopened = try SQLiteArchive(path: path, retention: .init(maxRecords: 10, maxAgeSeconds: 86_400 * 365 * 100))
        defer { reopened.close(timeoutSeconds: 10) }
        #expect(await reopened.record(role: "run", id: "r1")?.json == Array(#"{"id":"r1","finished":true}"#.utf8))
        #expect(await reopened.recent(role: "run", limit: 5).count == 1)
    }
}

/// A store file in a folder of its own, stamped by a clock the test moves (milliseconds).
private final class ClockedFile: Sendable {
    let directory: String
    let clock = Mutex<Int64>(1_000_000_000_000)

    init(_ directory: String) { self.directory = directory }

    func open(_ retention: SQLiteArchive.Retention) throws -> SQLiteArchive {
        try SQLiteArchive(path: directory + "/harness.sqlite", retention: retention, clock: HarnessClock(wallMilliseconds: { self.clock.withLock { $0 } }))
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
