import EventLoops
import Foundation
public import JSON
import Synchronization

/// Where this process's roles call each other without a socket. A POST to one of the server's own
/// base URLs is answered by its router in process: the same route, guards, handler, answer gate and
/// metrics as over HTTP, the same bytes and headers. A fault on the way reaches the caller as its
/// HTTP client would have seen it: an answer withheld is a read time-out after the client's limit,
/// a connection cut mid-answer is a closed connection.
public final class InProcessCalls: Sendable {
    private struct Target {
        var server: HTTPServer?
        var bases: [(prefix: String, isSecure: Bool)] = []
    }

    private let target = Mutex(Target())

    public init() {}

    /// Answers the calls with `server`, reached at `bases` (its plain and TLS base URLs, no trailing slash).
    public func serve(_ server: HTTPServer, at bases: [(prefix: String, isSecure: Bool)]) {
        target.withLock { $0 = Target(server: server, bases: bases) }
    }

    /// The answer to a POST of `body` to `url` when `url` is this process's; nil when it is not (the caller uses HTTP).
    public func post(_ url: String, body: [UInt8], written: WrittenJSON? = nil, contentType: String, headers: HTTPHeaders,
                     readTimeoutMilliseconds: UInt64) async throws(HTTPClientError) -> HTTPResponse? {
        var requestHeaders = headers
        requestHeaders.set("Content-Type", contentType)
        var request = HTTPRequest(method: .post, target: "/", headers: requestHeaders, body: body)
        request.written = written
        return try await answer(request, url: url, readTimeoutMilliseconds: readTimeoutMilliseconds)
    }

    /// The answer to `request` sent to `url` (whose path and query replace the request's target) when `url` is this
    /// process's; nil when it is not (the caller uses HTTP).
    public func answer(_ request: HTTPRequest, url: String, readTimeoutMilliseconds: UInt64) async throws(HTTPClientError) -> HTTPResponse? {
        let found = target.withLock { target -> (HTTPServer, String, Bool, String)? in
            guard let server = target.server else { return nil }
            for base in target.bases where url.hasPrefix(base.prefix) {
                let rest = String(url.dropFirst(base.prefix.count))
                // The base's own port or path, not a longer one that shares its prefix (":8080" and ":80801").
                guard rest.isEmpty || rest.hasPrefix("/") || rest.hasPrefix("?") else { continue }
                return (server, rest.isEmpty ? "/" : rest, base.isSecure, base.prefix)
            }
            return nil
        }
        guard let (server, path, isSecure, base) = found else { return nil }
        var request = request
        request.target = path
        // As the client writes it: the base's authority.
        if request.headers["Host"] == nil, let authority = base.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first {
            request.headers.set("Host", String(authority))
        }
        if request.method != .get || !request.body.isEmpty { request.headers.set("Content-Length", String(request.body.count)) }
        let response = await server.answer(request, isSecure: isSecure)
        switch response.delivery {
        case .complete:
            return response
        case .withheld:
            try? await Task.sleep(for: .milliseconds(readTimeoutMilliseconds))
            throw .readTimedOut(milliseconds: readTimeoutMilliseconds)
        case .cut:
            throw .connectionClosed(reason: "the connection closed in the middle of the answer")
        }
    }
}

extension HTTPServer {
    /// Answers `request` as a connection of this server would, without one.
    public func answer(_ request: HTTPRequest, isSecure: Bool) async -> HTTPResponse {
        let started = ContinuousClock.now
        let request = shared.router.admitted(request)
        var response: HTTPResponse
        let route: String
        switch shared.router.routing(request) {
        case .answer(let answer, let pattern):
            (response, route) = (answer, pattern)
        case .handler(let handler, let parameters, let pattern):
            route = pattern
            // Handlers run on a loop (they may set timers on it): the caller's, or the next one.
            let loop = EventLoop.current ?? group.next()
            let context = RequestContext(parameters: parameters, loop: loop, peer: "in-process", clientCertificateSubject: nil,
                                         isSecure: isSecure, logger: shared.logger)
            do {
                response = try await withTaskExecutorPreference(loop) {
                    switch handler {
                    case .sync(let handle): try handle(request, context)
                    case .async(let handle): try await handle(request, context)
                    }
                }
            } catch {
                response = shared.response(for: error, peer: "in-process")
            }
            if let gate = shared.router.gate(of: request), let replacement = await gate(request) { response = replacement }
        }
        shared.observer?.answered(AnsweredRequest(route: route, method: request.method, status: response.status,
                                                  duration: .now - started, annotation: response.annotation))
        return response
    }
}
