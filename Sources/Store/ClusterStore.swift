/// What the instances of a cluster share besides records: each record's home, jobs that any instance runs once, who is
/// alive, and counts that each use takes one of (a pin's transactions), whichever instance the use comes to.
public protocol ClusterStore: Sendable {
    /// The clock this store stamps with (an announcement, a lease, a count's expiry): every time given to it is read on it.
    var clock: HarnessClock { get }
    /// Names this instance `url` in each record it writes from now on (``home(role:id:)``).
    func setInstanceURL(_ url: String?)
    /// The URL of the instance that wrote the record last, and holds it in memory: where a later message of the transaction
    /// goes. Nil when the record names none (or there is no such record).
    func home(role: String, id: String) async throws(StoreUnavailable) -> String?
    /// Makes this instance the home of the record (`role`, `id`) when the record names `previous` (an instance found gone),
    /// or names this one already or none (`previous` nil): true when it names this one after the call. Of two instances
    /// taking a record from one gone home, one gets it, so two never go on with one transaction.
    func claimHome(role: String, id: String, from previous: String?) async throws(StoreUnavailable) -> Bool
    /// Keeps `job` until it is claimed: written as the records are (an answer waits for it as for them).
    func schedule(_ job: ScheduledJob)
    /// Takes the job `id` to run it: true for one caller only (the instance whose timer came due, or one that found it
    /// overdue). A claim is a lease: a job whose runner died before ``finishJob(id:)`` is claimed again once the lease ends.
    /// A store that cannot answer leaves the job to the caller (late is better than never): true.
    func claimJob(id: String) async -> Bool
    /// Takes up to `limit` jobs due before `dueBefore` (milliseconds since 1970) and not under a lease: those of an
    /// instance that died, or whose runner died.
    func claimOverdueJobs(dueBefore: Int64, limit: Int) async throws(StoreUnavailable) -> [ScheduledJob]
    /// The job `id` was run: it is gone.
    func finishJob(id: String) async
    /// The job `id` was claimed and not run (its time has not come for this claimer): claimable again at once.
    func releaseJob(id: String) async
    /// Says this instance is alive, at `url`.
    func announce(_ url: String) async
    /// The instances that announced themselves since `seenSince` (milliseconds since 1970); nil when the store cannot answer.
    func instances(seenSince: Int64) async -> [String]?
    /// Keeps a count of `remaining` uses under `id` until `expires`, written as the records are (before the answer that made it).
    func startCount(id: String, remaining: Int, expires: Int64)
    /// What names this store for as long as it lives, the same for every instance (the database's oid): the epoch of
    /// the DS's card-range serials, so that a serial one instance gave is known to the others. Asked once, at start.
    func clusterEpoch() -> String?
    /// The secret every instance of this store shares, made with the schema: what a request from another instance carries
    /// to be trusted as one. Asked once, at start; nil when the store cannot say.
    func clusterSecret() -> String?
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
