package import CLibUV
import Foundation
import Synchronization

/// One libuv loop running on its own thread.
///
/// Everything that touches a libuv handle happens on this thread. Work from other
/// threads is handed over with ``execute(_:)``; Swift tasks can run here too, since the
/// loop is a `TaskExecutor` (`Task(executorPreference: loop)`), so async request handlers
/// resume on the loop that owns their connection, with no thread hop.
public final class EventLoop: TaskExecutor, @unchecked Sendable {
    /// The loop's index in its group, for logs.
    public let index: Int
    package let uvLoop: UnsafeMutablePointer<uv_loop_t>
    private let wakeup: UnsafeMutablePointer<uv_async_t>
    private let idle: UnsafeMutablePointer<uv_idle_t>
    /// Work handed over from other threads, and whether the loop still takes any.
    private let remote = Mutex(RemoteJobs())
    private struct RemoteJobs: ~Copyable {
        var jobs: [RemoteJob] = []
        var isClosed = false
    }
    /// A job another thread hands to this loop: from then on it runs here alone, which is
    /// what `execute` promises its callers (the closure is not `@Sendable` for their sake).
    private struct RemoteJob: @unchecked Sendable {
        let run: () -> Void
    }
    /// The loop thread's own queue: no lock.
    private var localJobs: [() -> Void] = []
    private var idleActive = false
    private var thread: Thread?
    private let stopped = DispatchSemaphore(value: 0)
    /// `remote.isClosed` as the loop thread knows it, read there without the lock.
    private var isClosed = false
    /// Per-loop read buffer: reads are consumed synchronously in the read callback.
    package let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    /// The kernel's name of the loop's thread.
    private let threadName: String

    package init(index: Int, threadName: String? = nil) {
        self.index = index
        self.threadName = threadName ?? "uv-loop-\(index)"
        uvLoop = .allocate(capacity: 1)
        uv_loop_init(uvLoop)
        wakeup = .allocate(capacity: 1)
        idle = .allocate(capacity: 1)
        uv_async_init(uvLoop, wakeup) { handle in
            guard let handle, let loop = EventLoop.running(handle) else { return }
            loop.runRemoteJobs()
        }
        uv_idle_init(uvLoop, idle)
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        wakeup.pointee.data = opaque
        idle.pointee.data = opaque
        uvLoop.pointee.data = opaque
        // Never freed: a task holds its preferred executor unowned, and a task orphaned by
        // shutdown may still wake up and enqueue here (it is then dropped). A process has
        // a handful of loops; their libuv memory is released when the thread ends.
        _ = Unmanaged.passRetained(self)
    }

