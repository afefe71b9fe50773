public import EventLoops
import Foundation

/// Settings of an ``HTTPClient``.
public struct HTTPClientConfiguration: Sendable {
    /// Trust roots for https and an optional client certificate (mutual TLS).
    public var tls: TLSConfiguration
    public var connectTimeoutMilliseconds: UInt64
    /// Time allowed from sending a request to its complete response.
    public var readTimeoutMilliseconds: UInt64
    public var maxResponseBytes: Int
    /// Idle keep-alive connections kept per endpoint and loop.
    public var maxIdleConnectionsPerEndpoint: Int

    public init(tls: TLSConfiguration = TLSConfiguration(), connectTimeoutMilliseconds: UInt64 = 5_000,
                readTimeoutMilliseconds: UInt64 = 30_000, maxResponseBytes: Int = 8 * 1024 * 1024,
                maxIdleConnectionsPerEndpoint: Int = 32) {
        self.tls = tls
        self.connectTimeoutMilliseconds = connectTimeoutMilliseconds
        self.readTimeoutMilliseconds = readTimeoutMilliseconds
        self.maxResponseBytes = maxResponseBytes
        self.maxIdleConnectionsPerEndpoint = maxIdleConnectionsPerEndpoint
    }
}

/// An HTTP/1.1 client on the same loops as the server: the roles call each other
/// through it. Connections are kept alive and reused per endpoint and loop; a request
/// made from a loop runs on that loop.
public final class HTTPClient: Sendable {
    public let configuration: HTTPClientConfiguration
    private let group: EventLoopGroup
    private let tlsContext: TLSContext
    private let pools: [ObjectIdentifier: LoopBound<ConnectionPool>]
    /// Where the URLs of a server of this process are answered without a socket, by its router (the tests' client of the
    /// roles and flows; loopback stays where the network is the subject); nil: every request goes over the network.
    private let inProcess: InProcessCalls?

    /// A loop of the client's group, the caller's when it is one of them: where a role sets its time limits.
    public func nextLoop() -> EventLoop { group.next() }

    public init(group: EventLoopGroup, configuration: HTTPClientConfiguration = HTTPClientConfiguration(),
                inProcess: InProcessCalls? = nil) throws(NetError) {
        self.group = group
        self.configuration = configuration
        self.inProcess = inProcess
        tlsContext = try TLSContext(client: configuration.tls)
        var pools: [ObjectIdentifier: LoopBound<ConnectionPool>] = [:]
        for loop in group.loops { pools[ObjectIdentifier(loop)] = LoopBound(ConnectionPool(loop: loop), on: loop) }
        self.pools = pools
    }

    /// Sends `request` to the endpoint of `url` (whose path and query replace the request's target).
    public func execute(_ request: HTTPRequest, url: String) async throws(HTTPClientError) -> HTTPResponse {
        if let inProcess, let answered = try await inProcess.answer(request, url: url, readTimeoutMilliseconds: configuration.readTimeoutMilliseconds) {
            return answered
        }
        let (endpoint, target) = try Endpoint.parse(url)
        var request = request
        request.target = target
        let bytes = HTTPSerializer.serialize(request, host: endpoint.hostHeader)
        let loop = group.next()
        guard let pool = pools[ObjectIdentifier(loop)] else { throw .clientShutDown }
        // A loop that stops before it takes the request drops it: the caller is told the client shut down.
        let result = await LoopReply<Result<HTTPResponse, HTTPClientError>>.awaiting(abandoned: .failure(.clientShutDown)) { reply in
            loop.execute { [self] in
                perform(bytes, to: endpoint, pool: pool.value, retryOnStale: true) { reply.resume(returning: $0) }
            }
        }
        return try result.get()
    }

    /// GET `url`.
    public func get(_ url: String, headers: HTTPHeaders = [:]) async throws(HTTPClientError) -> HTTPResponse {
        try await execute(HTTPRequest(method: .get, target: "/", headers: headers), url: url)
    }

    /// POST `body` to `url` with the given Content-Type.
    public func post(_ url: String, body: [UInt8], contentType: String = "application/json", headers: HTTPHeaders = [:]) async throws(HTTPClientError) -> HTTPResponse {
        var headers = headers
        headers.set("Content-Type", contentType)
        return try await execute(HTTPRequest(method: .post, target: "/", headers: headers, body: body), url: url)
    }

    private func perform(_ bytes: [UInt8], to endpoint: Endpoint, pool: ConnectionPool, retryOnStale: Bool,
                         _ completion: @escaping ClientConnection.Completion) {
        let send: (ClientConnection, Bool) -> Void = { [self] connection, reused in
            connection.send(bytes, readTimeoutMilliseconds: configuration.readTimeoutMilliseconds) { [self] result in
                // A kept-alive connection the server closed meanwhile fails before any byte
                // of the answer: retry once, on a new connection (the other idle ones to this
                // endpoint may have been closed too, as by a server that is shutting down).
                if case .failure(.connectionClosed) = result, reused, retryOnStale, !connection.hasReceivedBytes {
                    return perform(bytes, to: endpoint, pool: pool, retryOnStale: false, completion)
                }
                if connection.isReusable { pool.checkIn(connection, limit: configuration.maxIdleConnectionsPerEndpoint) }
                completion(result)
            }
        }
        if retryOnStale, let idle = pool.checkOut(endpoint) { return send(idle, true) }
        let connection = ClientConnection(endpoint: endpoint, loop: pool.loop, maxResponseBytes: configuration.maxResponseBytes,
                                          ownPorts: group.ownClientPorts)
        connection.open(tls: endpoint.secure ? tlsContext : nil, timeoutMilliseconds: configuration.connectTimeoutMilliseconds) { error in
            if let error { return completion(.failure(error)) }
            send(connection, false)
        }
    }
}

/// Idle connections of one loop, by endpoint; held in a ``LoopBound``.
private final class ConnectionPool {
    let loop: EventLoop
    private var idle: [Endpoint: [ClientConnection]] = [:]

    init(loop: EventLoop) { self.loop = loop }

    func checkOut(_ endpoint: Endpoint) -> ClientConnection? {
        while let connection = idle[endpoint]?.popLast() {
            connection.onClose = nil
            if connection.isReusable { return connection }
        }
        return nil
    }

    func checkIn(_ connection: ClientConnection, limit: Int) {
        guard idle[connection.endpoint, default: []].count < limit else { return connection.close() }
        idle[connection.endpoint, default: []].append(connection)
        // Weak: the client (and its pools) may go away while idle connections stay open.
        connection.onClose = { [weak self] closed in
            self?.idle[closed.endpoint]?.removeAll { $0 === closed }
        }
    }
}
