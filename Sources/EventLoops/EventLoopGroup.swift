import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
private let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
#endif

/// A fixed set of event loops, one per thread (by default one per core).
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]
    /// Ports of the connections this group's clients have open (see ``OwnClientPorts``).
    public let ownClientPorts = OwnClientPorts()
    private let nextIndex = Atomic<UInt>(0)
    private let stopped = Atomic<Bool>(false)

    /// Starts `loopCount` loops (default: one per core), each on its own thread, named
    /// `threadName` (`uv-loop-N` by default) for `top -H`, `perf` and /proc.
    public init(loopCount: Int? = nil, threadName: String? = nil) {
        _ = Self.raiseOpenFileLimit
        loops = (0..<max(1, loopCount ?? ProcessInfo.processInfo.activeProcessorCount)).map { EventLoop(index: $0, threadName: threadName) }
        loops.forEach { $0.start() }
    }

    /// The soft limit on open files raised to the hard one, once per process. Each connection
    /// is a descriptor, two when the roles call each other; at the common soft default of
    /// 1024, a few hundred connections exhaust it, and libuv then closes new connections as
    /// it accepts them (its EMFILE guard): answers lost without a word.
    public static let raiseOpenFileLimit: (soft: UInt64, hard: UInt64) = {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 else { return (0, 0) }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(RLIMIT_NOFILE_VALUE, &raised) == 0 { limit = raised }
        }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }()

    /// The caller's loop if it runs on one of ours, else the next loop round-robin.
    public func next() -> EventLoop {
        if let current = EventLoop.current, loops.contains(where: { $0 === current }) { return current }
        return loops[Int(nextIndex.wrappingAdd(1, ordering: .relaxed).newValue % UInt(loops.count))]
    }

    /// Closes every handle on every loop and joins the threads. Call it once, off the loops.
    public func shutdown() {
        let alreadyStopped = stopped.exchange(true, ordering: .acquiringAndReleasing)
        guard !alreadyStopped else { return }
        precondition(EventLoop.current == nil, "shutdown() would wait for its own loop")
        loops.forEach { $0.stop() }
    }
}
