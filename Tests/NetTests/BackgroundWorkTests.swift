import EventLoops
import Testing

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
}
