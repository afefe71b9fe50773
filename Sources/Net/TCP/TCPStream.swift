import CLibUV
import EventLoops

/// A connected TCP socket on one loop; use it from that loop only.
///
/// Reads are delivered to ``onRead`` straight from the loop's shared read buffer.
/// Writes try the socket synchronously first (`uv_try_write`) and queue only what the
/// kernel did not take, so the usual small response costs one syscall and no copy.
final class TCPStream: LoopHandleOwner {
    let loop: EventLoop
    private(set) var handle: UnsafeMutablePointer<uv_tcp_t>?
    /// Called with each chunk read; the bytes are valid only during the call.
    var onRead: ((UnsafeRawBufferPointer) -> Void)?
    /// Called once when the stream is closed, with the reason if it was not a clean close.
    var onClose: ((String?) -> Void)?
    /// Called when the peer shuts down its write side, if set; else that closes the stream.
    /// A server still answers what it received (a half-close is not an abort).
    var onEnd: (() -> Void)?
    private var queuedWrites = 0
    private var closeWhenFlushed = false
    private var closeReason: String?

    init(loop: EventLoop) {
        self.loop = loop
        let handle = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
        uv_tcp_init(loop.uvLoop, handle)
        attach(self, to: handle)
        self.handle = handle
    }

    var isOpen: Bool { handle != nil }

    var peerAddress: SocketAddress? { handle.flatMap { SocketAddress(of: $0, uv_tcp_getpeername) } }

    /// The port this stream's connection is registered under in `ownPorts`, until it closes.
    private var ownPort: (port: Int, registry: OwnClientPorts)?

    /// Connects to `address`; `completion` gets nil on success or the reason. With `ownPorts`,
    /// the socket is bound to a local port first and that port registered there until the
    /// stream closes: the server side can then tell this process's own connections.
    func connect(to address: SocketAddress, registeringIn ownPorts: OwnClientPorts? = nil, completion: @escaping (String?) -> Void) {
        guard let handle else { return completion("stream closed") }
        if let ownPorts, let wildcard = try? SocketAddress(host: address.family == AF_INET6 ? "::" : "0.0.0.0", port: 0) {
            let rc = wildcard.withSockaddr { uv_tcp_bind(handle, $0, 0) }
            guard rc == 0, let port = SocketAddress(of: handle, uv_tcp_getsockname)?.port else {
                return completion(String(cString: uv_strerror(rc == 0 ? UV_EADDRNOTAVAIL.rawValue : rc)))
            }
            ownPorts.insert(port)
            ownPort = (port, ownPorts)
        }
        let request = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        request.pointee.data = Unmanaged.passRetained(ConnectCompletion(completion)).toOpaque()
        let rc = address.withSockaddr { uv_tcp_connect(request, handle, $0) { request, status in
            guard let request else { return }
            let completion = Unmanaged<ConnectCompletion>.fromOpaque(request.pointee.data).takeRetainedValue()
            request.deallocate()
            completion.body(status == 0 ? nil : String(cString: uv_strerror(status)))
        } }
        if rc != 0 {
            Unmanaged<ConnectCompletion>.fromOpaque(request.pointee.data).release()
            request.deallocate()
            completion(String(cString: uv_strerror(rc)))
        } else {
            uv_tcp_nodelay(handle, 1)
        }
    }

    func startReading() {
        guard let handle else { return }
        uv_read_start(handle.asStream, { handle, _, buffer in
            guard let buffer, let loop = EventLoop.running(handle!) else { return }
            buffer.pointee = uv_buf_init(loop.readBuffer.baseAddress!.assumingMemoryBound(to: CChar.self), UInt32(loop.readBuffer.count))
        }, { handle, count, buffer in
            guard let stream = owner(of: handle, as: TCPStream.self) else { return }
            if count > 0, let base = buffer?.pointee.base {
                stream.onRead?(UnsafeRawBufferPointer(start: base, count: count))
            } else if count == Int(UV_EOF.rawValue), let onEnd = stream.onEnd {
                stream.stopReading()
                onEnd()
            } else if count < 0 {
                stream.closeReason = count == Int(UV_EOF.rawValue) ? nil : String(cString: uv_strerror(Int32(count)))
                stream.close()
            }
        })
    }

    func stopReading() {
        if let handle { uv_read_stop(handle.asStream) }
    }

    /// Writes `bytes` in order after anything written before.
    func write(_ bytes: UnsafeRawBufferPointer) {
        guard let handle, bytes.count > 0 else { return }
        var offset = 0
        if queuedWrites == 0 {
            var buffer = uv_buf_init(UnsafeMutableRawPointer(mutating: bytes.baseAddress!).assumingMemoryBound(to: CChar.self), UInt32(bytes.count))
            let written = uv_try_write(handle.asStream, &buffer, 1)
            if written == bytes.count { return }
            if written < 0 && written != UV_EAGAIN.rawValue {
                closeReason = String(cString: uv_strerror(written))
                return close()
            }
            offset = max(0, Int(written))
        }
        // Queue the rest: libuv needs the bytes until the write callback.
        let remaining = bytes.count - offset
        let copy = UnsafeMutableRawPointer.allocate(byteCount: remaining, alignment: 1)
        copy.copyMemory(from: bytes.baseAddress! + offset, byteCount: remaining)
        let request = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)
        request.pointee.data = copy
        var buffer = uv_buf_init(copy.assumingMemoryBound(to: CChar.self), UInt32(remaining))
        queuedWrites += 1
        let rc = uv_write(request, handle.asStream, &buffer, 1) { request, status in
            guard let request else { return }
            request.pointee.data.deallocate()
            let stream = owner(of: request.pointee.handle, as: TCPStream.self)
            request.deallocate()
            stream?.writeFinished(status: status)
        }
        if rc != 0 {
            queuedWrites -= 1
            copy.deallocate()
            request.deallocate()
            closeReason = String(cString: uv_strerror(rc))
            close()
        }
    }

    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    private func writeFinished(status: Int32) {
        queuedWrites -= 1
        if status < 0 && status != UV_ECANCELED.rawValue {
            closeReason = String(cString: uv_strerror(status))
            close()
        } else if closeWhenFlushed && queuedWrites == 0 {
            close()
        } else if let onDrained, unsentBytes <= drainedBelow {
            self.onDrained = nil
            onDrained()
        }
    }

    /// Bytes written but not yet taken by the kernel (libuv's write queue).
    var unsentBytes: Int { handle.map { Int($0.asStream.pointee.write_queue_size) } ?? 0 }

    /// Called once, when the unsent bytes fall to `drainedBelow` or less; set it again to wait again.
    var onDrained: (() -> Void)?
    var drainedBelow = 0

    /// Closes once every queued write has reached the kernel.
    func closeAfterFlush() {
        if queuedWrites == 0 { close() } else { closeWhenFlushed = true }
    }

    /// Closes at once; queued writes are cancelled.
    func close() {
        guard let handle else { return }
        self.handle = nil
        if let ownPort { ownPort.registry.remove(ownPort.port) }
        ownPort = nil
        let callback = onClose
        onClose = nil
        onRead = nil
        onEnd = nil
        onDrained = nil  // cancelled writes still finish; nothing may call back into a closed connection
        closeOwnedHandle(handle)
        callback?(closeReason)
    }
}

private final class ConnectCompletion {
    let body: (String?) -> Void
    init(_ body: @escaping (String?) -> Void) { self.body = body }
}
