import EMV3DS
import Foundation
public import Journal
import JSON
public import Scenarios
public import Store
import Synchronization

/// The test runs: started, attached to as transactions begin, finished. Each change is saved
/// to the archive (role `run`, kept whatever the retention), and runs are read back at start,
/// so a run outlives a restart and can be finished after it.
public final class RunRegistry: JournalListener {
    private let runs = Mutex<[String: TestRun]>([:])
    private let archive: (any TransactionArchive)?
    public static let role = "run"
    /// At most this many runs are kept in memory (the oldest finished ones go first); a run holds
    /// a few hundred cases and the ids of their transactions.
    public static let capacity = 1_000

    public init(archive: (any TransactionArchive)?) {
        self.archive = archive
        guard let archive else { return }
        let kept = archive.recent(role: Self.role, limit: Self.capacity).compactMap { record in
            (try? JSONReader.parse(record.json).value).flatMap(TestRun.init(json:))
        }
        runs.withLock { runs in for run in kept { runs[run.id] = run } }
    }

    /// Starts a run of `suite` over `catalog`'s scenarios.
    public func start(_ suite: Suite, name: String?, catalog: ScenarioCatalog) throws(SuiteError) -> TestRun {
        let cases = try suite.cases(from: catalog)
        let id = UUID().uuidString.lowercased()
        let run = TestRun(id: id, name: name ?? "\(suite.name) \(UTCTime.iso8601(Date()))", suite: suite, cases: cases)
        runs.withLock { runs in
            runs[id] = run
            if runs.count > Self.capacity, let oldest = runs.values.filter({ $0.state == .finished }).min(by: { $0.createdAt < $1.createdAt }) {
                runs[oldest.id] = nil
            }
        }
        save(run)
        return run
    }

    public func run(_ id: String) -> TestRun? { runs.withLock { $0[id] } }

    /// Every run, newest first.
    public var all: [TestRun] { runs.withLock { Array($0.values) }.sorted { $0.createdAt > $1.createdAt } }

    /// Finishes a run: no transaction is attached to it any more. Nil when there is no such run.
    public func finish(_ id: String) -> TestRun? {
        let run = runs.withLock { runs -> TestRun? in
            guard var run = runs[id] else { return nil }
            if run.state == .open {
                run.state = .finished
                run.finishedAt = Date()
                runs[id] = run
            }
            return run
        }
        if let run { save(run) }
        return run
    }

    /// The case of the newest open run that the transaction's scenario, version and channel match.
    public func runCase(for entry: JournalEntry) -> JournalEntry.RunCase? {
        guard let scenario = entry.scenario, let version = entry.version else { return nil }
        let attached = runs.withLock { runs -> TestRun? in
            let open = runs.values.filter { $0.state == .open }.sorted { $0.createdAt > $1.createdAt }
            for var run in open {
                guard let index = run.cases.firstIndex(where: {
                    $0.scenario == scenario && $0.version == version && $0.channel.deviceChannel == entry.channel
                }) else { continue }
                run.cases[index].transactions.append(entry.dsTransID)
                runs[run.id] = run
                return run
            }
            return nil
        }
        guard let attached else { return nil }
        save(attached)
        let caseID = attached.cases.first { $0.transactions.last == entry.dsTransID }?.id ?? ""
        return JournalEntry.RunCase(run: attached.id, caseID: caseID)
    }

    private func save(_ run: TestRun) {
        archive?.save(role: Self.role, id: run.id) { run.archivedJSON }
    }
}
