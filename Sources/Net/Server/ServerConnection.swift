import CHTTPParser
import EventLoops
import Logging
import Synchronization

/// One accepted connection: parses requests, runs their handlers one at a time (so
/// pipelined requests are answered in order), writes the responses. What to do when is the
/// ``ConnectionStateMachine``'s; this class performs it.
final class ServerConnection {
    typealias State = ConnectionStateMachine<ParsedMessage>

    private let channel: Channel
    private let shared: ServerShared
    private let parser: HTTPMessageParser
    private(set) var state: State
    private var timer: LoopTimer?
    private var serializer = HTTPSerializer()
    /// The buffer answers are written into, kept for the next (an answer is sent, or copied to wait, at once).
    private var output: [UInt8] = []
    /// A buffer grown past this by a large answer is let go after it: a connection keeps at most this much between answers.
    private static let keptOutputCapacity = 64 * 1024
    /// The request being handled (one at a time): its route and when it was dispatched, for the observer.
    private var handling: (route: String, method: HTTPMethod, since: ContinuousClock.Instant)?
    private let peer: String
    /// Read once: the peer's certificate does not change during a connection.
    private lazy var clientCertificateSubject: String? = channel.tls?.peerCertificateSubject
    var onClose: ((ServerConnection) -> Void)?
    private static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    init(channel: Channel, shared: ServerShared, fromOwnClient: Bool = false) {
        self.channel = channel
        self.shared = shared
        state = State(fromOwnClient: fromOwnClient)
        peer = channel.stream.peerAddress?.description ?? "unknown"
        parser = HTTPMessageParser(kind: HTTP_REQUEST, maxHeaderBytes: shared.configuration.maxHeaderBytes,
                                   maxBodyBytes: shared.configuration.maxBodyBytes)
    }

    func start() {
        parser.onMessage = { [unowned self] message in perform(state.parsed(message)) }
        parser.onExpectContinue = { [unowned self] in perform(state.expectsContinue(inMessage: parser.inMessage)) }
        // The channel holds the connection until it closes.
        channel.onData = { bytes in self.received(bytes) }
        channel.onClose = { reason in self.closed(reason) }
        channel.onEnd = { [unowned self] in perform(state.peerFinished(inMessage: parser.inMessage)) }
        let secure = channel.tls != nil
        timer = LoopTimer(loop: channel.loop) { [unowned self] in clockFired() }
        if secure {
            channel.onReady = { [unowned self] in perform(state.handshakeFinished(inMessage: parser.inMessage)) }
        }
        perform(state.start(secure: secure))
        channel.start()
    }

    /// A connection accepted during shutdown (another role of this process calling) starts drained.
    func startDrained() {
        start()
        drain()
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        withExtendedLifetime(self) {
            guard state.acceptsBytes else { return }
            perform(state.bytesArrived())
            do throws(ParseFailure) {
                try parser.feed(bytes)
            } catch {
                let refusal = error.refusal(maxHeaderBytes: shared.configuration.maxHeaderBytes, maxBodyBytes: shared.configuration.maxBodyBytes)
                perform(state.refuse(refusal.status, refusal.message))
            }
            perform(state.bytesParsed(inMessage: parser.inMessage))
        }
    }

    /// A 408 it decides on is logged with the other refusals, in `perform`.
    private func clockFired() {
        perform(state.clockFired(inMessage: parser.inMessage,
                                 reason: "request not received in full within \(shared.configuration.requestTimeoutMilliseconds) ms"))
    }

    /// Does what the state machine asked, in its order; the handler comes last because it
    /// may answer at once, which is the next event.
    private func perform(_ effects: State.Effects) {
        switch effects.close {
        case .now?: return channel.close()
        case .afterFlush?: return channel.closeAfterFlush()
        case nil: break
        }
        if effects.sendContinue { channel.send(Self.continueLine) }
        switch effects.reading {
        case true?: channel.stream.startReading()
        case false?: channel.stream.stopReading()
        case nil: break
        }
        if effects.waitForDrain { waitForDrain() }
        if let clock = effects.clock, let timer {
            switch clock {
            case .stopped: timer.pause()
            case .idle: timer.restart(after: shared.configuration.idleTimeoutMilliseconds)
            case .request: timer.restart(after: shared.configuration.requestTimeoutMilliseconds)
            }
        }
        switch effects.handle {
        case .request(let message)?:
            dispatch(message)
        case .refusal(let status, let reason)?:
            shared.logger.debug("refused request", metadata: ["peer": "\(peer)", "status": "\(status.code)", "reason": "\(reason)"])
            respond(HTTPError(status, reason).response, to: nil)
        case nil:
            break
        }
    }

    private func dispatch(_ message: ParsedMessage) {
        let request = shared.router.admitted(HTTPRequest(method: message.method, target: message.target, headers: message.headers,
                                                         body: message.body, versionMinor: message.versionMinor))
        let routing = shared.router.routing(request)
        if shared.observer != nil {
            let route = switch routing { case .answer(_, let route), .handler(_, _, let route): route }
            handling = (route, request.method, .now)
        }
        switch routing {
        case .answer(let response, _):
            respond(response, to: message)
        case .handler(let handler, let parameters, _):
            let context = RequestContext(parameters: parameters, loop: channel.loop, peer: peer,
                                         clientCertificateSubject: clientCertificateSubject,
                                         isSecure: channel.tls != nil, logger: shared.logger)
            switch (handler, shared.router.gate(of: request)) {
            case (.sync(let handle), nil):
                respond(run { try handle(request, context) }, to: message)
            case (.sync(let handle), let gate?):
                startTask(Self.gated({ request, context in try handle(request, context) }, by: gate), request, context, message)
            case (.async(let handle), let gate):
                startTask(gate.map { Self.gated(handle, by: $0) } ?? handle, request, context, message)
            }
        }
    }

