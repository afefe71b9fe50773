import Foundation

/// Maps method and path to a handler. Paths are literal segments or `{name}` parameters:
/// `/3ds-server/transactions/{id}`.
///
/// An unknown path is 404; a known path with another method is 405 with an `Allow` header.
public struct Router: Sendable {
    private struct Route: Sendable {
        let segments: [Segment]
        var handlers: [HTTPMethod: RouteHandler]
        /// What the registration said of the route besides its handler, by method (``tagged(_:)``).
        var tags: [HTTPMethod: any Sendable] = [:]
        /// As registered, parameters as `{name}`: what metrics name the route by (a bounded set, unlike paths).
        let pattern: String

        init(segments: [Segment], handlers: [HTTPMethod: RouteHandler]) {
            self.segments = segments
            self.handlers = handlers
            pattern = "/" + segments.map { switch $0 { case .literal(let text): text; case .parameter(let name): "{\(name)}" } }.joined(separator: "/")
        }
    }

    private enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    enum Resolution {
        case found(RouteHandler, parameters: [String: String], route: String)
        case methodNotAllowed(allowed: [HTTPMethod])
        case notFound
    }

    /// Where a request goes, `route` as metrics name it (``AnsweredRequest/unmatched`` when none matched).
    enum Routing {
        /// Refused by a guard, or no route takes it: this is the answer.
        case answer(HTTPResponse, route: String)
        case handler(RouteHandler, parameters: [String: String], route: String)
    }

    /// The guards, then the route: what a connection and an in-process call both do with a request.
    func routing(_ request: HTTPRequest) -> Routing {
        let resolution = resolve(request.method, path: request.path)
        let route = if case .found(_, _, let route) = resolution { route } else { AnsweredRequest.unmatched }
        if let refusal = refusal(of: request) { return .answer(refusal.response, route: route) }
        switch resolution {
        case .notFound:
            return .answer(HTTPError(.notFound, "no route for \(request.path)").response, route: route)
        case .methodNotAllowed(let allowed):
            let allow = allowed.map(\.rawValue).joined(separator: ", ")
            return .answer(HTTPError(.methodNotAllowed, "\(request.method) is not allowed on \(request.path); use \(allow)",
                                     headers: ["Allow": allow]).response, route: route)
        case .found(let handler, let parameters, _):
            return .handler(handler, parameters: parameters, route: route)
        }
    }

    /// Applied to every request before it is routed, from a connection or in process: what a layer that trusts some
    /// headers from some senders only removes from the others (a cluster's headers between its instances).
    public var admission: Admission?
    public typealias Admission = @Sendable (inout HTTPRequest) -> Void

    /// `request` as the admission lets it in.
    public func admitted(_ request: HTTPRequest) -> HTTPRequest {
        guard let admission else { return request }
        var request = request
        admission(&request)
        return request
    }

    /// Awaited after the handler of a request that may change state (any method but GET and HEAD)
    /// and before its answer is sent: the store's writes of what the handler did (`store.durability`).
    /// It returns the answer to send instead, when the handler's may not be given (what it did is not stored).
    public var answerGate: AnswerGate?
    public typealias AnswerGate = @Sendable (HTTPRequest) async -> HTTPResponse?

    /// The answer gate for `request`: none for one that changes nothing.
    func gate(of request: HTTPRequest) -> AnswerGate? {
        request.method == .get || request.method == .head ? nil : answerGate
    }

    /// Puts `wrap` around the handler of `method path`, registered before: a step that may answer in its
    /// place (a cluster's instance passes a request on to the one that holds its transaction). False when there is no such route.
    @discardableResult
    public mutating func wrap(_ method: HTTPMethod, _ path: String, _ wrap: (@escaping AsyncHandler) -> AsyncHandler) -> Bool {
        func wrapped(_ route: inout Route) -> Bool {
            guard let handler = route.handlers[method] else { return false }
            let inner: AsyncHandler = switch handler {
            case .sync(let handler): { request, context in try handler(request, context) }
            case .async(let handler): handler
            }
            route.handlers[method] = .async(wrap(inner))
            return true
        }
        let key = "/" + Self.split(path).joined(separator: "/")
        if var route = staticRoutes[key] {
            defer { staticRoutes[key] = route }
            return wrapped(&route)
        }
        guard let index = parameterRoutes.firstIndex(where: { $0.pattern == key }) else { return false }
        return wrapped(&parameterRoutes[index])
    }

    /// Checks run before any route under a first path segment (`/admin/...`), found or not.
    private var guards: [Substring: RequestGuard] = [:]

    /// Routes without parameters, by exact path: one dictionary look-up on the hot path.
    private var staticRoutes: [String: Route] = [:]
    private var parameterRoutes: [Route] = []

    public init() {}

    /// Registers a synchronous handler. `tag`: what a layer that wraps routes finds this one by (``tagged(_:)``).
    public mutating func on(_ method: HTTPMethod, _ path: String, tag: (any Sendable)? = nil, _ handler: @escaping SyncHandler) {
        add(method, path, .sync(handler), tag: tag)
    }

    /// Registers an async handler.
    public mutating func on(_ method: HTTPMethod, _ path: String, tag: (any Sendable)? = nil, _ handler: @escaping AsyncHandler) {
        add(method, path, .async(handler), tag: tag)
    }

