import Dispatch
import EventLoops
import Testing
@testable import Net

/// A loop's stop closes every handle, those opened while it closes them too: nothing keeps the thread that joins it
/// waiting (a harness that never exits on SIGTERM).
@Suite("Stopping a loop")
struct LoopStopTests {
    @Test func aConnectionThatDialsAgainAsItClosesDoesNotHoldTheLoopOpen() throws {
        let serverGroup = EventLoopGroup(loopCount: 1)
        defer { serverGroup.shutdown() }
        let server = try HTTPServer(configuration: ServerConfiguration(httpPort: 0), router: Router(), group: serverGroup)
        try server.start()
        defer { server.shutdown() }
        let address = try SocketAddress(host: "127.0.0.1", port: server.httpPort ?? 0)

        let group = EventLoopGroup(loopCount: 1)
        let loop = group.next()
        let dialled = DispatchSemaphore(value: 0)
        loop.execute {
            let stream = TCPStream(loop: loop)
            // As a client retries a request whose kept-alive connection closed under it, and waits for the answer.
            stream.onClose = { _ in
                let again = TCPStream(loop: loop)
                again.connect(to: address) { failure in if failure == nil { again.startReading() } }
            }
            stream.connect(to: address) { _ in dialled.signal() }
        }
        #expect(dialled.wait(timeout: .now() + 10) == .success)
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            group.shutdown()
            stopped.signal()
        }
        #expect(stopped.wait(timeout: .now() + 10) == .success, "the loop still ran 10 s after it was asked to stop")
    }
}
