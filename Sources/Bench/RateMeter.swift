import Foundation
import Synchronization

/// How fast an operation runs on this machine, with nothing around it: the figure of a change to a reader, a rule or a
/// primitive, without the network and the store.
public enum RateMeter {
    /// Runs `operation` on `threads` threads for `seconds`: how many succeeded per second, and the CPU microseconds (user
    /// and system, this process) each cost.
    public static func measure(threads: Int, seconds: Double, _ operation: @escaping @Sendable () throws -> Void)
        -> (perSecond: Double, cpuMicroseconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        let total = Mutex(0)
        let cpuBefore = processCPUSeconds()
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            var done = 0
            while Date() < deadline {
                guard (try? operation()) != nil else { continue }
                done += 1
            }
            total.withLock { $0 += done }
        }
        let count = Double(max(1, total.withLock { $0 }))
        return (count / seconds, 1_000_000 * (processCPUSeconds() - cpuBefore) / count)
    }

    private static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