    /// The loop a handle was initialised on (its uv_loop_t's data).
    package static func running<H>(_ handle: UnsafeMutablePointer<H>) -> EventLoop? {
        let raw = UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self)
        guard let loop = raw.pointee.loop, let data = loop.pointee.data else { return nil }
        return Unmanaged<EventLoop>.fromOpaque(data).takeUnretainedValue()
    }

    /// True when called on this loop's thread.
    public var inLoop: Bool { EventLoop.current === self }

    /// The loop whose thread is the caller's, if any.
    public static var current: EventLoop? {
        guard let raw = pthread_getspecific(currentKey) else { return nil }
        return Unmanaged<EventLoop>.fromOpaque(raw).takeUnretainedValue()
    }

    private static let currentKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    package func start() {
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            // The kernel's name of the thread (what `top -H`, `perf` and /proc show), set from the thread
            // itself: Foundation applies a name only to the current thread, and before this the thread
            // showed as Dispatch's.
            Thread.current.name = threadName
            pthread_setspecific(EventLoop.currentKey, Unmanaged.passUnretained(self).toOpaque())
            ready.signal()
            uv_run(uvLoop, UV_RUN_DEFAULT)
            // Work handed over too late is dropped while the loop's memory is whole, and outside the lock: a job that
            // owed a task its answer (a LoopReply) resumes that task as it goes.
            var late = remote.withLock { remote in
                defer { remote.jobs = [] }
                return remote.jobs
            }
            late.removeAll()
            localJobs = []
            uv_loop_close(uvLoop)
            uvLoop.deallocate()
            wakeup.deallocate()
            idle.deallocate()
            readBuffer.deallocate()
            stopped.signal()
        }
        thread.stackSize = 1 << 20
        self.thread = thread
        thread.start()
        ready.wait()
    }

    /// Runs `job` on the loop thread: at once if already there (after the current
    /// callback returns), otherwise at the loop's next wake-up.
    public func execute(_ job: @escaping () -> Void) {
        if inLoop {
            if isClosed { return job() }
            localJobs.append(job)
            if !idleActive {
                idleActive = true
                // An active idle handle makes the loop poll without blocking, so the job runs soon.
                uv_idle_start(idle) { handle in
                    guard let handle, let loop = EventLoop.running(handle) else { return }
                    loop.runLocalJobs()
                }
            }
        } else {
            let job = RemoteJob(run: job)
            remote.withLock { remote in
                // A stopped loop runs nothing more; late work is dropped, as at process exit.
                guard !remote.isClosed else { return }
                remote.jobs.append(job)
                uv_async_send(wakeup)
            }
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    private func runRemoteJobs() {
        let jobs = remote.withLock { remote in
            let jobs = remote.jobs
            remote.jobs.removeAll(keepingCapacity: true)
            return jobs
        }
        for job in jobs { job.run() }
    }

    private func runLocalJobs() {
        while !localJobs.isEmpty {
            let jobs = localJobs
            localJobs.removeAll(keepingCapacity: true)
            for job in jobs { job() }
        }
        idleActive = false
        uv_idle_stop(idle)
    }

    /// Asks every handle's owner to close, lets the loop run out and joins its thread.
    ///
    /// What a close sets going may open a handle again: a connection's close callback that dials anew, or a task it
    /// resumes. Such a handle would keep the loop, and the thread joining it, waiting forever; so each turn of the loop
    /// closes what is open, until a turn finds nothing open, and then the loop runs out.
    package func stop() {
        execute { [self] in
            runLocalJobs()
            remote.withLock { $0.isClosed = true }
            isClosed = true
            uv_close(wakeup.asHandle, nil)
            _ = askOwnersToClose()
            // An active idle handle: the turns do not block while handles close.
            uv_idle_stop(idle)
            uv_idle_start(idle) { handle in
                guard let handle, let loop = EventLoop.running(handle) else { return }
                loop.sweep()
            }
        }
        stopped.wait()
        thread = nil  // the loop object itself stays (see init); what it held goes
    }

    /// One turn of a stopping loop: the jobs queued before it stopped (later ones run at once), then the handles opened
    /// since the last turn closed; once none was, the loop may run out.
    private func sweep() {
        let jobs = localJobs
        localJobs = []
        for job in jobs { job() }
        guard askOwnersToClose() == 0 else { return }
        uv_idle_stop(idle)
        uv_close(idle.asHandle, nil)
    }

    /// Asks the owner of every open handle (but the loop's own) to close it; how many it closed.
    private func askOwnersToClose() -> Int {
        var closed = 0
        withUnsafeMutablePointer(to: &closed) { counter in
            uv_walk(uvLoop, { handle, counter in
                guard let handle, uv_is_closing(handle) == 0,
                      handle.pointee.type != UV_ASYNC, handle.pointee.type != UV_IDLE,
                      let data = handle.pointee.data,
                      let owner = Unmanaged<AnyObject>.fromOpaque(data).takeUnretainedValue() as? LoopHandleOwner else { return }
                owner.close()
                if uv_is_closing(handle) != 0 { counter?.assumingMemoryBound(to: Int.self).pointee += 1 }
            }, counter)
        }
        return closed
    }

    /// Starts a one-shot or repeating timer on this loop. Must be called on the loop.
    public func scheduleTimer(after milliseconds: UInt64, repeat interval: UInt64 = 0, _ fire: @escaping () -> Void) -> LoopTimer {
        precondition(inLoop, "timers are created on their loop")
        let timer = LoopTimer(loop: self, fire: fire)
        timer.start(after: milliseconds, repeat: interval)
        return timer
    }
}
