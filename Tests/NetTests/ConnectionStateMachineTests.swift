import Testing
@testable import Net

/// The connection's rules, driven event by event: no sockets, and the clock fires when the test says.
@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    typealias Machine = ConnectionStateMachine<String>

    /// A plain connection that has received `request` and handed it to its handler.
    private func handling(_ request: String = "first", fromOwnClient: Bool = false) -> Machine {
        var machine = Machine(fromOwnClient: fromOwnClient)
        _ = machine.start(secure: false)
        _ = machine.bytesArrived()
        _ = machine.parsed(request)
        return machine
    }

    private func handled(_ effects: Machine.Effects) -> String? {
        if case .request(let request)? = effects.handle { return request }
        return nil
    }

    @Test func aPlainConnectionStartsOnTheKeepAliveClockAndATLSOneOnTheRequestClock() {
        var plain = Machine()
        #expect(plain.start(secure: false).clock == .idle)
        var secure = Machine()
        #expect(secure.start(secure: true).clock == .request)
        // The handshake is done: the keep-alive clock until the first request byte.
        #expect(secure.handshakeFinished(inMessage: false).clock == .idle)
    }

    @Test func theFirstByteStartsTheRequestClockAndLaterBytesDoNotRestartIt() {
        var machine = Machine()
        _ = machine.start(secure: false)
        #expect(machine.bytesArrived().clock == .request)
        #expect(machine.bytesParsed(inMessage: true).clock == nil)
        #expect(machine.bytesArrived().clock == nil)
        #expect(machine.bytesParsed(inMessage: true).clock == nil)
    }

    @Test func anIdleConnectionIsClosedWhenTheKeepAliveClockRunsOut() {
        var machine = Machine()
        _ = machine.start(secure: false)
        #expect(machine.clockFired(inMessage: false, reason: "late").close == .now)
        #expect(machine.activity == .closed)
    }

    @Test func anIncompleteRequestIsAnswered408WhenTheRequestClockRunsOut() {
        var machine = Machine()
        _ = machine.start(secure: false)
        _ = machine.bytesArrived()
        let effects = machine.clockFired(inMessage: true, reason: "not in full within 300 ms")
        guard case .refusal(let status, let reason)? = effects.handle else {
            Issue.record("no refusal handed over: \(effects)")
            return
        }
        #expect(status == .requestTimeout && reason == "not in full within 300 ms")
        #expect(effects.reading == false)
        #expect(machine.closesAfterQueue)
    }

    @Test func pipelinedRequestsAreHandledOneAtATimeInOrder() {
        var machine = handling("first")
        #expect(machine.activity == .handling)
        // The second arrives while the first is in its handler: it waits.
        #expect(handled(machine.parsed("second")) == nil)
        #expect(machine.queuedCount == 1)
        let (answer, _) = machine.answer(.complete, keepAliveRequested: true, inMessage: false)
        #expect(answer == .send(keepAlive: true))
        let next = machine.sent(unsentBytes: 0, inMessage: false)
        #expect(handled(next) == "second")
        #expect(next.clock == .stopped)
        _ = machine.answer(.complete, keepAliveRequested: true, inMessage: false)
        // Nothing left: back on the keep-alive clock.
        #expect(machine.sent(unsentBytes: 0, inMessage: false).clock == .idle)
    }

    @Test func noClockRunsWhileAHandlerRuns() {
        var machine = handling()
        #expect(machine.clock == .stopped)
        #expect(machine.clockFired(inMessage: false, reason: "").close == nil)
        #expect(machine.activity == .handling)
    }

    @Test func tooManyPipelinedRequestsStopReadingUntilTheyAreAnswered() {
        var machine = handling()
        var stopped = false
        for index in 0...Machine.maxQueued { stopped = machine.parsed("r\(index)").reading == false || stopped }
        #expect(stopped && machine.queuedCount == Machine.maxQueued + 1)
        // Reading resumes once no more than the limit wait.
        _ = machine.answer(.complete, keepAliveRequested: true, inMessage: false)
        #expect(machine.sent(unsentBytes: 0, inMessage: false).reading == nil)
        _ = machine.answer(.complete, keepAliveRequested: true, inMessage: false)
        #expect(machine.sent(unsentBytes: 0, inMessage: false).reading == true)
    }

    @Test func aRefusalIsAnsweredAfterTheRequestsBeforeItThenTheConnectionCloses() {
        var machine = handling()
        let refusal = machine.refuse(.badRequest, "malformed")
        #expect(refusal.handle == nil && refusal.reading == false)
        _ = machine.answer(.complete, keepAliveRequested: true, inMessage: false)
        let next = machine.sent(unsentBytes: 0, inMessage: false)
        guard case .refusal(.badRequest, "malformed")? = next.handle else {
            Issue.record("the refusal was not handed over: \(next)")
            return
        }
        #expect(!machine.acceptsBytes)
        #expect(machine.answer(.complete, keepAliveRequested: false, inMessage: false) == (.send(keepAlive: false), .init(close: .afterFlush)))
    }

    @Test func oneHundredContinueWaitsForTheAnswerOwedBeforeIt() {
        var machine = handling()
        // The next request's head asks for 100 Continue while the first is still being handled.
        #expect(!machine.expectsContinue(inMessage: true).sendContinue)
        _ = machine.answer(.complete, keepAliveRequested: true, inMessage: true)
        #expect(machine.sent(unsentBytes: 0, inMessage: true).sendContinue)
    }

    @Test func theLastAnswerDuringShutdownClosesTheConnection() {
        var machine = handling()
        #expect(machine.shutDown(inMessage: false).close == nil)  // a request is in its handler
        #expect(machine.answer(.complete, keepAliveRequested: true, inMessage: false).0 == .send(keepAlive: false))
    }

    @Test func anIdleConnectionIsClosedAtOnceOnShutdown() {
        var machine = Machine()
        _ = machine.start(secure: false)
        #expect(machine.shutDown(inMessage: false).close == .now)
    }

    @Test func aConnectionOwnClientJustOpenedWaitsForItsFirstRequestOnShutdown() {
        var machine = Machine(fromOwnClient: true)
        _ = machine.start(secure: false)
        #expect(machine.shutDown(inMessage: false).close == nil)
        _ = machine.bytesArrived()
        #expect(handled(machine.parsed("inner")) == "inner")
        #expect(machine.answer(.complete, keepAliveRequested: true, inMessage: false).0 == .send(keepAlive: false))
    }

    @Test func aWithheldAnswerStopsTheClockAndKeepsReadingToSeeTheClose() {
        var machine = handling()
        let (answer, effects) = machine.answer(.withheld, keepAliveRequested: true, inMessage: false)
        #expect(answer == .withhold)
        #expect(effects.reading == true && effects.clock == .stopped)
        #expect(!machine.acceptsBytes)
        // Shutdown does not wait for a client that will never be answered.
        #expect(machine.shutDown(inMessage: false).close == .now)
    }

    @Test func aClientThatDoesNotReadStopsReadingAndHandlingUntilItDrains() {
        var machine = handling()
        _ = machine.parsed("second")
        _ = machine.answer(.complete, keepAliveRequested: true, inMessage: false)
        let effects = machine.sent(unsentBytes: Machine.maxUnsentBytes + 1, inMessage: false)
        #expect(effects.waitForDrain && effects.reading == false && effects.handle == nil)
        #expect(machine.activity == .waitingForDrain)
        let drained = machine.drained(inMessage: false)
        #expect(handled(drained) == "second" && drained.reading == true)
    }

    @Test func aClientThatNeverDrainsIsClosedWhenTheClockRunsOut() {
        var machine = handling()
        _ = machine.answer(.complete, keepAliveRequested: true, inMessage: false)
        let effects = machine.sent(unsentBytes: Machine.maxUnsentBytes + 1, inMessage: false)
        #expect(effects.clock == .idle)  // the keep-alive clock runs meanwhile
        #expect(machine.clockFired(inMessage: false, reason: "").close == .now)
    }

    @Test func aPeerThatFinishesSendingIsAnsweredThenClosed() {
        var machine = handling()
        #expect(machine.peerFinished(inMessage: false).close == nil)
        #expect(machine.answer(.complete, keepAliveRequested: true, inMessage: false).0 == .send(keepAlive: false))
        // Finishing in the middle of a request: it can never complete.
        var cut = Machine()
        _ = cut.start(secure: false)
        #expect(cut.peerFinished(inMessage: true).close == .now)
    }

    @Test func anAnswerAfterTheConnectionClosedIsDropped() {
        var machine = handling()
        machine.closed()
        #expect(machine.answer(.complete, keepAliveRequested: true, inMessage: false).0 == .drop)
    }
}

