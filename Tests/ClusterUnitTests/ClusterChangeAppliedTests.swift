import Testing
@testable import Cluster

/// A change spread to an instance that has not yet made the changes kept from before it started waits for them: it is
/// released by the replay's end, or by its own limit, and never polls.
@Suite("Changes applied at start")
struct ClusterChangeAppliedTests {
    @Test func requestsWaitingForTheReplayAreReleasedByItsEnd() async {
        let applied = ClusterChange.Applied()
        let released = await withTaskGroup(of: Bool.self) { group in
            // Limits far beyond the test: a waiter the replay did not release would come back false.
            for _ in 0..<3 { group.addTask { await applied.awaitReplay(limit: .seconds(300)) } }
            applied.setReplayed()
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(released == [true, true, true])
    }

    @Test func aRequestStopsWaitingAtItsLimitWhenTheReplayNeverEnds() async {
        let applied = ClusterChange.Applied()
        #expect(await applied.awaitReplay(limit: .milliseconds(50)) == false)
        #expect(!applied.replayed)
    }

    @Test func afterTheReplayNothingWaits() async {
        let applied = ClusterChange.Applied()
        applied.setReplayed()
        #expect(await applied.awaitReplay(limit: .seconds(300)))
        #expect(applied.first("change-1"))
        #expect(!applied.first("change-1"), "a change is applied once")
    }
}
