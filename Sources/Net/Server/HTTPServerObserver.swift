/// Told of every connection and every answer, on the connection's loop: what metrics count.
/// Calls must be quick and must not block; they are on the request path.
public protocol HTTPServerObserver: Sendable {
    func connectionOpened()
    func connectionClosed()
    func answered(_ answer: AnsweredRequest)
}

/// One request and its answer, as an observer sees it.
public struct AnsweredRequest: Sendable {
    /// The route as registered (`/3ds-server/transactions/{id}`); ``unmatched`` when none
    /// matched, ``unparsed`` for a request refused before it was read in full.
    public let route: String
    /// Nil for a request refused before its head was read.
    public let method: HTTPMethod?
    public let status: HTTPStatus
    /// From the request's dispatch to its answer; zero for one refused while being read.
    public let duration: Duration
    /// What the handler attached to its response (``HTTPResponse/annotation``).
    public let annotation: (any Sendable)?

    public init(route: String, method: HTTPMethod?, status: HTTPStatus, duration: Duration, annotation: (any Sendable)?) {
        self.route = route
        self.method = method
        self.status = status
        self.duration = duration
        self.annotation = annotation
    }

    public static let unmatched = "unmatched"
    public static let unparsed = "unparsed"
}
