import CLibUV
import EventLoops
import Glibc

/// A listening TCP socket on one loop. Several loops listen on the same port with
/// SO_REUSEPORT, and the kernel spreads new connections across them.
final class TCPListener: LoopHandleOwner {
    let loop: EventLoop
    private var handle: UnsafeMutablePointer<uv_tcp_t>?
    private let onAccept: (TCPStream) -> Void
    /// Called on the loop when a connection could not be accepted (libuv's reason).
    var onAcceptFailure: ((String) -> Void)?
    /// Called on the loop when an accepted connection's descriptor is near the open file limit.
    var onNearFileLimit: ((Int32) -> Void)?
    private var address: SocketAddress
    private let backlog: Int32
    private var isClosed = false
    private static let descriptorsInReserve: UInt64 = 16
    /// Out of file descriptors: the listener is closed for this long, then bound again.
    private var backOff: (timer: LoopTimer, milliseconds: UInt64)?

    /// Binds and listens; `onAccept` runs on the loop for each new connection.
    init(loop: EventLoop, address: SocketAddress, backlog: Int32 = 1024, onAccept: @escaping (TCPStream) -> Void) throws(NetError) {
        precondition(loop.inLoop)
        self.loop = loop
        self.onAccept = onAccept
        self.address = address
        self.backlog = backlog
        try open()
        if let bound = localAddress { self.address = bound }  // port 0: the same port when bound again
    }

    private func open() throws(NetError) {
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
                guard let listener = owner(of: server, as: TCPListener.self) else { return }
                guard status == 0 else { return listener.acceptFailed(status) }
                listener.acceptOne()
            }
        }
        guard rc == 0 else {
            self.handle = nil
            closeOwnedHandle(handle)
            throw .bindFailed(address: address.description, reason: String(cString: uv_strerror(rc)))
        }
    }

    /// libuv retries a failed accept at once, in a loop, for as long as it fails: out of file
    /// descriptors (or memory) that spins a core. Closing the socket ends its loop; the listener
    /// is bound again after a pause (100 ms, doubling to a second) while the other loops'
    /// listeners serve.
    private func acceptFailed(_ status: Int32) {
        onAcceptFailure?(String(cString: uv_strerror(status)))
        guard let handle else { return }
        self.handle = nil
        closeOwnedHandle(handle)
        let pause = min((backOff?.milliseconds ?? 50) * 2, 1_000)
        backOff?.timer.close()
        backOff = (loop.scheduleTimer(after: pause) { [weak self] in self?.reopen() }, pause)
    }

    private func reopen() {
        guard !isClosed, handle == nil else { return }
        do { try open() } catch {
            onAcceptFailure?("cannot listen again: \(error)")
        }
        if handle == nil, let pause = backOff?.milliseconds {
            backOff?.timer.restart(after: pause)
        }
    }

    /// Fails when another socket listens on `address`: a second process would otherwise join
    /// the port through SO_REUSEPORT and split the traffic. A bind with SO_REUSEADDR alone
    /// fails on a listening socket but not on connections left in TIME_WAIT; the probe is
    /// closed at once, and this process's loops then bind with SO_REUSEPORT.
    static func ensureNotServed(_ address: SocketAddress) throws(NetError) {
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return }
        defer { Glibc.close(fd) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let length = socklen_t(address.family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        guard address.withSockaddr({ bind(fd, $0, length) }) != 0, errno == EADDRINUSE else { return }
        throw .bindFailed(address: address.description, reason: "another process is listening there (a harness already running?)")
    }

    /// The address actually bound (the real port when 0 was asked for).
    var localAddress: SocketAddress? { handle.flatMap { SocketAddress(of: $0, uv_tcp_getsockname) } }

    private func acceptOne() {
        guard let handle else { return }
        if let backOff {
            backOff.timer.close()
            self.backOff = nil
        }
        let stream = TCPStream(loop: loop)
        guard let client = stream.handle else { return stream.close() }
        let rc = uv_accept(handle.asStream, client.asStream)
        guard rc == 0 else {
            stream.close()
            onAcceptFailure?(String(cString: uv_strerror(rc)))
            return
        }
        uv_tcp_nodelay(client, 1)
        // Descriptors are numbered lowest first: one this high means the limit is near, and
        // libuv then closes new connections as it accepts them, unseen by us (its EMFILE guard).
        let limit = EventLoopGroup.raiseOpenFileLimit.soft
        var fd: uv_os_fd_t = -1
        if limit > 0, uv_fileno(client.asHandle, &fd) == 0, UInt64(fd) + Self.descriptorsInReserve >= limit {
            onNearFileLimit?(fd)
        }
        onAccept(stream)
    }

    func close() {
        isClosed = true
        backOff?.timer.close()
        backOff = nil
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
