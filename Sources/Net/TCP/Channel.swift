import EventLoops
/// A TCP stream with optional TLS on top: the HTTP layer reads and writes plaintext
/// and does not know which it has.
final class Channel {
    let stream: TCPStream
    let tls: TLSSession?
    /// Plaintext from the peer; valid only during the call.
    var onData: ((UnsafeRawBufferPointer) -> Void)?
    /// Called once when the connection ends, with the reason if it was not a clean close.
    var onClose: ((String?) -> Void)?
    /// Called when the peer has sent all it will (it shut down its write side); the
    /// connection stays open for the answers. Without it, that closes the connection.
    var onEnd: (() -> Void)? {
        didSet { stream.onEnd = onEnd.map { end in { [weak self] in self?.tls?.isHandshakeComplete == false ? self?.close() : end() } } }
    }
    /// Called once when the connection is ready for application data (TLS handshake done).
    var onReady: (() -> Void)?
    private var heldPlaintext: [UInt8] = []
    private var closeReason: String?

    init(stream: TCPStream, tls: TLSSession?) {
        self.stream = stream
        self.tls = tls
    }

    var loop: EventLoop { stream.loop }
    var isOpen: Bool { stream.isOpen }

    func start() {
        // The stream holds the channel until it closes; close() drops these closures.
        stream.onRead = { bytes in self.received(bytes) }
        stream.onClose = { [self] reason in
            let callback = onClose
            onClose = nil
            onData = nil
            onReady = nil
            callback?(closeReason ?? reason)
        }
        stream.startReading()
        guard let tls else { return signalReady() }
        do {
            try tls.handshake()  // the client's ClientHello; a server waits for the peer
            flushTLS()
            if tls.isHandshakeComplete { signalReady() }
        } catch {
            fail(error.description)
        }
    }

    private func received(_ bytes: UnsafeRawBufferPointer) {
        guard let tls else {
            onData?(bytes)
            return
        }
        let wasReady = tls.isHandshakeComplete
        do {
            try tls.receive(bytes) { plaintext in onData?(plaintext) }
            flushTLS()
            if !wasReady && tls.isHandshakeComplete { signalReady() }
        } catch {
            flushTLS()  // e.g. the alert that tells the peer why
            fail(error.description)
        }
    }

    private func signalReady() {
        if !heldPlaintext.isEmpty {
            let held = heldPlaintext
            heldPlaintext = []
            held.withUnsafeBytes { send($0) }
        }
        let callback = onReady
        onReady = nil
        callback?()
    }

    /// Sends plaintext (encrypted first under TLS; held until the handshake is done).
    func send(_ bytes: UnsafeRawBufferPointer) {
        guard let tls else { return stream.write(bytes) }
        guard tls.isHandshakeComplete else { return heldPlaintext.append(contentsOf: bytes) }
        do {
            try tls.send(bytes)
            flushTLS()
        } catch {
            fail(error.description)
        }
    }

    func send(_ bytes: [UInt8]) { bytes.withUnsafeBytes { send($0) } }

    private func flushTLS() {
        tls?.takeOutgoing { stream.write($0) }
    }

    private func fail(_ reason: String) {
        closeReason = reason
        stream.closeAfterFlush()
    }

    /// Ends the connection once written data is out (after a TLS close_notify).
    func closeAfterFlush() {
        if let tls, stream.isOpen {
            tls.shutdown()
            flushTLS()
        }
        stream.closeAfterFlush()
    }
    func close() { stream.close() }
}
