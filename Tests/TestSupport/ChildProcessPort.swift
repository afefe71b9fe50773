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
            // Free if it can be bound; let go at once for the child.
            if (try? RefusingPort(port: port)) != nil { return port }
        }
        throw POSIXError(.EADDRINUSE)
    }
}
