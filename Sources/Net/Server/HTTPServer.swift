public import EventLoops
import Foundation
public import Logging
import Synchronization

/// State every connection of a server reads.
final class ServerShared: Sendable {
    let configuration: ServerConfiguration
    let router: Router
    let logger: Logger
    let observer: (any HTTPServerObserver)?
    /// The answer for a handler's error: an HTTPError as it is; anything else is a 500 that
    /// names no internals (paths, URLs, library messages): those go to the log.
    func response(for error: Error, peer: String) -> HTTPResponse {
        if let error = error as? HTTPError { return error.response }
        logger.error("handler failed", metadata: ["peer": "\(peer)", "error": "\(error)"])
        return HTTPError(.internalServerError, "internal error; the harness log has the details").response
    }

    /// Connections from these ports are this process's roles calling each other.
    let ownClientPorts: OwnClientPorts
    /// Read on every response: an atomic, not a lock.
    private let shuttingDown = Atomic<Bool>(false)
    /// How often a connection stopped for a client that does not read its answers (tests and diagnostics).
    let writePauses = Atomic<Int>(0)
    /// Connections the system would not hand over (out of file descriptors, most likely).
    let acceptFailures = Atomic<Int>(0)

    /// Logs the first failure to accept and then one in a thousand: each is a client turned away.
    func acceptFailed(_ reason: String) {
        guard let count = Self.sample(acceptFailures) else { return }
        logger.error("cannot accept connections", metadata: ["reason": "\(reason)", "failures": "\(count)",
                                                            "openFileLimit": "\(EventLoopGroup.raiseOpenFileLimit.soft)"])
    }

    /// Warns, the first time and then one in a thousand, that descriptors are running out:
    /// past the limit libuv closes new connections as it accepts them, unseen by the harness.
    func nearFileLimit(_ descriptor: Int32) {
        guard Self.sample(nearLimitWarnings) != nil else { return }
        let limit = EventLoopGroup.raiseOpenFileLimit
        logger.warning("near the open file limit: new connections beyond it will be dropped",
                       metadata: ["descriptor": "\(descriptor)", "openFileLimit": "\(limit.soft)", "hardLimit": "\(limit.hard)",
                                  "fix": "raise the hard limit (ulimit -Hn)"])
    }
    private let nearLimitWarnings = Atomic<Int>(0)

    /// Counts one more; the count when it is the first or a thousandth, else nil: what floods
    /// (one per connection) is logged that often.
    private static func sample(_ counter: borrowing Atomic<Int>) -> Int? {
        let count = counter.add(1, ordering: .relaxed).newValue
        return count == 1 || count % 1000 == 0 ? count : nil
    }

    init(configuration: ServerConfiguration, router: Router, logger: Logger, ownClientPorts: OwnClientPorts,
         observer: (any HTTPServerObserver)?) {
        self.configuration = configuration
        self.observer = observer
        self.ownClientPorts = ownClientPorts
        self.router = router
        self.logger = logger
    }

    var isShuttingDown: Bool {
        get { shuttingDown.load(ordering: .acquiring) }
        set { shuttingDown.store(newValue, ordering: .releasing) }
    }
}

/// An HTTP/1.1 server, plain and TLS, listening on every loop of a group.
///
/// ```swift
/// var router = Router()
/// router.get("/health") { _, _ in .text("ok") }
/// let server = HTTPServer(configuration: .init(httpPort: 0), router: router, group: group)
/// try server.start()
/// ```
///
public final class HTTPServer: Sendable {
    public let group: EventLoopGroup
    let shared: ServerShared
    private let tlsContext: TLSContext?
    /// What `start()` makes: each loop's state, and the ports bound.
    private let started = Mutex(Started())
    private struct Started {
        var perLoop: [LoopBound<LoopState>] = []
        var httpPort: Int?
        var httpsPort: Int?
    }
    private var perLoop: [LoopBound<LoopState>] { started.withLock { $0.perLoop } }
    /// The ports actually bound (useful when 0 asked for a free one).
    public var httpPort: Int? { started.withLock { $0.httpPort } }
    public var httpsPort: Int? { started.withLock { $0.httpsPort } }

    public init(configuration: ServerConfiguration, router: Router, group: EventLoopGroup,
                logger: Logger = Logger(label: "harness.http"), observer: (any HTTPServerObserver)? = nil) throws(NetError) {
        self.group = group
        shared = ServerShared(configuration: configuration, router: router, logger: logger, ownClientPorts: group.ownClientPorts,
                              observer: observer)
        if configuration.httpsPort != nil {
            guard let tls = configuration.tls else { throw .tls("HTTPS port set but no certificate and key configured") }
            tlsContext = try TLSContext(server: tls)
        } else {
            tlsContext = nil
        }
    }

    /// Binds on every loop. The first loop binds each port (learning a free one if 0 was
    /// asked), then the others join it through SO_REUSEPORT.
    public func start() throws {
        let configuration = shared.configuration
        for port in [configuration.httpPort, configuration.httpsPort].compactMap({ $0 }) where port != 0 {
            try TCPListener.ensureNotServed(try SocketAddress(host: configuration.host, port: port))
        }
        let perLoop = group.loops.map { LoopBound(LoopState(loop: $0, shared: shared, tls: tlsContext), on: $0) }
        var httpPort: Int?, httpsPort: Int?
        for state in perLoop {
            let (first, firstSecure) = (httpPort, httpsPort)
            let ports = try runOnLoop(state.loop) { () throws -> (Int?, Int?) in
                let plain = try configuration.httpPort.map { try state.value.listen(host: configuration.host, port: first ?? $0, secure: false) }
                let secure = try configuration.httpsPort.map { try state.value.listen(host: configuration.host, port: firstSecure ?? $0, secure: true) }
                return (plain, secure)
            }
            httpPort = httpPort ?? ports.0
            httpsPort = httpsPort ?? ports.1
        }
        started.withLock { $0 = Started(perLoop: perLoop, httpPort: httpPort, httpsPort: httpsPort) }
        shared.logger.info("listening", metadata: [
            "http": "\(httpPort.map { "\(configuration.host):\($0)" } ?? "off")",
            "https": "\(httpsPort.map { "\(configuration.host):\($0)" } ?? "off")",
            "loops": "\(group.loops.count)",
        ])
    }

