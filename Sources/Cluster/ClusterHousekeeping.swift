import EMV3DS
import Foundation
import Logging
import Store

/// What every instance of a cluster does in the background until shutdown: says it is alive (every
/// ``announceEvery``), and runs the jobs of instances that died (a decoupled result due from one): each second
/// it claims jobs overdue by ``graceMilliseconds`` (their own instance would have claimed them at their time) and
/// runs them, once in the whole cluster (`FOR UPDATE SKIP LOCKED` under a lease, deleted once run; a runner
/// that dies mid-run leaves the job to be claimed again when its lease ends).
enum ClusterHousekeeping {
    static let graceMilliseconds: Int64 = 3_000
    static let interval = Duration.seconds(1)
    static let announceEvery = 5
    /// An instance not heard of for this long is not sent changes: 3 announcements missed.
    static let liveWindowMilliseconds: Int64 = 15_000

    /// Runs until the task is cancelled (at shutdown).
    /// `runner` says whether it ran the job (then it is gone), or left it for later (then it is claimable again).
    static func run(_ store: any ClusterStore, instanceURL: String, logger: Logger, runner: @escaping @Sendable (ScheduledJob) async -> Bool) async {
        var tick = 0
        repeat {
            if tick % announceEvery == 0 { await store.announce(instanceURL) }
            tick += 1
            let jobs: [ScheduledJob]
            do { jobs = try await store.claimOverdueJobs(dueBefore: store.clock.wallMilliseconds() - graceMilliseconds, limit: 20) } catch {
                logger.debug("no overdue jobs claimed: the store gave no answer", metadata: ["reason": "\(error.reason)"])
                continue
            }
            // Side by side: each may wait for a peer (an RReq, its RRes) up to its time limit.
            await withTaskGroup(of: Void.self) { group in
                for job in jobs {
                    group.addTask {
                        if await runner(job) { await store.finishJob(id: job.id) } else { await store.releaseJob(id: job.id) }
                    }
                }
            }
        } while (try? await Task.sleep(for: interval)) != nil
    }
}

extension ClusterStore {
    /// The instances heard of within ``ClusterHousekeeping/liveWindowMilliseconds`` on this store's clock; nil when the
    /// store cannot say.
    func liveInstances() async -> [String]? {
        await instances(seenSince: clock.wallMilliseconds() - ClusterHousekeeping.liveWindowMilliseconds)
    }
}
