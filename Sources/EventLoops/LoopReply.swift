import Synchronization

/// What a loop owes a task that handed it work: resumed once, by ``resume(returning:)``, or, when
/// every path that was to resume it is dropped (a job handed to a loop that has stopped, a callback
/// libuv never calls), with the `abandoned` value as it goes. A bare continuation dropped that way
/// leaves its task suspended for ever.
public final class LoopReply<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>
    private let abandoned: Value

    private init(_ continuation: CheckedContinuation<Value, Never>, abandoned: Value) {
        self.continuation = Mutex(continuation)
        self.abandoned = abandoned
    }

    /// Suspends until `start`'s reply is resumed, or dropped (then `abandoned`).
    public static func awaiting(abandoned: Value, _ start: (LoopReply<Value>) -> Void) async -> Value {
        await withCheckedContinuation { continuation in start(LoopReply(continuation, abandoned: abandoned)) }
    }

    /// Resumes the waiting task with `value`. Once: a second call is a bug of the caller (a debug build stops on it).
    public func resume(returning value: Value) {
        let waiting = continuation.withLock { $0.take() }
        assert(waiting != nil, "a LoopReply resumed twice")
        waiting?.resume(returning: value)
    }

    deinit { continuation.withLock { $0.take() }?.resume(returning: abandoned) }
}
