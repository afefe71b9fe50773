import EventLoops
import Foundation
import Testing
@testable import Net
import Synchronization

private func router() -> Router {
    var router = Router()
    router.get("/health") { _, _ in .text("ok") }
    router.get("/big") { _, _ in .text(String(repeating: "x", count: 100_000)) }
    router.post("/echo") { request, _ in HTTPResponse(headers: ["Content-Type": "application/octet-stream"], body: request.body) }
    router.get("/items/{id}") { _, context in .text("item \(try context.parameter("id"))") }
    // Answers after `ms` milliseconds: a slow async handler, for ordering and shutdown.
    router.get("/sleep/{ms}") { _, context in
        let ms = UInt64(context.parameters["ms"] ?? "") ?? 0
        try await Task.sleep(nanoseconds: ms * 1_000_000)
        return .text("slept \(ms)")
    }
    return router
}

@Suite("HTTP server")
struct HTTPServerTests {
    @Test func answersGetAndPathParameters() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.send("GET /items/a%20b HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try #require(socket.readResponses(1).first)
        #expect(statusLine(response) == "HTTP/1.1 200 OK")
        #expect(response.hasSuffix("item a b"))
        #expect(response.contains("Date: "))
    }

    @Test func aHandlerFailureIs500WithoutItsInternals() throws {
        struct Leaky: Error, CustomStringConvertible { var description: String { "cannot open /srv/secret/keys.pem" } }
        var failing = router()
        failing.get("/fails") { _, _ in throw Leaky() }
        let server = try TestServer(router: failing)
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.send("GET /fails HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try #require(socket.readResponses(1).first)
        #expect(statusLine(response) == "HTTP/1.1 500 Internal Server Error")
        #expect(!response.contains("secret"), "the path stays in the log")
        #expect(response.contains("the harness log has the details"))
    }

    @Test func aGuardAnswersForEveryPathUnderItsSegmentFoundOrNot() throws {
        var guarded = router()
        guarded.get("/admin/things") { _, _ in .text("things") }
        guarded.guardPaths(under: "admin") { request throws(HTTPError) in
            guard request.headers["X-Key"] == "k" else { throw HTTPError(.unauthorized, "no key") }
        }
        let server = try TestServer(router: guarded)
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        // The way routing reads paths: doubled slashes and a trailing one reach the same route.
        for path in ["/admin/things", "//admin//things/", "/admin/nothing", "/admin"] {
            socket.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(statusLine(socket.readResponses(1).first ?? "") == "HTTP/1.1 401 Unauthorized", "\(path)")
        }
        socket.send("GET /admin/things HTTP/1.1\r\nHost: x\r\nX-Key: k\r\n\r\nGET /administrator HTTP/1.1\r\nHost: x\r\n\r\n")
        let responses = socket.readResponses(2)
        #expect(responses.first?.hasSuffix("things") == true)
        #expect(statusLine(responses.last ?? "") == "HTTP/1.1 404 Not Found", "another first segment is not guarded")
    }

    @Test(arguments: [
        ("GET /health HTTP/9.9\r\nHost: x\r\n\r\n", "HTTP/1.1 505 HTTP Version Not Supported", "HTTP/9.9 is not supported"),
        ("GET /health HTTP/2.0\r\nHost: x\r\n\r\n", "HTTP/1.1 505 HTTP Version Not Supported", "HTTP/2.0 is not supported"),
        // RFC 9110 2.5: a later minor version of HTTP/1 is answered as HTTP/1.1.
        ("GET /health HTTP/1.2\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 200 OK", "ok"),
        // An upgrade request whose body fails is one refusal: its "body" is not read as another request.
        ("POST /echo HTTP/1.1\r\nHost: x\r\nUpgrade: x\r\nConnection: upgrade\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n",
         "HTTP/1.1 400 Bad Request", "malformed HTTP request"),
        ("GET /health HTTP/1.1\nHost: x\n\n", "HTTP/1.1 400 Bad Request", "bare LF"),
        ("GET /health HTTP/1.1\r\nHost: x\nAccept: */*\r\n\r\n", "HTTP/1.1 400 Bad Request", "bare LF"),
        ("GET /health HTTP/1.1\r\nHost: x\r\nX-Long: a\r\n  b\r\n\r\n", "HTTP/1.1 400 Bad Request", "obsolete line folding"),
        ("GET /health HTTP/1.1\r\nHost : x\r\n\r\n", "HTTP/1.1 400 Bad Request", "whitespace between a header field name and its colon"),
        ("GET /health HTTP/1.1\r\nHost\t: x\r\n\r\n", "HTTP/1.1 400 Bad Request", "whitespace between a header field name and its colon"),
    ])
    func headsThatRFC9112RefusesAreRefused(request: String, status: String, reason: String) throws {
        // http_parser's lenient build reads all of these; RFC 9112 (2.2, 2.3, 5.1, 5.2) has a
        // server refuse them, and two parties reading one head differently is how smuggling starts.
        let server = try TestServer(router: router())
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.send(request)
        let response = socket.readAll()
        #expect(statusLine(response) == status, "\(response)")
        #expect(response.contains(reason), "\(response)")
    }

    @Test func emptyLinesBeforeARequestAndPipelinedHeadsAfterABodyAreRead() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        // Each head is checked, the one after a body included (the body's bytes are not a head).
        socket.send("\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\na\nb c"
                    + "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost : x\r\n\r\n")
        let responses = socket.readResponses(3)
        #expect(responses.count == 3)
        #expect(responses.first?.hasSuffix("a\nb c") == true)
        #expect(responses.dropFirst().first?.hasSuffix("ok") == true)
        #expect(statusLine(responses.last ?? "") == "HTTP/1.1 400 Bad Request")
    }

