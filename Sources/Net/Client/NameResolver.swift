import CLibUV
import EventLoops

/// Resolves a host name on a loop with `uv_getaddrinfo` (libuv's thread pool), so the
/// loop never blocks on DNS. Numeric hosts and `localhost` need no look-up.
enum NameResolver {
    private final class Request {
        let completion: (Result<SocketAddress, HTTPClientError>) -> Void
        let host: String
        init(host: String, _ completion: @escaping (Result<SocketAddress, HTTPClientError>) -> Void) {
            self.host = host
            self.completion = completion
        }
    }

    static func resolve(_ host: String, port: Int, on loop: EventLoop,
                        _ completion: @escaping (Result<SocketAddress, HTTPClientError>) -> Void) {
        if let address = try? SocketAddress(host: host, port: port) { return completion(.success(address)) }
        let request = UnsafeMutablePointer<uv_getaddrinfo_t>.allocate(capacity: 1)
        request.pointee.data = Unmanaged.passRetained(Request(host: host, completion)).toOpaque()
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        let rc = uv_getaddrinfo(loop.uvLoop, request, { request, status, info in
            guard let request else { return }
            let pending = Unmanaged<Request>.fromOpaque(request.pointee.data).takeRetainedValue()
            request.deallocate()
            defer { if let info { uv_freeaddrinfo(info) } }
            guard status == 0, let info, let raw = info.pointee.ai_addr else {
                return pending.completion(.failure(.nameResolutionFailed(host: pending.host, reason: String(cString: uv_strerror(status)))))
            }
            var storage = sockaddr_storage()
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: Int(info.pointee.ai_addrlen))) }
            pending.completion(.success(SocketAddress(storage: storage)))
        }, host, String(port), &hints)
        if rc != 0 {
            Unmanaged<Request>.fromOpaque(request.pointee.data).release()
            request.deallocate()
            completion(.failure(.nameResolutionFailed(host: host, reason: String(cString: uv_strerror(rc)))))
        }
    }
}
