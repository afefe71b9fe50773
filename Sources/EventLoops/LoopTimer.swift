import CLibUV

/// A libuv timer on one loop; use it from that loop only.
public final class LoopTimer: LoopHandleOwner {
    private var handle: UnsafeMutablePointer<uv_timer_t>?
    /// Let go at close: what it holds (an object that holds this timer) must not outlive the timer.
    private var fire: (() -> Void)?

    package init(loop: EventLoop, fire: @escaping () -> Void) {
        self.fire = fire
        let handle = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        uv_timer_init(loop.uvLoop, handle)
        attach(self, to: handle)
        self.handle = handle
    }

    package func start(after milliseconds: UInt64, repeat interval: UInt64) {
        guard let handle else { return }
        uv_timer_start(handle, { handle in
            owner(of: handle, as: LoopTimer.self)?.fire?()
        }, milliseconds, interval)
    }

    /// Restarts the countdown from now (for idle timeouts).
    public func restart(after milliseconds: UInt64) {
        guard let handle else { return }
        uv_timer_stop(handle)
        start(after: milliseconds, repeat: 0)
    }

    /// Stops the timer without closing it.
    public func pause() {
        if let handle { uv_timer_stop(handle) }
    }

    /// Stops and closes the timer; it cannot fire afterwards.
    public func close() {
        guard let handle else { return }
        self.handle = nil
        fire = nil
        uv_timer_stop(handle)
        closeOwnedHandle(handle)
    }
}
