/// The life of one server connection as states and events: the connection reports what
/// happened (bytes arrived, a request was parsed, a handler answered, the clock fired, the
/// server shuts down) and performs the ``Effects`` it gets back. Pure: no I/O, no clock of
/// its own, so every path can be driven by a test, time included.
///
/// Requests are handled one at a time in arrival order (pipelined requests wait in the
/// queue), so answers leave in order.
struct ConnectionStateMachine<Request> {
    enum Item {
        case request(Request)
        /// An answer the connection owes without a handler (a malformed or late request); the
        /// connection closes after it.
        case refusal(HTTPStatus, String)
    }

    /// What the connection is doing.
    enum Activity: Equatable, Sendable {
        /// No handler runs: reading the next request, or between requests.
        case waiting
        /// A handler runs for the request at the head of the queue.
        case handling
        /// More answers wait for the client than ``maxUnsentBytes``: no reading, no handling,
        /// until it takes half of them.
        case waitingForDrain
        /// An answer withheld on purpose: the connection waits for the client to give up.
        case withholding
        case closed
    }

    /// The one timer a connection has, and what it measures.
    enum Clock: Equatable, Sendable {
        /// Paused: a handler runs (its own time is its business) or an answer is withheld.
        case stopped
        /// Keep-alive: from the last answer to the next request's first byte.
        case idle
        /// From a request's first byte (or the start of a TLS handshake) to its end; later
        /// bytes do not restart it, so a client cannot hold a connection by trickling.
        case request
    }

    /// What the connection must do after an event, in this order: close (and nothing else),
    /// send `100 Continue`, start or stop reading, wait for the client to drain, (re)start
    /// the clock, and last hand a queued item to its handler (which may report an answer at once).
    struct Effects {
        enum Close: Equatable { case now, afterFlush }
        var close: Close?
        var sendContinue = false
        /// true: start reading; false: stop.
        var reading: Bool?
        var waitForDrain = false
        /// The clock to start from now (``Clock/stopped`` pauses it); nil leaves it as it is.
        var clock: Clock?
        var handle: Item?
    }

    /// How the connection sends the answer a handler gave.
    enum Answer: Equatable {
        /// Send it; without keep-alive, close once it is flushed.
        case send(keepAlive: Bool)
        /// Send the head and this many body bytes, then close without a TLS close_notify.
        case cut(keepingBodyBytes: Int)
        /// Send nothing and hold the connection (still reading, so its close is seen).
        case withhold
        /// The connection is closed: nothing to send.
        case drop
    }

    /// Pipelined requests waiting beyond this stop further reads until they are answered.
    static var maxQueued: Int { 64 }
    /// Answers the client has not taken beyond this stop reading and handling until they drain
    /// to half: a client that sends and never reads cannot make the server buffer without end.
    static var maxUnsentBytes: Int { 1 << 20 }

    private(set) var activity = Activity.waiting
    private(set) var clock = Clock.stopped
    /// The peer finished sending, or the stream lost message boundaries: answer what is
    /// queued, read nothing more, close.
    private(set) var closesAfterQueue = false
    private(set) var isShuttingDown = false
    private var queue: [Item] = []
    private var queueHead = 0
    /// A request head asked for `100 Continue` while an earlier answer was still owed.
    private var owesContinue = false
    private(set) var answered = 0
    /// Opened by this process's own client (another role calling): on shutdown it is not
    /// closed before its first request, which is on its way.
    let fromOwnClient: Bool

    init(fromOwnClient: Bool = false) {
        self.fromOwnClient = fromOwnClient
    }

    var queuedCount: Int { queue.count - queueHead }

    /// Bytes from the peer are parsed; after ``closesAfterQueue`` they are read (to see the
    /// close) and dropped.
    var acceptsBytes: Bool { !closesAfterQueue && activity != .closed }

    // MARK: Events

    /// The connection starts; under TLS the handshake is the start of the first request.
    mutating func start(secure: Bool) -> Effects {
        clock = secure ? .request : .idle
        return Effects(clock: clock)
    }

    /// The TLS handshake finished: the request clock gives way to the keep-alive clock.
    mutating func handshakeFinished(inMessage: Bool) -> Effects {
        clock = .stopped
        var effects = Effects()
        rearm(&effects, inMessage: inMessage)
        return effects
    }

    /// Bytes arrived, before they are parsed: any byte, bare CRLFs between requests too,
    /// starts the request clock.
    mutating func bytesArrived() -> Effects {
        guard clock == .idle else { return Effects() }
        clock = .request
        return Effects(clock: .request)
    }

    /// The parser took the bytes; `inMessage` says whether a request is still incomplete.
    mutating func bytesParsed(inMessage: Bool) -> Effects {
        var effects = Effects()
        rearm(&effects, inMessage: inMessage)
        return effects
    }

    /// The parser completed a request.
    mutating func parsed(_ request: Request) -> Effects {
        enqueue(.request(request))
    }

    /// The stream is no longer in step with message boundaries (malformed, too large, too
    /// slow): answer `status` after the requests before it, then close.
    mutating func refuse(_ status: HTTPStatus, _ reason: String) -> Effects {
        closesAfterQueue = true
        var effects = enqueue(.refusal(status, reason))
        if effects.reading == nil { effects.reading = false }
        return effects
    }

    /// A request head asked for `100 Continue`. It is sent only when nothing is owed before
    /// it: an interim answer must not overtake the answer to an earlier pipelined request.
    mutating func expectsContinue(inMessage: Bool) -> Effects {
        owesContinue = true
        var effects = Effects()
        sendContinueIfDue(&effects, inMessage: inMessage)
        return effects
    }

