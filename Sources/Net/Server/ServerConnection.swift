import CHTTPParser
import Logging

/// One accepted connection: parses requests, runs their handlers one at a time (so
/// pipelined requests are answered in order), writes the responses.
final class ServerConnection {
    private enum Item {
        case request(ParsedMessage)
        case refusal(HTTPStatus, String)
    }

    private let channel: Channel
    private let shared: ServerShared
    private let parser: HTTPMessageParser
    private var queue: [Item] = []
    private var queueHead = 0
    private var isHandling = false
    private var isDraining = false
    /// A response withheld on purpose: the connection waits for the client to give up.
    private var isWithholding = false
    private var stopAfterQueue = false
    /// Which clock runs: none while a handler runs, the keep-alive clock between requests, the
    /// request clock from the first byte of a request (or of a TLS handshake) to its end.
    private var clock = Clock.none
    private enum Clock { case none, idle, request }
    private var timer: LoopTimer?
    private var serializer = HTTPSerializer()
    private let peer: String
    /// Read once: the peer's certificate does not change during a connection.
    private lazy var clientCertificateSubject: String? = channel.tls?.peerCertificateSubject
    var onClose: ((ServerConnection) -> Void)?
    /// Pipelined requests waiting beyond this stop further reads until they are answered.
    private static let maxQueued = 64
    /// Answers the client has not taken beyond this stop reading and handling until they drain
    /// to half: a client that sends and never reads cannot make the server buffer without end.
    static let maxUnsentBytes = 1 << 20
    private var waitingForDrain = false
    private static let continueLine = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Opened by this process's own client (another role): on shutdown it is not closed
    /// before its first request, which is on its way.
    private let fromOwnClient: Bool
    private var answered = 0
    /// A request head asked for `100 Continue` while an earlier answer was still owed.
    private var owesContinue = false

    /// Sends the interim answer once nothing is owed before it and the body is still to come.
    private func sendContinueIfDue() {
        guard owesContinue, !isHandling, queueHead == queue.count else { return }
        owesContinue = false
        if parser.inMessage { channel.send(Self.continueLine) }
    }

    /// On shutdown an idle connection is closed at once, except one this process's client has
    /// just opened: its first request is on its way (another role calling).
    private var mayCloseWhenIdleOnShutdown: Bool { !(fromOwnClient && answered == 0) }

    init(channel: Channel, shared: ServerShared, fromOwnClient: Bool = false) {
        self.channel = channel
        self.shared = shared
        self.fromOwnClient = fromOwnClient
        peer = channel.stream.peerAddress?.description ?? "unknown"
        parser = HTTPMessageParser(kind: HTTP_REQUEST, maxHeaderBytes: shared.configuration.maxHeaderBytes,
                                   maxBodyBytes: shared.configuration.maxBodyBytes)
    }

    func start() {
        parser.onMessage = { [unowned self] message in enqueue(.request(message)) }
        // The client waits for this before it sends the body. Only when nothing is owed before
        // it: an interim answer must not overtake the answer to an earlier pipelined request.
        parser.onExpectContinue = { [unowned self] in
            owesContinue = true
            sendContinueIfDue()
        }
        // The channel holds the connection until it closes.
        channel.onData = { bytes in self.received(bytes) }
        channel.onClose = { reason in self.closed(reason) }
        channel.onEnd = { [unowned self] in peerFinished() }
        // A TLS handshake is the start of the first request: it must end within the request clock.
        let secure = channel.tls != nil
        clock = secure ? .request : .idle
        timer = channel.loop.scheduleTimer(after: secure ? shared.configuration.requestTimeoutMilliseconds : shared.configuration.idleTimeoutMilliseconds) {
            self.timedOut()
        }
        if secure {
            channel.onReady = { [unowned self] in
                clock = .none
                armTimer()
            }
        }
        channel.start()
    }

