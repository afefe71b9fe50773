import EventLoops
import Foundation
import Testing
import TestSupport
@testable import Net

private func router() -> Router {
    var router = Router()
    router.get("/peer") { _, context in .text(context.peer) }
    router.post("/echo") { request, _ in HTTPResponse(headers: ["Content-Type": request.headers["Content-Type"] ?? ""], body: request.body) }
    router.get("/whoami") { _, context in .text(context.clientCertificateSubject ?? "anonymous") }
    router.get("/never") { _, _ in
        try await Task.sleep(nanoseconds: 10_000_000_000)
        return .text("late")
    }
    return router
}

@Suite("HTTP client")
struct HTTPClientTests {
    @Test func reusesKeepAliveConnections() async throws {
        // A keep-alive clock longer than any pause: under the full parallel suite, blocking tests
        // can hold the two cooperative threads for over a minute between two of these requests,
        // and the default 60 s clock then closes the connection (the cause of this test's
        // rare "2 peers" failures).
        let server = try TestServer(router: router()) { $0.idleTimeoutMilliseconds = 600_000 }
        defer { server.stop() }
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group)
        var peers = Set<String>()
        for _ in 0..<20 {
            let response = try await client.get("http://127.0.0.1:\(server.port)/peer")
            #expect(response.status == .ok)
            peers.insert(response.bodyText)
        }
        #expect(peers.count == 1)  // one connection carried all twenty requests
    }

    @Test func postsBodiesAndReadsHeaders() async throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group)
        let body = Array(repeating: UInt8(ascii: "z"), count: 200_000)
        let response = try await client.post("http://127.0.0.1:\(server.port)/echo", body: body, contentType: "application/x-test")
        #expect(response.body == body)
        #expect(response.headers["content-type"] == "application/x-test")
    }

    @Test func concurrentRequestsFromManyTasks() async throws {
        let server = try TestServer(router: router())
        defer { server.stop() }
        let group = EventLoopGroup(loopCount: 2)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group)
        let port = server.port
        let bodies = try await withThrowingTaskGroup(of: String.self) { tasks in
            for index in 0..<200 {
                tasks.addTask { try await client.post("http://127.0.0.1:\(port)/echo", body: Array("\(index)".utf8)).bodyText }
            }
            return try await tasks.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(bodies == Set((0..<200).map(String.init)))
    }

    @Test func httpsWithTrustStoreAndClientCertificate() async throws {
        var tls = TestCerts.server
        tls.trustRootsFile = TestCerts.root
        tls.requireClientCertificate = true
        let server = try TestServer(router: router(), tls: tls)
        defer { server.stop() }
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group, configuration: HTTPClientConfiguration(tls: TLSConfiguration(
            certificateChainFile: TestCerts.clientChain, privateKeyFile: TestCerts.clientKey, trustRootsFile: TestCerts.root)))
        let response = try await client.get("https://localhost:\(server.tlsPort)/whoami")
        #expect(response.bodyText.contains("CN=Harness Test Client"))
        let again = try await client.get("https://127.0.0.1:\(server.tlsPort)/whoami")  // IP SAN
        #expect(again.status == .ok)
    }

    @Test func httpsFailsAgainstAnUntrustedServer() async throws {
        let server = try TestServer(router: router(), tls: TestCerts.server)
        defer { server.stop() }
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        // Trusts the client certificate's file only: not a CA for the server.
        let client = try HTTPClient(group: group, configuration: HTTPClientConfiguration(tls: TLSConfiguration(trustRootsFile: TestCerts.clientChain)))
        await #expect {
            _ = try await client.get("https://localhost:\(server.tlsPort)/peer")
        } throws: { error in
            guard case .tlsFailed(_, let reason) = error as? HTTPClientError else { return false }
            return reason.contains("certificate verification failed")
        }
    }

    @Test func connectionRefusedIsReported() async throws {
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group)
        // A port bound and not listening, held for the whole test: refused, and no parallel test's server takes it.
        let refusing = try RefusingPort()
        let port = refusing.port
        defer { withExtendedLifetime(refusing) {} }
        await #expect(throws: HTTPClientError.connectFailed(address: "http://127.0.0.1:\(port)", reason: "connection refused")) {
            _ = try await client.get("http://127.0.0.1:\(port)/peer")
        }
    }

    // Without LoopReply the request was dropped with the stopped loop's jobs and its task waited for ever
    // ("SWIFT TASK CONTINUATION MISUSE: execute(_:url:) leaked its continuation", CI at 396ceb8).
    @Test(.timeLimit(.minutes(1))) func aRequestToALoopThatHasStoppedFailsAsShutDownInsteadOfWaitingForEver() async throws {
        let group = EventLoopGroup(loopCount: 1)
        let client = try HTTPClient(group: group)
        group.shutdown()
        await #expect(throws: HTTPClientError.clientShutDown) {
            _ = try await client.get("http://127.0.0.1:9/health")
        }
    }

    @Test func aReplyDroppedUnresumedResumesItsTaskWithTheAbandonedValue() async {
        let dropped = await LoopReply<String>.awaiting(abandoned: "abandoned") { _ in }
        #expect(dropped == "abandoned")
        let answered = await LoopReply<String>.awaiting(abandoned: "abandoned") { reply in
            reply.resume(returning: "answered")
        }
        #expect(answered == "answered")
    }

    @Test func connectTimeoutCoversAServerThatNeverAnswersTheTLSHandshake() async throws {
        let silent = SilentListener()
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group, configuration: HTTPClientConfiguration(
            tls: TLSConfiguration(trustRootsFile: TestCerts.root), connectTimeoutMilliseconds: 200))
        // Without the connect timer this would wait forever: the error proves it fired.
        await #expect(throws: HTTPClientError.connectTimedOut(address: "https://127.0.0.1:\(silent.port)", milliseconds: 200)) {
            _ = try await client.get("https://127.0.0.1:\(silent.port)/health")
        }
    }

    @Test func readTimeoutIsReported() async throws {
        let server = try TestServer(router: router()) { $0.shutdownGraceMilliseconds = 100 }
        defer { server.stop() }
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group, configuration: HTTPClientConfiguration(readTimeoutMilliseconds: 200))
        await #expect(throws: HTTPClientError.readTimedOut(milliseconds: 200)) {
            _ = try await client.get("http://127.0.0.1:\(server.port)/never")
        }
    }

    @Test func aWithheldAnswerHoldsTheConnectionAndACutOneBreaksIt() async throws {
        var router = Router()
        router.get("/withheld") { _, _ in HTTPResponse(body: Array("never sent".utf8), delivery: .withheld) }
        router.get("/cut") { _, _ in HTTPResponse(body: Array(repeating: UInt8(ascii: "x"), count: 1000), delivery: .cut(keepingBodyBytes: 500)) }
        let server = try TestServer(router: router) { $0.shutdownGraceMilliseconds = 100 }
        defer { server.stop() }
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group, configuration: HTTPClientConfiguration(readTimeoutMilliseconds: 300))
        await #expect(throws: HTTPClientError.readTimedOut(milliseconds: 300)) {
            _ = try await client.get("http://127.0.0.1:\(server.port)/withheld")
        }
        do {
            let response = try await client.get("http://127.0.0.1:\(server.port)/cut")
            Issue.record("a cut response was read whole: \(response.body.count) bytes")
        } catch {
            #expect("\(error)".contains("closed before a complete response"), "\(error)")
        }
        // The held connection is dropped once the client gave up.
        await waitUntil("the held connection dropped") { server.openConnections == 0 }
    }

    @Test func invalidURLsAreRejected() async throws {
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group)
        for url in ["ftp://x/", "http://", "http://host:99999/", "http://[::1/"] {
            await #expect(throws: HTTPClientError.invalidURL(url)) { _ = try await client.get(url) }
        }
    }

    @Test func reconnectsWhenTheServerClosedAnIdleConnection() async throws {
        let server = try TestServer(router: router()) { $0.idleTimeoutMilliseconds = 100 }
        defer { server.stop() }
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group)
        let first = try await client.get("http://127.0.0.1:\(server.port)/peer")
        await waitUntil("the server closing the idle connection") { server.openConnections == 0 }
        let second = try await client.get("http://127.0.0.1:\(server.port)/peer")
        #expect(first.status == .ok && second.status == .ok)
        #expect(first.bodyText != second.bodyText)
    }
}
