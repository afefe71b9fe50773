import EventLoops
import Synchronization
import Testing
import TestSupport

/// Work beside the answers is owned: kept while it runs, cancelled at shutdown, and refused after it.
@Suite("Background work")
struct BackgroundWorkTests {
    @Test func aTaskIsKeptWhileItRunsAndForgottenWhenItEnds() async {
        let work = BackgroundWork()
        let (gate, open) = AsyncStream<Void>.makeStream()
        #expect(work.run { for await _ in gate { return } })
        #expect(work.running == 1)
        open.yield()
        await work.drained()
        #expect(work.running == 0)
    }

    @Test func closingCancelsWhatSleepsUntilItsTimeAndRefusesMore() async {
        let work = BackgroundWork()
        let (outcomes, record) = AsyncStream<String>.makeStream()
        work.run {
            let slept = (try? await Task.sleep(for: .seconds(3_600))) != nil
            record.yield(slept ? "ran at its time" : "cancelled")
        }
        work.close()
        await work.drained()
        record.finish()
        var seen: [String] = []
        for await outcome in outcomes { seen.append(outcome) }
        #expect(seen == ["cancelled"])
        #expect(work.run { record.yield("after close") } == false)
        #expect(work.running == 0)
    }

    @Test func aSynchronousStopWaitsForCancelledWorkToEnd() async throws {
        let loops = EventLoopGroup(loopCount: 1)
        defer { loops.shutdown() }
        let work = BackgroundWork(on: loops)
        let ended = Flag()
        work.run {
            _ = try? await Task.sleep(for: .seconds(3_600))
            ended.value.store(true, ordering: .relaxed)
        }
        // Returns as the cancelled task ends; the limit is only for a task that never does.
        let left = try await offThePool { work.closeAndWait(upTo: .seconds(120)) }
        let endedBeforeTheReturn = ended.value.load(ordering: .relaxed)
        #expect(endedBeforeTheReturn)
        #expect(left == 0)
    }

    @Test func aSynchronousStopNamesTheWorkThatOutlivesItsLimit() async throws {
        let loops = EventLoopGroup(loopCount: 1)
        defer { loops.shutdown() }
        let work = BackgroundWork(on: loops)
        // A call that does not heed cancellation, until its own end.
        let gate = Gate()
        work.run { await gate.passed() }
        let left = try await offThePool { work.closeAndWait(upTo: .milliseconds(100)) }
        #expect(left == 1)
        gate.open()
        await work.drained()
        #expect(work.running == 0)
    }
}

private final class Flag: Sendable {
    let value = Atomic<Bool>(false)
}

/// A wait that cancellation does not end: only ``open()``.
private final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiting: CheckedContinuation<Void, Never>?)>((false, nil))

    func passed() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if !state.open { state.waiting = continuation }
                return state.open
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        state.withLock { state in
            state.open = true
            return state.waiting.take()
        }?.resume()
    }
}
