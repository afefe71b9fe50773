import Foundation

/// A fixed set of event loops, one per thread (by default one per core).
public final class EventLoopGroup: @unchecked Sendable {
    public let loops: [EventLoop]
    /// Ports of the connections this group's clients have open (see ``OwnClientPorts``).
    public let ownClientPorts = OwnClientPorts()
    private let lock = NSLock()
    private var nextIndex = 0
    private var stopped = false

    /// Starts `count` loops, each on its own thread.
    public init(loopCount: Int = ProcessInfo.processInfo.activeProcessorCount) {
        loops = (0..<max(1, loopCount)).map { EventLoop(index: $0) }
        loops.forEach { $0.start() }
    }

    /// The caller's loop if it runs on one of ours, else the next loop round-robin.
    public func next() -> EventLoop {
        if let current = EventLoop.current, loops.contains(where: { $0 === current }) { return current }
        lock.lock()
        defer { lock.unlock() }
        nextIndex = (nextIndex + 1) % loops.count
        return loops[nextIndex]
    }

    /// Closes every handle on every loop and joins the threads. Call it once, off the loops.
    public func shutdown() {
        lock.lock()
        let alreadyStopped = stopped
        stopped = true
        lock.unlock()
        guard !alreadyStopped else { return }
        precondition(EventLoop.current == nil, "shutdown() would wait for its own loop")
        loops.forEach { $0.stop() }
    }
}
