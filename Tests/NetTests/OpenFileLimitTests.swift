import EventLoops
import Foundation
import Testing
import TestSupport
@testable import Net

/// Each connection is a file descriptor. At the limit, libuv closes new connections as it
/// accepts them, so clients lose their answers without a word: the 500-connection test
/// lost one under the parallel suite, where every test's sockets share the process's limit.
@Suite("Open file limit", .serialized)
struct OpenFileLimitTests {
    @Test func theGroupRaisesTheSoftLimitToTheHardOne() {
        _ = EventLoopGroup.raiseOpenFileLimit
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        #expect(limit.rlim_cur == limit.rlim_max)
    }

    /// `serve` under `ulimit` settings; returns the process and its plain HTTP port.
    private func serve(ulimit: String) throws -> (ChildProcess, Int) {
        let serve = try ChildProcess("/bin/bash", ["-c", "ulimit \(ulimit) && exec \"$0\" serve --http-port 0 --https-port 0 --loops 2", harnessBinary],
                                     directory: repositoryRoot)
        let log = serve.awaitOutput { $0.contains("listening") ? $0 : nil } ?? ""
        let port = log.range(of: "http=127.0.0.1:").flatMap { Int(log[$0.upperBound...].prefix { $0.isNumber }) } ?? 0
        return (serve, port)
    }

    @Test func aHarnessStartedUnderALowSoftLimitAnswersEveryConnection() throws {
        let (serve, port) = try serve(ulimit: "-S -n 64")
        defer { serve.signal(SIGTERM); _ = serve.wait() }
        try #require(port > 0, "\(serve.output)")
        let sockets = try (0..<150).map { _ in try RawSocket(port: port, receiveTimeout: 10) }
        for socket in sockets { socket.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n") }
        #expect(sockets.filter { $0.readResponses(1).first?.contains(#"{"status":"ok","version":"#) == true }.count == 150)
    }

    @Test func aHarnessAtItsHardLimitSaysSo() throws {
        let (serve, port) = try serve(ulimit: "-n 64")
        defer { serve.signal(SIGTERM); _ = serve.wait() }
        try #require(port > 0, "\(serve.output)")
        // Past the limit a connection is dropped, or refused while the listener pauses.
        let sockets = (0..<100).compactMap { _ in try? RawSocket(port: port, receiveTimeout: 10) }
        for socket in sockets { socket.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n") }
        let answered = sockets.filter { $0.readResponses(1).first?.contains(#"{"status":"ok","version":"#) == true }.count
        #expect(answered < 100)
        // The connections turned away are in the log, with the limit and what to do.
        #expect(serve.awaitOutput { $0.contains("near the open file limit") ? $0 : nil }?.contains("openFileLimit=64") == true,
                "\(serve.output.suffix(1500))")
    }
}