    /// `handle`, its answer (or its error) held until `gate` returns, and replaced by the gate's when it gives one.
    private static func gated(_ handle: @escaping AsyncHandler, by gate: @escaping Router.AnswerGate) -> AsyncHandler {
        { request, context in
            let result: Result<HTTPResponse, any Error>
            let started = ContinuousClock.now
            do { result = .success(try await handle(request, context)) } catch { result = .failure(error) }
            let handled = ContinuousClock.now
            let replacement = await gate(request)
            // Which part of a slow answer was the gate's (the store's writes) and which the handler's.
            let held = ContinuousClock.now - handled
            if held > .seconds(2) {
                context.logger.warning("answer held by its gate", metadata: ["path": "\(request.path)", "handlerMs": "\(milliseconds(handled - started))",
                                                                        "gateMs": "\(milliseconds(held))"])
            }
            if let replacement { return replacement }
            return try result.get()
        }
    }

    private func startTask(_ handle: @escaping AsyncHandler, _ request: HTTPRequest, _ context: RequestContext, _ message: ParsedMessage) {
        let loop = channel.loop
        // The task runs on this connection's loop, so `self` is only touched there.
        let pending = PendingResponse(connection: LoopBound(self, on: loop), message: message)
        Self.startTask(on: loop, handle, request, context, then: pending)
    }

    private static func startTask(on loop: EventLoop, _ handle: @escaping AsyncHandler, _ request: HTTPRequest,
                                  _ context: RequestContext, then pending: PendingResponse) {
        let dispatched = ContinuousClock.now
        Task(executorPreference: loop) {
            await runAsync(handle, request, context, then: pending, dispatched: dispatched)
        }
    }

    private static func runAsync(_ handle: AsyncHandler, _ request: HTTPRequest, _ context: RequestContext,
                                 then pending: PendingResponse, dispatched: ContinuousClock.Instant) async {
        let started = ContinuousClock.now
        let response: HTTPResponse
        do { response = try await handle(request, context) } catch { response = pending.connection.value.response(for: error) }
        // A slow answer's time split between waiting for the loop to start its task and the handler (gate included).
        if ContinuousClock.now - dispatched > .seconds(2) {
            context.logger.warning("slow async handler", metadata: ["path": "\(request.path)", "startMs": "\(milliseconds(started - dispatched))",
                                                                   "handlerMs": "\(milliseconds(ContinuousClock.now - started))"])
        }
        pending.connection.value.respond(response, to: pending.message)
    }

    private static func milliseconds(_ duration: Duration) -> Int64 { duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000 }

    private func run(_ body: () throws -> HTTPResponse) -> HTTPResponse {
        do { return try body() } catch { return response(for: error) }
    }

    private func response(for error: Error) -> HTTPResponse { shared.response(for: error, peer: peer) }

    private func respond(_ response: HTTPResponse, to message: ParsedMessage?) {
        guard channel.isOpen else { return }
        if let observer = shared.observer { report(response, refused: message == nil, to: observer) }
        let (answer, effects) = state.answer(response.delivery, keepAliveRequested: message?.keepAlive ?? false, inMessage: parser.inMessage)
        switch answer {
        case .drop:
            return
        case .withhold:
            break  // later bytes are still read (so the client's close is seen) and dropped
        case .cut(let kept):
            let bytes = serializer.serialize(response, keepAlive: false, includeBody: true)
            channel.send(Array(bytes.prefix(bytes.count - response.body.count + min(kept, response.body.count))))
            channel.stream.closeAfterFlush()  // no TLS close_notify: the cut is abrupt
            return
        case .send(let keepAlive):
            serializer.serialize(response, keepAlive: keepAlive, includeBody: message?.method != .head, into: &output)
            channel.send(output)
            if output.capacity > Self.keptOutputCapacity { output = [] }
            if keepAlive { return perform(state.sent(unsentBytes: channel.stream.unsentBytes, inMessage: parser.inMessage)) }
        }
        perform(effects)
    }

    /// Reports the answer to the request being handled, or to one refused while being read.
    private func report(_ response: HTTPResponse, refused: Bool, to observer: any HTTPServerObserver) {
        guard !refused, let handled = handling else {
            return observer.answered(AnsweredRequest(route: AnsweredRequest.unparsed, method: nil, status: response.status,
                                                     duration: .zero, annotation: nil))
        }
        handling = nil
        observer.answered(AnsweredRequest(route: handled.route, method: handled.method, status: response.status,
                                          duration: .now - handled.since, annotation: response.annotation))
    }

    /// Stops handling until the client has taken half of what waits for it.
    private func waitForDrain() {
        shared.writePauses.add(1, ordering: .relaxed)
        channel.stream.drainedBelow = State.maxUnsentBytes / 2
        channel.stream.onDrained = { [unowned self] in perform(state.drained(inMessage: parser.inMessage)) }
    }

    /// Server shutdown: close now if idle, else after the requests already received.
    func drain() { perform(state.shutDown(inMessage: parser.inMessage)) }

    /// Shutdown grace period over.
    func forceClose() { channel.close() }

    private func closed(_ reason: String?) {
        if let reason { shared.logger.debug("connection closed", metadata: ["peer": "\(peer)", "reason": "\(reason)"]) }
        state.closed()
        timer?.close()
        timer = nil
        parser.onMessage = nil
        onClose?(self)
        onClose = nil
    }
}

/// Carries a loop-confined connection into the handler task, which runs on the same loop.
private struct PendingResponse: Sendable {
    let connection: LoopBound<ServerConnection>
    let message: ParsedMessage
}
