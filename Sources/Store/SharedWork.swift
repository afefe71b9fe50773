/// A role's record in a store, by the store's name of the role's records and the record's id.
public struct RecordID: Hashable, Sendable {
    public let role: String
    public let id: String

    public init(role: String, id: String) {
        self.role = role
        self.id = id
    }
}

/// What a role shares with the other instances of its store, when several share one (docs/scale.md): its records' homes,
/// work due later that must be done once whichever instance does it (an RReq due, a challenge's time limit), and counts
/// that each use takes one of. ``SoleInstance`` when one instance has the store to itself: its memory and its timers are all
/// there is.
public protocol SharedWork: Sendable {
    /// False for a sole instance: a record not in memory is nobody's to take up.
    var isShared: Bool { get }
    /// Makes this instance the home of `record`: when the store names `previous` (an instance found gone), or names no other
    /// instance (`previous` nil). Of two instances taking a record from one gone home, one gets it.
    func claimHome(of record: RecordID, from previous: String?) async -> Bool
    /// Keeps `job` for whichever instance does it.
    func schedule(_ job: ScheduledJob)
    /// This instance's own timer for `job` came due: true when it does the job; false when another instance did it or does
    /// (the home of the job's ``ScheduledJob/home`` record, or the first to claim a job without one).
    func claim(_ job: ScheduledJob) async -> Bool
    /// The job `id` is done, or not due any more.
    func finish(_ id: String) async
    /// Whether this instance may take `record` up to do an overdue job of an instance that died: `nil` while the record's home
    /// lives and keeps it (or the store cannot say); otherwise the home it is taken from (nil: it named none).
    func takeOver(_ record: RecordID) async -> TakeOver?
    /// Keeps a count of `remaining` uses under `id` for `lifetimeMilliseconds`.
    func startCount(id: String, remaining: Int, lifetimeMilliseconds: Int64)
    /// Takes one use of the count `id` (for `transaction`: its other role asking again gets the same answer): true while
    /// one was left, false when used up, expired or unknown, nil when the store cannot answer.
    func use(_ id: String, for transaction: String?) async -> Bool?
}

/// The home an overdue job's record is taken from.
public struct TakeOver: Sendable, Equatable {
    public let previousHome: String?

    public init(previousHome: String?) { self.previousHome = previousHome }
}

/// One instance alone: nothing to take up, no job outlives it, and counts are kept where they are used.
public struct SoleInstance: SharedWork {
    public init() {}

    public var isShared: Bool { false }
    public func claimHome(of record: RecordID, from previous: String?) async -> Bool { true }
    public func schedule(_ job: ScheduledJob) {}
    public func claim(_ job: ScheduledJob) async -> Bool { true }
    public func finish(_ id: String) async {}
    public func takeOver(_ record: RecordID) async -> TakeOver? { nil }
    public func startCount(id: String, remaining: Int, lifetimeMilliseconds: Int64) {}
    public func use(_ id: String, for transaction: String?) async -> Bool? { nil }
}
