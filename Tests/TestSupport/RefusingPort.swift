import Foundation

/// A loopback port bound and not listening, held until `close`: a connection to it is refused,
/// and no other test's server can be given it meanwhile (a listener closed to free its port can
/// see that port taken by the next server a parallel test starts).
public final class RefusingPort {
    private let fd: Int32
    public let port: Int

    /// `port` 0: one the kernel chooses. Fails where `port` is bound already.
    public init(port: Int = 0) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard fd >= 0, bound else {
            if fd >= 0 { Foundation.close(fd) }
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { Foundation.close(fd) }
}
