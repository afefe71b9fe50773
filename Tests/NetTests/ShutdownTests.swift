import Foundation
import Testing
@testable import Net

@Suite("Graceful shutdown")
struct ShutdownTests {
    @Test func requestsInFlightFinishAndNewConnectionsAreRefused() throws {
        var router = Router()
        router.get("/slow") { _, _ in
            try await Task.sleep(nanoseconds: 300_000_000)
            return .text("finished")
        }
        let server = try TestServer(router: router)
        let port = server.port
        let socket = try RawSocket(port: port)
        socket.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        usleep(50_000)  // the request is in its handler now
        let stopped = Thread { server.stop() }
        stopped.start()
        let response = socket.readAll()
        #expect(statusLine(response) == "HTTP/1.1 200 OK")
        #expect(response.contains("Connection: close"))
        #expect(response.hasSuffix("finished"))
        while !stopped.isFinished { usleep(5_000) }
        #expect(throws: (any Error).self) { try RawSocket(port: port) }
    }

    @Test func idleConnectionsAreClosedAtOnce() throws {
        var router = Router()
        router.get("/health") { _, _ in .text("ok") }
        let server = try TestServer(router: router)
        let idle = try RawSocket(port: server.port)
        idle.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = idle.readResponses(1)
        let started = Date()
        server.stop()
        // Well under the 10 s grace period: idle connections are not waited for.
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(idle.peerClosed())
    }

    @Test func gracePeriodCutsHandlersThatNeverFinish() throws {
        var router = Router()
        router.get("/forever") { _, _ in
            try await Task.sleep(nanoseconds: 60_000_000_000)
            return .text("late")
        }
        let server = try TestServer(router: router) { $0.shutdownGraceMilliseconds = 200 }
        let socket = try RawSocket(port: server.port)
        socket.send("GET /forever HTTP/1.1\r\nHost: x\r\n\r\n")
        usleep(50_000)
        let started = Date()
        server.stop()
        // The handler would run 60 s; the 200 ms grace period ends the wait long before.
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(socket.readAll() == "")
    }
}
