import Foundation

/// A loopback port for a child process to listen on (PostgreSQL, HAProxy, a harness instance), free
/// when drawn. It is drawn below the kernel's ephemeral range where the range leaves room: a port of
/// that range, let go for the child to take, can meanwhile become another test's listener or the local
/// end of any outgoing connection, and the child then fails to start.
public enum ChildProcessPort {
    public static func free() throws -> Int {
        let firstEphemeral = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } } ?? 32768
        // A machine whose ephemeral range starts low leaves too few ports below it: the kernel's choice then.
        guard firstEphemeral > 11_000 else { return try RefusingPort().port }
        let range = 10_000..<firstEphemeral
        for _ in 0..<100 {
            let port = Int.random(in: range)
            if isFree(port) { return port }
        }
        throw POSIXError(.EADDRINUSE)
    }

    private static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
