public import EventLoops
public import Logging

/// What a handler knows about its request besides the request itself.
public struct RequestContext: Sendable {
    /// Values of the path's `{name}` segments.
    public let parameters: [String: String]
    /// The loop that owns the connection; async handlers run on it.
    public let loop: EventLoop
    /// "host:port" of the peer.
    public let peer: String
    /// Subject of the client certificate when mutual TLS verified one.
    public let clientCertificateSubject: String?
    /// True when the request came over TLS.
    public let isSecure: Bool
    public let logger: Logger

    /// The path parameter `name`; throws 400 if the route has none of that name.
    public func parameter(_ name: String) throws(HTTPError) -> String {
        guard let value = parameters[name] else { throw HTTPError(.badRequest, "missing path parameter \(name)") }
        return value
    }
}

/// A check on a request before its route: throws the answer to give instead (401, 403).
public typealias RequestGuard = @Sendable (HTTPRequest) throws(HTTPError) -> Void
/// A synchronous handler: answers on the loop at once (health checks, admin reads).
public typealias SyncHandler = @Sendable (HTTPRequest, RequestContext) throws -> HTTPResponse
/// An async handler: may call other services; runs on the connection's loop.
public typealias AsyncHandler = @Sendable (HTTPRequest, RequestContext) async throws -> HTTPResponse

enum RouteHandler: Sendable {
    case sync(SyncHandler)
    case async(AsyncHandler)
}
