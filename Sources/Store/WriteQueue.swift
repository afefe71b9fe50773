import Synchronization

/// What an archive has to write, shared by its callers and its writer: records queued by (role,
/// id), the last save winning; the batch being written (read, with the queue, before the store,
/// so a record is found as last saved before it is on disk); the answers waiting for their writes;
/// the counts. Bounded: past `maxPending` a save is counted as lost rather than held.
final class WriteQueue: Sendable {
    struct Key: Hashable, Sendable { let role, id: String }
    typealias Batch = [Key: @Sendable () -> [UInt8]]

    private struct State {
        var pending: Batch = [:]
        var writing: Batch = [:]
        var status = ArchiveStatus()
        var closing = false
        /// Saves taken so far, and how many of them are written (or lost): what ``written()`` waits on.
        var saved: UInt64 = 0
        var settled: UInt64 = 0
        var waiters: [(upTo: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
        /// From a record lost (a write failed, a save refused) until a batch is written: an answer that waited for its
        /// records then is told they may not be stored.
        var failing = false
    }

    private let state = Mutex(State())
    let maxPending: Int

    /// Whether an archive's writer applies retention now: after 10,000 writes, a minute after it last did, or at the close.
    static func retentionDue(writesSince writes: Int, lastAt last: ContinuousClock.Instant, closing: Bool) -> Bool {
        writes >= 10_000 || ContinuousClock.now - last > .seconds(60) || closing
    }

    init(maxPending: Int) { self.maxPending = maxPending }

    /// Queues a record; false (and the losses so far) when it is not taken: the queue is full or closed.
    /// `wasEmpty`: the writer may be waiting for this one.
    func save(_ key: Key, _ encode: @escaping @Sendable () -> [UInt8]) -> (accepted: Bool, wasEmpty: Bool, lost: Int) {
        state.withLock { state in
            guard !state.closing, state.pending.count < maxPending || state.pending[key] != nil else {
                state.status.lost += 1
                state.failing = true
                return (false, false, state.status.lost)
            }
            let wasEmpty = state.pending.isEmpty
            state.pending[key] = encode
            state.saved += 1
            return (true, wasEmpty, 0)
        }
    }

    /// A record saved and not yet written.
    func unwritten(_ key: Key) -> (@Sendable () -> [UInt8])? { state.withLock { $0.pending[key] ?? $0.writing[key] } }

    var status: ArchiveStatus {
        state.withLock { state in
            var status = state.status
            status.pending = state.pending.count
            return status
        }
    }

    var isClosing: Bool { state.withLock { $0.closing } }

    /// Takes no more saves; true for the first call.
    func close() -> Bool {
        state.withLock { state in
            defer { state.closing = true }
            return !state.closing
        }
    }

    /// What is queued, now being written; the saves it covers; whether the queue is closing.
    func takeBatch() -> (batch: Batch, upTo: UInt64, closing: Bool) {
        state.withLock { state in
            defer { state.pending.removeAll(keepingCapacity: true) }
            state.writing = state.pending
            return (state.pending, state.saved, state.closing)
        }
    }

    /// The batch is written or lost: reads go to the store again.
    func batchDone() { state.withLock { $0.writing = [:] } }

    func counted(written: Int = 0, removed: Int = 0) {
        state.withLock { state in
            state.status.written += written
            state.status.removed += removed
            if written > 0 { state.failing = false }
        }
    }

    /// Counts `count` records lost for `reason`; the losses so far.
    func lost(_ count: Int, because reason: String) -> Int {
        state.withLock { state in
            state.status.lost += count
            state.status.lastError = reason
            state.failing = true
            return state.status.lost
        }
    }

    func failed(_ reason: String) { state.withLock { $0.status.lastError = reason } }

    /// Returns once every record saved before the call is written or lost, or the queue closed: true when they are
    /// stored, false when the store was failing as they settled (a write failed, or a save was refused, and no batch
    /// has been written since).
    func written() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let settledNow = state.withLock { state -> Bool? in
                guard state.settled < state.saved, !state.closing else { return !state.failing }
                state.waiters.append((state.saved, continuation))
                return nil
            }
            if let settledNow { continuation.resume(returning: settledNow) }
        }
    }

    /// Resumes the answers waiting for saves up to `upTo`, now written or lost (all of them with `all`).
    func settle(upTo: UInt64, all: Bool = false) {
        let (ready, stored) = state.withLock { state in
            state.settled = max(state.settled, upTo)
            let settled = state.settled
            let ready = state.waiters.filter { all || $0.upTo <= settled }
            state.waiters.removeAll { all || $0.upTo <= settled }
            // Released by a writer that gave up: not stored.
            return (ready, !state.failing && !all)
        }
        for waiter in ready { waiter.continuation.resume(returning: stored) }
    }
}
