import Dispatch
import Synchronization

/// Work that runs beside the answers and outlives the request that began it: a decoupled result after its delay, a
/// challenge's time limit reached, a second AReq the page never asked for. Each task is kept until it ends, so that
/// shutdown cancels every one in its place in the order (before the server and the loops stop, so none starts a call on
/// a client already closed) and can wait for them. Nothing runs unowned.
public final class BackgroundWork: Sendable {
    private struct State {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var next: UInt64 = 0
        var closed = false
    }

    private let state = Mutex(State())
    /// Where the tasks run: on these loops, never blocked by a synchronous stop that waits for them (the concurrency
    /// pool's threads may be); nil: the pool.
    private let loops: EventLoopGroup?
    /// Entered as a task is kept, left as it ends: what ``closeAndWait(upTo:)`` waits on, with no task of its own.
    private let ending = DispatchGroup()

    public init(on loops: EventLoopGroup? = nil) {
        self.loops = loops
    }

    /// Runs `body` beside the caller, until it returns or shutdown cancels it; false (not run) once ``close()`` was called.
    @discardableResult
    public func run(_ body: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            let id = state.next
            state.next += 1
            // The task ends by removing itself, under the lock this insertion holds: never before it is kept.
            ending.enter()
            state.tasks[id] = Task(executorPreference: loops?.next()) { [self] in
                await body()
                _ = self.state.withLock { $0.tasks.removeValue(forKey: id) }
                ending.leave()
            }
            return true
        }
    }

    /// Tasks running now.
    public var running: Int { state.withLock { $0.tasks.count } }

    /// Refuses new work and cancels what runs: a body sleeping until its time (`Task.sleep`) wakes at once, cancelled.
    public func close() {
        let tasks = state.withLock { state in
            state.closed = true
            return Array(state.tasks.values)
        }
        tasks.forEach { $0.cancel() }
    }

    /// Returns once every task running at the call has ended.
    public func drained() async {
        for task in state.withLock({ Array($0.tasks.values) }) { await task.value }
    }

    /// ``close()``, then blocks the caller until every task has ended or `limit` has passed: the tasks still running then
    /// (one in the middle of a call that does not heed cancellation until its own time limit). For a synchronous shutdown,
    /// before the loops stop.
    public func closeAndWait(upTo limit: Duration) -> Int {
        close()
        let (seconds, attoseconds) = limit.components
        _ = ending.wait(timeout: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
        return running
    }
}
