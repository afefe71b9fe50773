import CHTTPParser
import EventLoops

/// One client connection: connect (and TLS handshake) once, then one request at a time.
final class ClientConnection {
    typealias Completion = (Result<HTTPResponse, HTTPClientError>) -> Void

    let endpoint: Endpoint
    private let loop: EventLoop
    private var channel: Channel?
    private let parser: HTTPMessageParser
    private var completion: Completion?
    private var timer: LoopTimer?
    private var responseKeepAlive = true
    private(set) var hasReceivedBytes = false
    /// Set when the connection can carry another request.
    private(set) var isReusable = false
    var onClose: ((ClientConnection) -> Void)?

    private let ownPorts: OwnClientPorts?

    init(endpoint: Endpoint, loop: EventLoop, maxResponseBytes: Int, ownPorts: OwnClientPorts? = nil) {
        self.endpoint = endpoint
        self.loop = loop
        self.ownPorts = ownPorts
        parser = HTTPMessageParser(kind: HTTP_RESPONSE, maxHeaderBytes: 64 * 1024, maxBodyBytes: maxResponseBytes)
        parser.onMessage = { [unowned self] message in
            responseKeepAlive = message.keepAlive
            finish(.success(HTTPResponse(status: HTTPStatus(code: message.statusCode), headers: message.headers, body: message.body)))
        }
    }

    /// Resolves, connects and (for https) completes the TLS handshake.
    func open(tls: TLSContext?, timeoutMilliseconds: UInt64, _ ready: @escaping (HTTPClientError?) -> Void) {
        var done = false
        // Closures hold the connection strongly; each cycle ends when its timer or channel closes.
        let finishOpen: (HTTPClientError?) -> Void = { error in
            guard !done else { return }
            done = true
            self.timer?.close()
            self.timer = nil
            if error != nil { self.channel?.close() }
            ready(error)
        }
        let address = endpoint.description
        timer = loop.scheduleTimer(after: timeoutMilliseconds) {
            finishOpen(.connectTimedOut(address: address, milliseconds: timeoutMilliseconds))
        }
        NameResolver.resolve(endpoint.host, port: endpoint.port, on: loop) { [self] result in
            guard !done else { return }
            let socketAddress: SocketAddress
            switch result {
            case .failure(let error): return finishOpen(error)
            case .success(let resolved): socketAddress = resolved
            }
            var session: TLSSession?
            if let tls {
                do throws(NetError) {
                    session = try TLSSession(context: tls, serverName: endpoint.host)
                } catch {
                    return finishOpen(.tlsFailed(address: address, reason: error.description))
                }
            }
            let channel = Channel(stream: TCPStream(loop: loop), tls: session)
            self.channel = channel
            channel.onData = { bytes in self.received(bytes) }
            channel.onClose = { reason in
                if !done {
                    let failure: HTTPClientError = session != nil && reason != nil
                        ? .tlsFailed(address: address, reason: reason ?? "closed during handshake")
                        : .connectFailed(address: address, reason: reason ?? "closed by peer")
                    finishOpen(failure)
                }
                self.closed(reason)
            }
            channel.onReady = {
                self.isReusable = true
                finishOpen(nil)
            }
            channel.stream.connect(to: socketAddress, registeringIn: ownPorts) { error in
                if let error { return finishOpen(.connectFailed(address: address, reason: error)) }
                channel.start()
            }
        }
    }

    /// Sends one request; `completion` runs once with the response or the failure.
    func send(_ bytes: [UInt8], readTimeoutMilliseconds: UInt64, _ completion: @escaping Completion) {
        guard let channel, channel.isOpen else { return completion(.failure(.connectionClosed(reason: "not connected"))) }
        isReusable = false
        hasReceivedBytes = false
        self.completion = completion
        timer = loop.scheduleTimer(after: readTimeoutMilliseconds) {
            self.finish(.failure(.readTimedOut(milliseconds: readTimeoutMilliseconds)))
            self.channel?.close()
        }
        channel.send(bytes)
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        hasReceivedBytes = true
        withExtendedLifetime(self) {
            do throws(ParseFailure) {
                try parser.feed(bytes)
            } catch {
                switch error {
                case .bodyTooLarge: finish(.failure(.responseTooLarge(limit: parser.maxBodyBytes)))
                case .headersTooLarge: finish(.failure(.malformedResponse("header block over \(parser.maxHeaderBytes) bytes")))
                case .malformed(let reason), .versionNotSupported(let reason): finish(.failure(.malformedResponse(reason)))
                }
                channel?.close()
            }
        }
    }

    private func finish(_ result: Result<HTTPResponse, HTTPClientError>) {
        timer?.close()
        timer = nil
        guard let completion else { return }
        self.completion = nil
        if case .success = result, responseKeepAlive, channel?.isOpen == true {
            isReusable = true
        } else {
            isReusable = false
            channel?.closeAfterFlush()
        }
        completion(result)
    }

    private func closed(_ reason: String?) {
        isReusable = false
        if completion != nil {
            // A response delimited by the end of the connection completes here.
            try? parser.finish()
            finish(.failure(.connectionClosed(reason: reason ?? "closed by peer")))
        }
        timer?.close()
        timer = nil
        onClose?(self)
        onClose = nil
    }

    func close() { channel?.close() }
}