    public mutating func get(_ path: String, tag: (any Sendable)? = nil, _ handler: @escaping SyncHandler) { on(.get, path, tag: tag, handler) }
    public mutating func get(_ path: String, tag: (any Sendable)? = nil, _ handler: @escaping AsyncHandler) { on(.get, path, tag: tag, handler) }
    public mutating func post(_ path: String, tag: (any Sendable)? = nil, _ handler: @escaping SyncHandler) { on(.post, path, tag: tag, handler) }
    public mutating func post(_ path: String, tag: (any Sendable)? = nil, _ handler: @escaping AsyncHandler) { on(.post, path, tag: tag, handler) }
    public mutating func delete(_ path: String, _ handler: @escaping SyncHandler) { on(.delete, path, handler) }
    public mutating func delete(_ path: String, _ handler: @escaping AsyncHandler) { on(.delete, path, handler) }

    /// Every route registered with a tag of type `Tag`, with its pattern (parameters as `{name}`): what a layer wraps by
    /// what the routes' owners said of them where they registered them (``wrap(_:_:_:)``).
    public func tagged<Tag>(_ type: Tag.Type) -> [(method: HTTPMethod, path: String, tag: Tag)] {
        (Array(staticRoutes.values) + parameterRoutes).flatMap { route in
            route.tags.compactMap { method, tag in (tag as? Tag).map { (method, route.pattern, $0) } }
        }.sorted { ($0.path, $0.method.rawValue) < ($1.path, $1.method.rawValue) }
    }

    /// Every route as "METHOD /path" (parameters as `{name}`), sorted: for an API description to be checked against.
    public var routes: [String] {
        (Array(staticRoutes.values) + parameterRoutes).flatMap { route in
            route.handlers.keys.map { "\($0.rawValue) \(route.pattern)" }
        }.sorted()
    }

    /// Runs `check` before every request whose path starts with the segment `segment`
    /// (`"admin"`: `/admin`, `/admin/pins`, `//admin/`), and answers its error instead.
    public mutating func guardPaths(under segment: String, _ check: @escaping RequestGuard) {
        guards[Substring(segment)] = check
    }

    /// Runs before every request's route, as admitted, and answers its error instead: what no route may take whatever its
    /// path (a header naming a team that is no team name).
    public var check: RequestGuard?

    /// The check's or the guard's refusal for `request`, if any; segments are compared as routing sees them.
    func refusal(of request: HTTPRequest) -> HTTPError? {
        if let check {
            do { try check(request) } catch { return error }
        }
        guard !guards.isEmpty, let first = request.path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: true).first,
              let check = guards[first] else { return nil }
        do { try check(request) } catch { return error }
        return nil
    }

    private mutating func add(_ method: HTTPMethod, _ path: String, _ handler: RouteHandler, tag: (any Sendable)?) {
        let segments = Self.split(path).map { part -> Segment in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
        }
        func set(_ route: inout Route) {
            route.handlers[method] = handler
            route.tags[method] = tag
        }
        if segments.allSatisfy({ if case .literal = $0 { true } else { false } }) {
            let key = "/" + segments.map { if case .literal(let text) = $0 { text } else { "" } }.joined(separator: "/")
            set(&staticRoutes[key, default: Route(segments: segments, handlers: [:])])
        } else if let index = parameterRoutes.firstIndex(where: { $0.segments == segments }) {
            set(&parameterRoutes[index])
        } else {
            var route = Route(segments: segments, handlers: [:])
            set(&route)
            // The most specific first, whatever the order of registration: `/admin/runs/{id}/known` before `/admin/runs/{id}/{report}`.
            let index = parameterRoutes.firstIndex { $0.segments.count == segments.count && Self.isMoreSpecific(segments, than: $0.segments) }
            parameterRoutes.insert(route, at: index ?? parameterRoutes.endIndex)
        }
    }

    /// At the first segment where the two differ in kind, `segments` has a literal and `other` a parameter.
    private static func isMoreSpecific(_ segments: [Segment], than other: [Segment]) -> Bool {
        for (mine, theirs) in zip(segments, other) {
            switch (mine, theirs) {
            case (.literal, .parameter): return true
            case (.parameter, .literal): return false
            default: continue
            }
        }
        return false
    }

    func resolve(_ method: HTTPMethod, path: Substring) -> Resolution {
        // In bytes: `count` and `hasSuffix` on a Substring walk its characters, on every request.
        let trimmed = path.utf8.count > 1 && path.utf8.last == UInt8(ascii: "/") ? path.dropLast() : path
        if let route = staticRoutes[String(trimmed)] {
            return Self.pick(route, method, parameters: [:])
        }
        let parts = Self.split(trimmed)
        for route in parameterRoutes where route.segments.count == parts.count {
            var parameters: [String: String] = [:]
            let matches = zip(route.segments, parts).allSatisfy { segment, part in
                switch segment {
                case .literal(let text): return text == part
                case .parameter(let name):
                    parameters[name] = String(part).removingPercentEncoding ?? String(part)
                    return true
                }
            }
            if matches { return Self.pick(route, method, parameters: parameters) }
        }
        return .notFound
    }

    private static func pick(_ route: Route, _ method: HTTPMethod, parameters: [String: String]) -> Resolution {
        if let handler = route.handlers[method] ?? (method == .head ? route.handlers[.get] : nil) {
            return .found(handler, parameters: parameters, route: route.pattern)
        }
        return .methodNotAllowed(allowed: route.handlers.keys.sorted { $0.rawValue < $1.rawValue })
    }

    private static func split(_ path: some StringProtocol) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true).map { Substring($0) }
    }
}