    /// Stops accepting, lets requests already received finish (up to the grace period),
    /// then closes every connection. Blocks; call it off the loops.
    ///
    /// Until the last connection closes the listeners stay open for this process's own
    /// clients alone (``OwnClientPorts``): a request in flight may still call another role
    /// through them. Any other new connection is closed as soon as it is accepted.
    public func shutdown() {
        shared.isShuttingDown = true
        let done = DispatchGroup()
        for state in perLoop {
            done.enter()
            state.loop.execute { state.value.drain { done.leave() } }
        }
        if done.wait(timeout: .now() + .milliseconds(Int(shared.configuration.shutdownGraceMilliseconds))) == .timedOut {
            shared.logger.warning("shutdown grace period over; closing remaining connections")
            for state in perLoop { state.loop.execute { state.value.forceClose() } }
            // Bounded: a connection that fails to report its close must not hang shutdown; stopping the
            // loops closes every handle left.
            if done.wait(timeout: .now() + .seconds(2)) == .timedOut {
                shared.logger.error("connections still open after force-close; the loops' shutdown closes them")
            }
        }
        // Only now: a loop without connections of its own still takes the connections another
        // loop's request makes to this server (SO_REUSEPORT spreads them over every listener),
        // and closing a listener resets those the kernel has queued for it.
        for state in perLoop { try? runOnLoop(state.loop) { state.value.closeListeners() } }
        shared.logger.info("server stopped")
    }

    /// Every route the server answers, as "METHOD /path".
    public var routes: [String] { shared.router.routes }

    /// True from the start of ``shutdown()``.
    public var isShuttingDown: Bool { shared.isShuttingDown }

    /// Connections open right now, across loops (for tests and the admin API).
    public var openConnections: Int {
        perLoop.reduce(0) { total, state in total + ((try? runOnLoop(state.loop) { state.value.connections.count }) ?? 0) }
    }

    /// What each open connection is doing, across loops (for tests that wait on a state).
    var connectionActivities: [ServerConnection.State.Activity] {
        perLoop.flatMap { state in (try? runOnLoop(state.loop) { state.value.connections.values.map(\.state.activity) }) ?? [] }
    }

    private func runOnLoop<T>(_ loop: EventLoop, _ body: @escaping () throws -> T) throws -> T {
        let semaphore = DispatchSemaphore(value: 0)
        var result: Result<T, Error>!
        loop.execute {
            result = Result { try body() }
            semaphore.signal()
        }
        semaphore.wait()
        return try result.get()
    }
}

/// A server's listeners and connections on one loop; held in a ``LoopBound``.
private final class LoopState {
    let loop: EventLoop
    let shared: ServerShared
    let tls: TLSContext?
    var listeners: [TCPListener] = []
    var connections: [ObjectIdentifier: ServerConnection] = [:]
    private var onDrained: (() -> Void)?

    init(loop: EventLoop, shared: ServerShared, tls: TLSContext?) {
        self.loop = loop
        self.shared = shared
        self.tls = tls
    }

    func listen(host: String, port: Int, secure: Bool) throws -> Int {
        let address = try SocketAddress(host: host, port: port)
        let listener = try TCPListener(loop: loop, address: address) { [weak self] stream in
            guard let self else { return stream.close() }
            accept(stream, secure: secure)
        }
        listener.onAcceptFailure = { [shared] reason in shared.acceptFailed(reason) }
        listener.onNearFileLimit = { [shared] descriptor in shared.nearFileLimit(descriptor) }
        listeners.append(listener)
        return listener.localAddress?.port ?? port
    }

    private func accept(_ stream: TCPStream, secure: Bool) {
        let fromOwnClient = stream.peerAddress.map { shared.ownClientPorts.contains($0.port) } ?? false
        if shared.isShuttingDown && !fromOwnClient { return stream.close() }
        var session: TLSSession?
        if secure, let tls {
            do { session = try TLSSession(context: tls) } catch {
                shared.logger.error("cannot start TLS session: \(error)")
                return stream.close()
            }
        }
        let connection = ServerConnection(channel: Channel(stream: stream, tls: session), shared: shared, fromOwnClient: fromOwnClient)
        connections[ObjectIdentifier(connection)] = connection
        shared.observer?.connectionOpened()
        connection.onClose = { [weak self, shared] connection in
            shared.observer?.connectionClosed()
            guard let self else { return }
            connections[ObjectIdentifier(connection)] = nil
            if connections.isEmpty, onDrained != nil { finishDrain() }
        }
        // Another role of this process calling during shutdown: answered, then closed.
        if shared.isShuttingDown { connection.startDrained() } else { connection.start() }
    }

    func drain(_ completion: @escaping () -> Void) {
        onDrained = completion
        guard !connections.isEmpty else { return finishDrain() }
        for connection in Array(connections.values) { connection.drain() }
    }

    private func finishDrain() {
        let completion = onDrained
        onDrained = nil
        completion?()
    }

    func forceClose() {
        closeListeners()
        for connection in Array(connections.values) { connection.forceClose() }
    }

    func closeListeners() {
        listeners.forEach { $0.close() }
        listeners = []
    }
}