    /// The peer shut down its write side: answer what it sent, then close. A request cut
    /// short can never complete, and nothing is owed on an idle connection.
    mutating func peerFinished(inMessage: Bool) -> Effects {
        closesAfterQueue = true
        return inMessage || isIdle(inMessage: inMessage) ? close(.now) : Effects()
    }

    /// The handler answered; the connection sends as told, then reports ``sent(unsentBytes:inMessage:)``
    /// when the answer kept the connection alive.
    mutating func answer(_ delivery: HTTPResponse.Delivery, keepAliveRequested: Bool, inMessage: Bool) -> (Answer, Effects) {
        guard activity == .handling else { return (.drop, Effects()) }
        switch delivery {
        case .withheld:
            activity = .withholding
            closesAfterQueue = true
            clock = .stopped
            if isShuttingDown { return (.withhold, close(.now)) }
            return (.withhold, Effects(reading: true, clock: .stopped))
        case .cut(let kept):
            return (.cut(keepingBodyBytes: kept), close(.afterFlush))
        case .complete:
            activity = .waiting
            answered += 1
            let keepAlive = keepAliveRequested && !(closesAfterQueue && queuedCount == 0)
                && !(isShuttingDown && queuedCount == 0 && !inMessage)
            return keepAlive ? (.send(keepAlive: true), Effects()) : (.send(keepAlive: false), close(.afterFlush))
        }
    }

    /// A kept-alive answer is on its way, with `unsentBytes` waiting for the client.
    mutating func sent(unsentBytes: Int, inMessage: Bool) -> Effects {
        var effects = Effects()
        sendContinueIfDue(&effects, inMessage: inMessage)
        if unsentBytes > Self.maxUnsentBytes {
            // The keep-alive clock runs meanwhile, so a client that never reads is closed in time.
            activity = .waitingForDrain
            effects.reading = false
            effects.waitForDrain = true
        } else if mayRead {
            effects.reading = true
        }
        handleNext(&effects)
        rearm(&effects, inMessage: inMessage)
        return effects
    }

    /// The client took half of what waited for it.
    mutating func drained(inMessage: Bool) -> Effects {
        guard activity == .waitingForDrain else { return Effects() }
        activity = .waiting
        var effects = Effects(reading: mayRead ? true : nil)
        handleNext(&effects)
        rearm(&effects, inMessage: inMessage)
        return effects
    }

    /// The clock ran out. A request still incomplete is answered 408 with `reason`.
    mutating func clockFired(inMessage: Bool, reason: @autoclosure () -> String) -> Effects {
        switch activity {
        case .handling, .closed: return Effects()
        // A client that takes no answers gets none more.
        case .waitingForDrain: return close(.now)
        case .waiting, .withholding:
            guard inMessage, activity == .waiting else { return close(.now) }
            return refuse(.requestTimeout, reason())
        }
    }

    /// The server shuts down: close now if idle, else after the requests already received.
    mutating func shutDown(inMessage: Bool) -> Effects {
        guard !isShuttingDown else { return Effects() }
        isShuttingDown = true
        return isIdle(inMessage: inMessage) && mayCloseWhenIdleOnShutdown ? close(.now) : Effects()
    }

    /// The channel closed, whoever closed it.
    mutating func closed() {
        activity = .closed
        queue = []
        queueHead = 0
    }

    // MARK: Rules

    private var mayRead: Bool { queuedCount <= Self.maxQueued && !closesAfterQueue }

    /// On shutdown an idle connection is closed at once, except one this process's client has
    /// just opened: its first request is on its way.
    private var mayCloseWhenIdleOnShutdown: Bool { !(fromOwnClient && answered == 0) }

    private func isIdle(inMessage: Bool) -> Bool {
        activity == .withholding || (activity != .handling && queuedCount == 0 && !inMessage)
    }

    private mutating func close(_ close: Effects.Close) -> Effects {
        activity = .closed
        return Effects(close: close)
    }

    private mutating func enqueue(_ item: Item) -> Effects {
        queue.append(item)
        var effects = Effects()
        if queuedCount > Self.maxQueued { effects.reading = false }
        handleNext(&effects)
        return effects
    }

    private mutating func handleNext(_ effects: inout Effects) {
        guard activity == .waiting, queuedCount > 0 else { return }
        effects.handle = queue[queueHead]
        queueHead += 1
        if queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
        }
        activity = .handling
        clock = .stopped
        effects.clock = .stopped
    }

    private mutating func sendContinueIfDue(_ effects: inout Effects, inMessage: Bool) {
        guard owesContinue, activity != .handling, queuedCount == 0 else { return }
        owesContinue = false
        effects.sendContinue = inMessage
    }

    /// Idle between requests: the keep-alive clock. From a request's first byte: the request
    /// clock. While a handler runs: none. Idle during shutdown: close.
    private mutating func rearm(_ effects: inout Effects, inMessage: Bool) {
        guard effects.close == nil else { return }
        switch activity {
        case .handling, .withholding, .closed:
            return
        case .waiting, .waitingForDrain:
            if inMessage || clock == .request {
                if clock != .request {
                    clock = .request
                    effects.clock = .request
                }
            } else if clock != .idle {
                if isShuttingDown && queuedCount == 0 && mayCloseWhenIdleOnShutdown {
                    effects = close(.afterFlush)
                    return
                }
                clock = .idle
                effects.clock = .idle
            }
        }
    }
}

extension ConnectionStateMachine.Item: Equatable where Request: Equatable {}
extension ConnectionStateMachine.Effects: Equatable where Request: Equatable {}
