import CLibUV

/// An IPv4 or IPv6 address and port, as libuv takes it.
public struct SocketAddress: Sendable, CustomStringConvertible {
    var storage = sockaddr_storage()

    /// Parses a numeric IPv4 or IPv6 host ("127.0.0.1", "::1"); `localhost` means 127.0.0.1.
    public init(host: String, port: Int) throws(NetError) {
        let numeric = host == "localhost" ? "127.0.0.1" : host.trimmingBrackets
        guard (0...65535).contains(port) else { throw .invalidAddress("\(host):\(port)") }
        let ok = withUnsafeMutableBytes(of: &storage) { raw -> Bool in
            if numeric.contains(":") {
                return uv_ip6_addr(numeric, Int32(port), raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)) == 0
            }
            return uv_ip4_addr(numeric, Int32(port), raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)) == 0
        }
        guard ok else { throw .invalidAddress("\(host):\(port)") }
    }

    init(storage: sockaddr_storage) { self.storage = storage }

    /// The local or peer address of a socket: `query` is `uv_tcp_getsockname` or `uv_tcp_getpeername`.
    init?(of handle: UnsafePointer<uv_tcp_t>,
          _ query: (UnsafePointer<uv_tcp_t>?, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<Int32>?) -> Int32) {
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutableBytes(of: &storage) { query(handle, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length) }
        guard rc == 0 else { return nil }
        self.storage = storage
    }

    var family: Int32 { Int32(storage.ss_family) }

    /// The port in host byte order.
    public var port: Int {
        var copy = storage
        return withUnsafeBytes(of: &copy) { raw in
            // sin_port and sin6_port sit at the same offset.
            Int(UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self)))
        }
    }

    public var host: String {
        var copy = storage
        var buffer = [CChar](repeating: 0, count: 64)
        withUnsafeBytes(of: &copy) { raw in
            if family == AF_INET6 {
                _ = uv_ip6_name(raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self), &buffer, buffer.count)
            } else {
                _ = uv_ip4_name(raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self), &buffer, buffer.count)
            }
        }
        return String(nulTerminated: buffer)
    }

    public var description: String { family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>) -> R) -> R {
        var copy = storage
        return withUnsafeBytes(of: &copy) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
    }
}

extension String {
    var trimmingBrackets: String {
        hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
    }
}
