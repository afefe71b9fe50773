import CLibUV

/// A listening TCP socket on one loop. Several loops listen on the same port with
/// SO_REUSEPORT, and the kernel spreads new connections across them.
final class TCPListener: LoopHandleOwner {
    let loop: EventLoop
    private var handle: UnsafeMutablePointer<uv_tcp_t>?
    private let onAccept: (TCPStream) -> Void

    /// Binds and listens; `onAccept` runs on the loop for each new connection.
    init(loop: EventLoop, address: SocketAddress, backlog: Int32 = 1024, onAccept: @escaping (TCPStream) -> Void) throws(NetError) {
        precondition(loop.inLoop)
        self.loop = loop
        self.onAccept = onAccept
        let handle = UnsafeMutablePointer<uv_tcp_t>.allocate(capacity: 1)
        // init_ex creates the socket now, so SO_REUSEPORT can be set before bind.
        var rc = uv_tcp_init_ex(loop.uvLoop, handle, UInt32(address.family))
        guard rc == 0 else {
            handle.deallocate()
            throw .uv("uv_tcp_init_ex", rc)
        }
        attach(self, to: handle)
        self.handle = handle
        var fd: uv_os_fd_t = -1
        uv_fileno(handle.asHandle, &fd)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        rc = address.withSockaddr { uv_tcp_bind(handle, $0, 0) }
        if rc == 0 {
            rc = uv_listen(handle.asStream, backlog) { server, status in
                guard status == 0, let listener = owner(of: server, as: TCPListener.self) else { return }
                listener.acceptOne()
            }
        }
        guard rc == 0 else {
            close()
            throw .bindFailed(address: address.description, reason: String(cString: uv_strerror(rc)))
        }
    }

    /// The address actually bound (the real port when 0 was asked for).
    var localAddress: SocketAddress? {
        guard let handle else { return nil }
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutableBytes(of: &storage) {
            uv_tcp_getsockname(handle, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        return rc == 0 ? SocketAddress(storage: storage) : nil
    }

    private func acceptOne() {
        guard let handle else { return }
        let stream = TCPStream(loop: loop)
        guard let client = stream.handle, uv_accept(handle.asStream, client.asStream) == 0 else {
            stream.close()
            return
        }
        uv_tcp_nodelay(client, 1)
        onAccept(stream)
    }

    func close() {
        guard let handle else { return }
        self.handle = nil
        closeOwnedHandle(handle)
    }
}

extension UnsafeMutablePointer where Pointee == uv_tcp_t {
    var asStream: UnsafeMutablePointer<uv_stream_t> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: uv_stream_t.self)
    }
}
