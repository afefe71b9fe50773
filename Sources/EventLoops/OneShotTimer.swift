/// A time limit on a loop that any thread may cancel: a challenge's ten minutes, an SPC offer's wait. A libuv timer of one
/// loop (the caller's, when it runs on one), where a task sleeping on the global pool woke a thread of that pool to start
/// it and another to cancel it, for every challenge (docs/benchmarks.md). Cancelling from the timer's
/// own loop costs no wake-up at all.
public final class OneShotTimer: Sendable {
    /// The libuv timer while it runs, and whether it was cancelled (a cancel may reach the loop before the start handed
    /// over from another thread): touched on the loop only.
    private final class State {
        var timer: LoopTimer?
        var cancelled = false
    }

    private let state: LoopBound<State>

    /// Runs `fire` once, `seconds` from now (none below zero), on `loop`: at once when the caller is on it, else handed over.
    public init(after seconds: Double, on loop: EventLoop, _ fire: @escaping @Sendable () -> Void) {
        let state = LoopBound(State(), on: loop)
        self.state = state
        let milliseconds = UInt64(max(0, seconds) * 1000)
        let start = {
            guard !state.value.cancelled else { return }
            // The timer holds the state until it fires or is cancelled: then both go.
            state.value.timer = loop.scheduleTimer(after: milliseconds) {
                Self.stop(state)
                fire()
            }
        }
        if loop.inLoop { start() } else { loop.execute(start) }
    }

    /// Stops it, from any thread; nothing once it has fired. From its loop it never fires after this; from another
    /// thread the cancel is handed to the loop, and a timer already due may fire first: what it runs checks that it is
    /// still wanted (the challenge still open, the offer not yet answered), as it had to when it was a task.
    public func cancel() {
        let state = state
        if state.loop.inLoop { Self.stop(state) } else { state.loop.execute { Self.stop(state) } }
    }

    private static func stop(_ state: LoopBound<State>) {
        state.value.cancelled = true
        state.value.timer?.close()
        state.value.timer = nil
    }
}
