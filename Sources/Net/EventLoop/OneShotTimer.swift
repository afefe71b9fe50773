/// A time limit on a loop that any thread may cancel: a challenge's ten minutes, an SPC offer's wait. A libuv timer of one
/// loop, where a task sleeping on the global pool woke a thread of that pool to start it and another to cancel it, for
/// every challenge (docs/benchmarks.md, eleventh session). Cancelling from the timer's own loop costs no wake-up at all.
public final class OneShotTimer: @unchecked Sendable {
    private let loop: EventLoop
    /// Touched on `loop` only (hence `@unchecked`): the libuv timer while it runs, and whether it was cancelled (a cancel
    /// may reach the loop before the start handed over from another thread).
    private var timer: LoopTimer?
    private var cancelled = false

    /// Runs `fire` once, `seconds` from now (none below zero), on `loop`: at once when the caller is on it, else handed over.
    public init(after seconds: Double, on loop: EventLoop, _ fire: @escaping @Sendable () -> Void) {
        self.loop = loop
        let milliseconds = UInt64(max(0, seconds) * 1000)
        let start = { [self] in
            guard !cancelled else { return }
            // The timer holds this object until it fires or is cancelled: then both go.
            timer = loop.scheduleTimer(after: milliseconds) { [self] in
                stop()
                fire()
            }
        }
        if loop.inLoop { start() } else { loop.execute(start) }
    }

    /// Stops it before it fires, from any thread; nothing once it has fired.
    public func cancel() {
        if loop.inLoop { stop() } else { loop.execute { [self] in stop() } }
    }

    private func stop() {
        cancelled = true
        timer?.close()
        timer = nil
    }
}