    @Test func expect100ContinueIsAnsweredBeforeTheBody() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        // The client waits for the interim answer before it sends the body (curl waits a second without it).
        #expect(socket.readUntil("\r\n\r\n") == "HTTP/1.1 100 Continue\r\n\r\n")
        socket.send("ping")
        let response = try #require(socket.readResponses(1).first)
        #expect(statusLine(response) == "HTTP/1.1 200 OK")
        #expect(response.hasSuffix("ping"))
        // Behind an unanswered pipelined request, the interim answer waits for that answer.
        socket.send("GET /sleep/200 HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        let interim = socket.readUntil("HTTP/1.1 100 Continue\r\n\r\n")
        #expect(interim.hasSuffix("slept 200HTTP/1.1 100 Continue\r\n\r\n"), "\(interim)")
        socket.send("pong")
        #expect(socket.readResponses(1).first?.hasSuffix("pong") == true)
        // A body over the limit is refused at once, without the interim answer.
        let large = try RawSocket(port: server.port)
        large.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\nExpect: 100-continue\r\n\r\n")
        #expect(statusLine(large.readAll()) == "HTTP/1.1 413 Content Too Large")
    }

    @Test func unknownPathIs404AndWrongMethodIs405WithAllow() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.send("GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\nDELETE /health HTTP/1.1\r\nHost: x\r\n\r\n")
        let responses = socket.readResponses(2)
        #expect(responses.count == 2)
        #expect(statusLine(responses[0]) == "HTTP/1.1 404 Not Found")
        #expect(responses[0].contains(#"{"error":"no route for \/nowhere"}"#) || responses[0].contains(#""error":"no route for /nowhere""#))
        #expect(statusLine(responses[1]) == "HTTP/1.1 405 Method Not Allowed")
        #expect(responses[1].contains("Allow: GET"))
    }

    @Test func malformedRequestIs400AndCloses() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.send("GARBAGE\r\n\r\n")
        let response = socket.readAll()  // read to EOF: the server must close
        #expect(statusLine(response) == "HTTP/1.1 400 Bad Request")
        #expect(response.contains("Connection: close"))
        #expect(response.contains("malformed HTTP request"))
    }

    @Test func headerBlockOver16KiBIs431() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 17 * 1024))\r\n\r\n")
        #expect(statusLine(socket.readAll()) == "HTTP/1.1 431 Request Header Fields Too Large")
        // Just under the limit passes.
        let small = try RawSocket(port: server.port)
        small.send("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 15 * 1024))\r\n\r\n")
        #expect(statusLine(small.readResponses(1).first ?? "") == "HTTP/1.1 200 OK")
    }

    @Test func bodyOverLimitIs413ByContentLengthAndByChunks() throws {
        let server = try TestServer(router: router()) { $0.maxBodyBytes = 4096 }
        defer { server.stop() }
        let declared = try RawSocket(port: server.port)
        declared.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n")
        #expect(statusLine(declared.readAll()) == "HTTP/1.1 413 Content Too Large")
        let chunked = try RawSocket(port: server.port)
        let chunk = String(repeating: "b", count: 3000)
        chunked.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nBB8\r\n\(chunk)\r\nBB8\r\n\(chunk)\r\n0\r\n\r\n")
        #expect(statusLine(chunked.readAll()) == "HTTP/1.1 413 Content Too Large")
    }

    @Test func chunkedBodyIsReassembled() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        let response = try #require(socket.readResponses(1).first)
        #expect(response.contains("Content-Length: 11"))
        #expect(response.hasSuffix("hello world"))
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        // The first answer takes longest: order must still be request order.
        socket.send("GET /sleep/120 HTTP/1.1\r\nHost: x\r\n\r\nGET /sleep/10 HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        let responses = socket.readResponses(4)
        #expect(responses.count == 4)
        #expect(responses.map { $0.split(separator: "\r\n\r\n").last.map(String.init) ?? "" } == ["slept 120", "slept 10", "ok", "abc"])
    }

    /// A request with `Upgrade` gets one answer, no unsolicited 400 after it: it is a plain
    /// request here, and the connection goes on; CONNECT gets one 400 and the connection closes.
    @Test func oneRequestGetsOneAnswerWithUpgradeOrConnect() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let upgrade = try RawSocket(port: server.port, receiveTimeout: 1)
        upgrade.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n"
                     + "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        let answers = RawSocket.split(Array(upgrade.readAll().utf8))
        #expect(answers.map(statusLine) == ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"], "\(answers)")
        #expect(answers.last?.hasSuffix("abc") == true)

        let tunnel = try RawSocket(port: server.port, receiveTimeout: 2)
        tunnel.send("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
        let refused = tunnel.readAll()
        #expect(RawSocket.split(Array(refused.utf8)).map(statusLine) == ["HTTP/1.1 400 Bad Request"], "\(refused)")
    }

    /// A second server on a port already served must not start silently and split the traffic
    /// through SO_REUSEPORT: it is refused; once the port is free again it starts.
    @Test func aPortAlreadyServedIsRefusedAndFreeAgainAfterStop() throws {
        let first = try TestServer(router: router())
        let port = first.port
        let group = EventLoopGroup(loopCount: 2)
        defer { group.shutdown() }
        let second = try HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", httpPort: port, httpsPort: nil), router: router(), group: group)
        #expect { try second.start() } throws: { ($0 as? NetError)?.description.contains("another process is listening there") == true }
        // Connections left in TIME_WAIT do not count: after the first stops, the port serves again.
        let socket = try RawSocket(port: port)
        socket.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        _ = socket.readAll()
        first.stop()
        let third = try HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", httpPort: port, httpsPort: nil), router: router(), group: group)
        try third.start()
        #expect(third.httpPort == port)
        third.shutdown()
    }

    /// A client that shuts down its write side after a complete request is answered on the async
    /// routes too, then the connection closes.
    @Test func aHalfClosedClientIsAnsweredThenClosed() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        for request in ["GET /sleep/50 HTTP/1.1\r\nHost: x\r\n\r\n",
                        "GET /sleep/20 HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n"] {
            let socket = try RawSocket(port: server.port, receiveTimeout: 5)
            socket.send(request)
            Foundation.shutdown(socket.fd, Int32(SHUT_WR))
            let answers = RawSocket.split(Array(socket.readAll().utf8))  // readAll ends at the server's close
            #expect(answers.count == request.components(separatedBy: "GET ").count - 1, "\(answers)")
            #expect(answers.first?.hasSuffix("slept 50") == true || answers.first?.hasSuffix("slept 20") == true)
        }
        // A request cut short by the half-close is not answered: the connection just closes.
        let cut = try RawSocket(port: server.port, receiveTimeout: 5)
        cut.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        Foundation.shutdown(cut.fd, Int32(SHUT_WR))
        #expect(cut.readAll() == "")
    }

    /// Bare CRLFs between requests must not restart the idle clock (a connection held forever
    /// without a request), nor a stalled TLS handshake wait out the idle timeout: both run on the
    /// request clock from their first byte.
    @Test func crlfsAndAStalledHandshakeRunOnTheRequestClock() async throws {
        let server = try TestServer(router: router(), tls: TestCerts.server) {
            $0.requestTimeoutMilliseconds = 300
            $0.idleTimeoutMilliseconds = 60_000
        }
        defer { server.stop() }
        let trickle = try RawSocket(port: server.port, receiveTimeout: 0.1)
        var sent = 0
        while sent < 50, !trickle.peerClosed() {  // 50 × 0.1 s, far under the 60 s idle clock
            trickle.send("\r\n")
            sent += 1
        }
        #expect(sent < 50, "the connection was held by CRLFs")
        let stalled = try RawSocket(port: server.tlsPort, receiveTimeout: 5)
        stalled.send([0x16, 0x03, 0x01])  // the start of a ClientHello, then nothing
        #expect(stalled.peerClosed(), "a stalled handshake is cut by the request clock, not the 60 s idle one")
        // A client that completes the handshake and a request is served as before.
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group, configuration: HTTPClientConfiguration(tls: TLSConfiguration(trustRootsFile: TestCerts.root)))
        #expect(try await client.get("https://localhost:\(server.tlsPort)/health").status == .ok)
    }

    /// A client that pipelines requests and never reads must not make the server buffer every
    /// answer: above 1 MiB unsent the connection stops reading and handling until the client takes
    /// half of it, and nothing is lost.
    @Test func aClientThatDoesNotReadStopsTheServerReadingNotGrowingIt() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let socket = try RawSocket(port: server.port, receiveTimeout: 10)
        let count = 300  // 30 MB of answers, far past the kernel's buffers
        socket.send(String(repeating: "GET /big HTTP/1.1\r\nHost: x\r\n\r\n", count: count))
        waitUntil("the server stopping for the client") { server.server.shared.writePauses.load(ordering: .relaxed) > 0 }
        #expect(server.server.connectionActivities == [.waitingForDrain])
        // Every answer arrives once the client reads: count bytes (30 MB is too much to parse as text).
        let answerBytes = "HTTP/1.1 200 OK\r\n".utf8.count
        var received = 0, answersSeen = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var carry: [UInt8] = []
        while answersSeen < count {
            let read = recv(socket.fd, &buffer, buffer.count, 0)
            if read <= 0 { break }
            received += read
            // Count status lines, including one split across two reads.
            let chunk = carry + buffer[0..<read]
            var start = chunk.startIndex
            while let mark = chunk[start...].firstIndex(of: 0x48), mark + answerBytes <= chunk.endIndex {  // "H"
                if chunk[mark..<(mark + answerBytes)].elementsEqual("HTTP/1.1 200 OK\r\n".utf8) { answersSeen += 1 }
                start = mark + 1
            }
            carry = Array(chunk.suffix(answerBytes - 1))
        }
        #expect(answersSeen == count && received > (count - 1) * 100_000, "\(answersSeen) answers, \(received) bytes")
    }

    @Test func requestsSplitAcrossManyWrites() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        for byte in "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd".utf8 {
            socket.send([byte])
        }
        #expect(socket.readResponses(1).first?.hasSuffix("abcd") == true)
    }

    @Test func clientStallingMidRequestGets408AndIsCut() throws {
        let server = try TestServer(router: router()) { $0.requestTimeoutMilliseconds = 200 }
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        let response = socket.readAll()  // within the socket's 5 s receive timeout
        #expect(statusLine(response) == "HTTP/1.1 408 Request Timeout")
    }

    @Test func tricklingClientCannotHoldTheConnection() throws {
        let server = try TestServer(router: router()) { $0.requestTimeoutMilliseconds = 300 }
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        // A byte every 50 ms: each read arrives well within 300 ms, the whole request does not.
        for byte in "GET /health HTTP/1.1\r\nHost: xxxxxxxxxxxxxxxxxxxxxxxxxxx".utf8 {
            socket.send([byte])
            usleep(50_000)
            if server.openConnections == 0 { break }
        }
        #expect(statusLine(socket.readAll()) == "HTTP/1.1 408 Request Timeout")
    }

    @Test func idleKeepAliveConnectionIsClosedQuietly() throws {
        let server = try TestServer(router: router()) { $0.idleTimeoutMilliseconds = 150 }
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(socket.readResponses(1).count == 1)
        #expect(socket.peerClosed())
    }

    @Test func connectionCloseAndHTTP10AreHonoured() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let close = try RawSocket(port: server.port)
        close.send("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(close.readAll().contains("Connection: close"))
        let old = try RawSocket(port: server.port)
        old.send("GET /health HTTP/1.0\r\n\r\n")
        #expect(statusLine(old.readAll()) == "HTTP/1.1 200 OK")
    }

    @Test func fiveHundredConcurrentKeepAliveConnections() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        // A generous bound: under a full parallel test run, one of 500 answers can take seconds.
        let sockets = try (0..<500).map { _ in try RawSocket(port: server.port, receiveTimeout: 30) }
        for round in 0..<2 {
            for socket in sockets { socket.send("GET /items/\(round) HTTP/1.1\r\nHost: x\r\n\r\n") }
            let answered = sockets.filter { $0.readResponses(1).first?.hasSuffix("item \(round)") == true }.count
            #expect(answered == 500)
        }
        #expect(server.openConnections == 500)
    }

    @Test func openingAndClosingManyConnectionsLeavesNoneBehind() throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        for _ in 0..<2000 {
            let socket = try RawSocket(port: server.port)
            socket.send("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = socket.readResponses(1)
        }
        // Every handle is closed through its close callback once the peer goes.
        waitUntil("every connection closed") { server.openConnections == 0 }
    }

    @Test func handlerErrorsBecomeJSONAnswers() throws {
        var router = Router()
        router.get("/teapot") { _, _ in throw HTTPError(HTTPStatus(code: 418, reason: "I'm a teapot"), "short and stout") }
        router.get("/boom") { _, _ in throw CocoaError(.fileNoSuchFile) }
        let server = try TestServer(router: router)
        defer { server.stop() }
        let socket = try RawSocket(port: server.port)
        socket.send("GET /teapot HTTP/1.1\r\nHost: x\r\n\r\nGET /boom HTTP/1.1\r\nHost: x\r\n\r\n")
        let responses = socket.readResponses(2)
        #expect(statusLine(responses[0]) == "HTTP/1.1 418 I'm a teapot")
        #expect(responses[0].hasSuffix(#"{"error":"short and stout"}"#))
        #expect(statusLine(responses[1]) == "HTTP/1.1 500 Internal Server Error")
    }

    @Test func reusePortSpreadsAcrossLoops() throws {
        var router = Router()
        router.get("/loop") { _, context in .text("\(context.loop.index)") }
        let server = try TestServer(router: router, loops: 2)
        defer { server.stop() }
        var seen = Set<String>()
        for _ in 0..<64 where seen.count < 2 {
            let socket = try RawSocket(port: server.port)
            socket.send("GET /loop HTTP/1.1\r\nHost: x\r\n\r\n")
            if let body = socket.readResponses(1).first?.split(separator: "\r\n\r\n").last { seen.insert(String(body)) }
        }
        #expect(seen == ["0", "1"])
    }
}