    private var isIdle: Bool { isWithholding || (!isHandling && queueHead == queue.count && !parser.inMessage) }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        withExtendedLifetime(self) {
            guard !stopAfterQueue else { return }
            // Any byte starts the request clock, bare CRLFs between requests too: they cannot hold an idle connection.
            if clock == .idle, let timer {
                clock = .request
                timer.restart(after: shared.configuration.requestTimeoutMilliseconds)
            }
            do throws(ParseFailure) {
                try parser.feed(bytes)
            } catch {
                let refusal = error.refusal(maxHeaderBytes: shared.configuration.maxHeaderBytes, maxBodyBytes: shared.configuration.maxBodyBytes)
                refuse(refusal.status, refusal.message)
            }
            armTimer()
        }
    }

    /// The peer shut down its write side after its requests: answer them, then close. A
    /// request cut short can never complete, and nothing is owed on an idle connection.
    private func peerFinished() {
        stopAfterQueue = true
        if parser.inMessage || isIdle { channel.close() }
    }

    /// Answers `status` after the requests before it, then closes: the stream is no
    /// longer in sync with message boundaries.
    private func refuse(_ status: HTTPStatus, _ reason: String) {
        enqueue(.refusal(status, reason))
        stopAfterQueue = true
        channel.stream.stopReading()
    }

    private func enqueue(_ item: Item) {
        queue.append(item)
        if queue.count - queueHead > Self.maxQueued { channel.stream.stopReading() }
        handleNext()
    }

    private func handleNext() {
        guard !isHandling, !waitingForDrain, queueHead < queue.count, channel.isOpen else { return }
        let item = queue[queueHead]
        queueHead += 1
        if queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        }
        isHandling = true
        armTimer()
        switch item {
        case .refusal(let status, let reason):
            shared.logger.debug("refused request", metadata: ["peer": "\(peer)", "status": "\(status.code)", "reason": "\(reason)"])
            respond(HTTPError(status, reason).response, to: nil)
        case .request(let message):
            dispatch(message)
        }
    }

    private func dispatch(_ message: ParsedMessage) {
        let request = HTTPRequest(method: message.method, target: message.target, headers: message.headers,
                                  body: message.body, versionMinor: message.versionMinor)
        if let refusal = shared.router.refusal(of: request) { return respond(refusal.response, to: message) }
        switch shared.router.resolve(request.method, path: request.path) {
        case .notFound:
            respond(HTTPError(.notFound, "no route for \(request.path)").response, to: message)
        case .methodNotAllowed(let allowed):
            let allow = allowed.map(\.rawValue).joined(separator: ", ")
            respond(HTTPError(.methodNotAllowed, "\(request.method) is not allowed on \(request.path); use \(allow)",
                              headers: ["Allow": allow]).response, to: message)
        case .found(let handler, let parameters):
            let context = RequestContext(parameters: parameters, loop: channel.loop, peer: peer,
                                         clientCertificateSubject: clientCertificateSubject,
                                         isSecure: channel.tls != nil, logger: shared.logger)
            switch handler {
            case .sync(let handle):
                respond(run { try handle(request, context) }, to: message)
            case .async(let handle):
                let loop = channel.loop
                // The task runs on this connection's loop, so `self` is only touched there.
                let pending = PendingResponse(connection: LoopBound(self, on: loop), message: message)
                Self.startTask(on: loop, handle, request, context, then: pending)
            }
        }
    }

    private static func startTask(on loop: EventLoop, _ handle: @escaping AsyncHandler, _ request: HTTPRequest,
                                  _ context: RequestContext, then pending: PendingResponse) {
        Task(executorPreference: loop) {
            await runAsync(handle, request, context, then: pending)
        }
    }

    private static func runAsync(_ handle: AsyncHandler, _ request: HTTPRequest, _ context: RequestContext,
                                 then pending: PendingResponse) async {
        let response: HTTPResponse
        do { response = try await handle(request, context) } catch { response = pending.connection.value.response(for: error) }
        pending.connection.value.respond(response, to: pending.message)
    }

    private func run(_ body: () throws -> HTTPResponse) -> HTTPResponse {
        do { return try body() } catch { return response(for: error) }
    }

    /// The answer for a handler's error: an HTTPError as it is; anything else is a 500 that
    /// names no internals (paths, URLs, library messages): those go to the log.
    private func response(for error: Error) -> HTTPResponse {
        if let error = error as? HTTPError { return error.response }
        shared.logger.error("handler failed", metadata: ["peer": "\(peer)", "error": "\(error)"])
        return HTTPError(.internalServerError, "internal error; the harness log has the details").response
    }

    private func respond(_ response: HTTPResponse, to message: ParsedMessage?) {
        isHandling = false
        guard channel.isOpen else { return }
        switch response.delivery {
        case .complete: break
        case .withheld:
            // Hold the connection: later bytes are ignored (still read, so the client's close is seen), no clock;
            // the client's timeout or shutdown ends it.
            isWithholding = true
            stopAfterQueue = true
            channel.stream.startReading()
            timer?.pause()
            if isDraining { channel.close() }
            return
        case .cut(let kept):
            let bytes = serializer.serialize(response, keepAlive: false, includeBody: true)
            channel.send(Array(bytes.prefix(bytes.count - response.body.count + min(kept, response.body.count))))
            channel.stream.closeAfterFlush()  // no TLS close_notify: the cut is abrupt
            return
        }
        answered += 1
        let keepAlive = (message?.keepAlive ?? false) && !(stopAfterQueue && queue.isEmpty) && !(shared.isShuttingDown && isLastQueued)
        let bytes = serializer.serialize(response, keepAlive: keepAlive, includeBody: message?.method != .head)
        channel.send(bytes)
        if !keepAlive {
            channel.closeAfterFlush()
            return
        }
        sendContinueIfDue()
        if channel.stream.unsentBytes > Self.maxUnsentBytes {
            waitForDrain()
        } else if queue.count - queueHead <= Self.maxQueued && !stopAfterQueue {
            channel.stream.startReading()
        }
        handleNext()
        armTimer()
    }

    /// Stops reading and handling until the client has taken half of what waits for it; the
    /// keep-alive clock runs meanwhile, so a client that never reads is closed in time.
    private func waitForDrain() {
        waitingForDrain = true
        shared.writePauses.add(1, ordering: .relaxed)
        channel.stream.stopReading()
        channel.stream.drainedBelow = Self.maxUnsentBytes / 2
        channel.stream.onDrained = { [unowned self] in
            waitingForDrain = false
            if queue.count - queueHead <= Self.maxQueued && !stopAfterQueue { channel.stream.startReading() }
            handleNext()
            armTimer()
        }
    }

    private var isLastQueued: Bool { queueHead == queue.count && !parser.inMessage }

    /// Idle between requests: the keep-alive clock. From a request's first byte: the request
    /// clock, not reset by later bytes (a slow client cannot hold the connection by
    /// trickling, nor by CRLFs that start no message). While a handler runs: no clock.
    private func armTimer() {
        guard let timer else { return }
        if isHandling {
            clock = .none
            timer.pause()
        } else if parser.inMessage || clock == .request {
            if clock != .request {
                clock = .request
                timer.restart(after: shared.configuration.requestTimeoutMilliseconds)
            }
        } else if clock != .idle {
            if shared.isShuttingDown && queueHead == queue.count && mayCloseWhenIdleOnShutdown { return channel.closeAfterFlush() }
            clock = .idle
            timer.restart(after: shared.configuration.idleTimeoutMilliseconds)
        }
    }

    private func timedOut() {
        guard !isHandling else { return }
        // A client that takes no answers gets none more.
        if waitingForDrain { return channel.close() }
        if parser.inMessage {
            shared.logger.debug("request timed out", metadata: ["peer": "\(peer)"])
            refuse(.requestTimeout, "request not received in full within \(shared.configuration.requestTimeoutMilliseconds) ms")
        } else {
            channel.close()
        }
    }

    /// Server shutdown: close now if idle, else after the requests already received.
    func drain() {
        guard !isDraining else { return }
        isDraining = true
        if isIdle && mayCloseWhenIdleOnShutdown { channel.close() }
    }

    /// Shutdown grace period over.
    func forceClose() { channel.close() }

    private func closed(_ reason: String?) {
        if let reason { shared.logger.debug("connection closed", metadata: ["peer": "\(peer)", "reason": "\(reason)"]) }
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
