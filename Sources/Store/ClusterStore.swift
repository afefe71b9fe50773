/// What the instances of a cluster share besides records and jobs: who is alive, and counts that each use
/// takes one of (a pin's transactions), whichever instance the use comes to.
public protocol ClusterStore: Sendable {
    /// Names this instance `url` in each record it writes from now on (``TransactionArchive/home(role:id:)``).
    func setInstanceURL(_ url: String?)
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
