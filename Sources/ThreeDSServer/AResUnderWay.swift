import Synchronization

/// The transactions whose AReq is out and whose ARes the 3DS Server has not read yet. The DS may relay an RReq before
/// the ARes reaches the 3DS Server (a decoupled result after a short delay, a slow DS leg): the RReq waits until the
/// ARes is read, as a 3DS Server that keeps its transaction before it sends the AReq would take it after.
final class AResUnderWay: Sendable {
    private let waiting = Mutex<[String: [CheckedContinuation<Void, Never>]]>([:])

    /// The AReq of `id` goes out (a second one under way for the same id changes nothing).
    func begin(_ id: String) {
        waiting.withLock { if $0[id] == nil { $0[id] = [] } }
    }

    /// The ARes of `id` is read, or the exchange failed: what waits for it goes on.
    func end(_ id: String) {
        let waiters = waiting.withLock { $0.removeValue(forKey: id) } ?? []
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the ARes of `id` is read, at once when none is under way. Bounded by the exchange's own time-out.
    func wait(for id: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queued = waiting.withLock { $0[id]?.append(continuation) != nil }
            if !queued { continuation.resume() }
        }
    }
}
