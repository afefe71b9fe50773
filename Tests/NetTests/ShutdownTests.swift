import Foundation
import Synchronization
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
        server.waitUntilAHandlerRuns()
        let stopped = server.stopInBackground()
        let response = socket.readAll()
        #expect(statusLine(response) == "HTTP/1.1 200 OK")
        #expect(response.contains("Connection: close"))
        #expect(response.hasSuffix("finished"))
        stopped.wait()
        #expect(throws: (any Error).self) { try RawSocket(port: port) }
    }

    @Test(arguments: [false, true])
    func aRequestInFlightStillCallsItsOwnServerDuringTheGracePeriod(overTLS: Bool) throws {
        // The roles call each other through the server's own listener (the 3DS Server's AReq goes
        // to the DS at the same port). A request accepted before the signal must finish those calls.
        let base = Mutex<(String, HTTPClient, HTTPServer)?>(nil)
        var router = Router()
        router.get("/inner") { _, _ in .text("inner answered") }
        router.get("/outer") { _, _ in
            guard let (url, client, server) = base.withLock({ $0 }) else { throw HTTPError(.internalServerError, "no client") }
            await waitUntil("the signal") { server.isShuttingDown }
            let inner = try await client.get(url + "/inner")
            return .text("outer saw: \(inner.bodyText)")
        }
        // Over TLS too: the own connection is idle between its handshake and its request.
        let server = try TestServer(router: router, tls: overTLS ? TestCerts.server : nil)
        let client = try HTTPClient(group: server.group, configuration: HTTPClientConfiguration(tls: TLSConfiguration(trustRootsFile: TestCerts.root)))
        base.withLock { $0 = (overTLS ? "https://localhost:\(server.tlsPort)" : "http://127.0.0.1:\(server.port)", client, server.server) }
        let socket = try RawSocket(port: server.port)
        socket.send("GET /outer HTTP/1.1\r\nHost: x\r\n\r\n")
        server.waitUntilAHandlerRuns()
        let stopped = server.stopInBackground()
        waitUntil("the server shutting down") { server.server.isShuttingDown }
        // A stranger connecting during the grace period is not served.
        if let stranger = try? RawSocket(port: server.port) {
            stranger.send("GET /inner HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(stranger.readAll() == "")
        }
        let response = socket.readAll()
        #expect(statusLine(response) == "HTTP/1.1 200 OK")
        #expect(response.hasSuffix("outer saw: inner answered"))
        stopped.wait()
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
        server.waitUntilAHandlerRuns()
        let started = Date()
        server.stop()
        // The handler would run 60 s; the 200 ms grace period ends the wait long before.
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(socket.readAll() == "")
    }
}
