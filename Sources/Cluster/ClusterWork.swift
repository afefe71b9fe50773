public import Logging
public import Store

/// What the roles share with the other instances of the store: ``SharedWork`` over a ``ClusterStore``. A record's home,
/// a job's claim, a count's use: each a statement the store answers for all the instances at once.
public struct ClusterWork: SharedWork {
    let store: any ClusterStore
    let logger: Logger

    public init(store: any ClusterStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    public var isShared: Bool { true }

    public func claimHome(of record: RecordID, from previous: String?) async -> Bool {
        do { return try await store.claimHome(role: record.role, id: record.id, from: previous) } catch {
            logger.warning("a record was not taken up: the store gave no answer", metadata: ["role": "\(record.role)", "id": "\(record.id)", "reason": "\(error.reason)"])
            return false
        }
    }

    public func schedule(_ job: ScheduledJob) { store.schedule(job) }

    public func claim(_ job: ScheduledJob) async -> Bool {
        guard let record = job.home else { return await store.claimJob(id: job.id) }
        // Held under a lease while this instance does it, so that no other instance runs it meanwhile; but the record's home
        // does it, whoever claimed it.
        _ = await store.claimJob(id: job.id)
        do { return try await store.claimHome(role: record.role, id: record.id, from: nil) } catch {
            // The instance whose timer it is does it rather than nobody.
            logger.warning("a job is done here: the store cannot say where its record lives", metadata: ["job": "\(job.id)", "reason": "\(error.reason)"])
            return true
        }
    }

    public func finish(_ id: String) async { await store.finishJob(id: id) }

    public func takeOver(_ record: RecordID) async -> TakeOver? {
        let home: String?
        do { home = try await store.home(role: record.role, id: record.id) } catch { return nil }
        if let home, await isLive(home) {
            // Its live home keeps it, unless the store names this instance (or none) after all.
            guard (try? await store.claimHome(role: record.role, id: record.id, from: nil)) == true else { return nil }
        }
        return TakeOver(previousHome: home)
    }

    public func startCount(id: String, remaining: Int, lifetimeMilliseconds: Int64) {
        store.startCount(id: id, remaining: remaining, expires: store.clock.wallMilliseconds() + lifetimeMilliseconds)
    }

    public func use(_ id: String, for transaction: String?) async -> Bool? { await store.use(id, for: transaction) }

    /// True when `url` announced itself lately; unknown (the store cannot say) counts as alive: a job waits rather than runs twice.
    func isLive(_ url: String) async -> Bool {
        await store.liveInstances()?.contains(url) ?? true
    }
}
