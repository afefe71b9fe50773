import EventLoops
import Synchronization
import Testing
@testable import Net

@Suite("One-shot timers: time limits any thread may cancel")
struct OneShotTimerTests {
    /// What fired, in order, and whether each ran on its loop.
    private final class Firings: Sendable {
        let names = Mutex<[(name: String, onLoop: Bool)]>([])
        let stream: AsyncStream<String>
        private let continuation: AsyncStream<String>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream() }
        func fired(_ name: String, on loop: EventLoop) {
            names.withLock { $0.append((name, loop.inLoop)) }
            continuation.yield(name)
        }
    }

    @Test func aTimerStartedOffItsLoopFiresOnItsLoop() async throws {
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let loop = group.loops[0], firings = Firings()
        _ = OneShotTimer(after: 0.02, on: loop) { firings.fired("limit", on: loop) }
        var iterator = firings.stream.makeAsyncIterator()
        #expect(await iterator.next() == "limit")
        #expect(firings.names.withLock { $0.map(\.onLoop) } == [true])
    }

    @Test func aCancelledTimerNeverFires() async throws {
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let loop = group.loops[0], firings = Firings()
        // Cancelled from this thread, off the loop, then a later timer: timers of one loop fire in the order of their
        // times, so when the later one has fired, the cancelled one would have fired before it.
        let cancelled = OneShotTimer(after: 0.02, on: loop) { firings.fired("cancelled", on: loop) }
        cancelled.cancel()
        _ = OneShotTimer(after: 0.1, on: loop) { firings.fired("later", on: loop) }
        var iterator = firings.stream.makeAsyncIterator()
        #expect(await iterator.next() == "later")
        #expect(firings.names.withLock { $0.map(\.name) } == ["later"])
    }

    @Test func aTimerStillRunningWhenItsLoopStopsLetsGoOfWhatItHolds() async throws {
        // A challenge's ten-minute limit holds the ACS: a harness stopped with a challenge open must not keep it.
        final class Held: Sendable {}
        let group = EventLoopGroup(loopCount: 1)
        let loop = group.loops[0], firings = Firings()
        weak var released: Held?
        do {
            let held = Held()
            released = held
            _ = OneShotTimer(after: 600, on: loop) { _ = held }
            // Started once this later job has run: jobs handed to a loop run in order.
            _ = OneShotTimer(after: 0, on: loop) { firings.fired("started", on: loop) }
        }
        var iterator = firings.stream.makeAsyncIterator()
        #expect(await iterator.next() == "started")
        #expect(released != nil)
        group.shutdown()
        #expect(released == nil)
    }

    @Test func aTimerCancelledOnItsLoopNeverFiresAndCancellingAgainIsHarmless() async throws {
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let loop = group.loops[0], firings = Firings()
        loop.execute {
            let timer = OneShotTimer(after: 0.02, on: loop) { firings.fired("cancelled", on: loop) }
            timer.cancel()
            timer.cancel()
            _ = OneShotTimer(after: 0.1, on: loop) { firings.fired("later", on: loop) }
        }
        var iterator = firings.stream.makeAsyncIterator()
        #expect(await iterator.next() == "later")
        #expect(firings.names.withLock { $0.map(\.name) } == ["later"])
    }
}
