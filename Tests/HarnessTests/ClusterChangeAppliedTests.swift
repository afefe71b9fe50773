import Testing
@testable import Harness

/// A change spread to an instance that has not yet made the changes kept from before it started waits for them: it is
/// released by the replay's end, or by its own limit, and never polls.
@Suite("Changes applied at start")
struct ClusterChangeAppliedTests {
    @Test(.timeLimit(.minutes(1))) func requestsWaitingForTheReplayAreReleasedWhenItEnds() async {
        let applied = ClusterChange.Applied()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 { group.addTask { await applied.awaitReplay(limit: .seconds(120)) } }
            // Released by the replay, long before their limit: past the test's time limit, it fails.
            applied.setReplayed()
            await group.waitForAll()
        }
        #expect(applied.replayed)
    }

    @Test func aRequestStopsWaitingAtItsLimitWhenTheReplayNeverEnds() async {
        let applied = ClusterChange.Applied()
        let started = ContinuousClock.now
        await applied.awaitReplay(limit: .milliseconds(50))
        #expect(!applied.replayed)
        #expect(ContinuousClock.now - started < .seconds(30), "bounded by its limit")
    }

    @Test func afterTheReplayNothingWaits() async {
        let applied = ClusterChange.Applied()
        applied.setReplayed()
        await applied.awaitReplay(limit: .seconds(300))
        #expect(applied.first("change-1"))
        #expect(!applied.first("change-1"), "a change is applied once")
    }
}
