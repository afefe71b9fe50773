public import JSON
/// An HTTP response: what a handler returns, or what the client received.
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// How much of it reaches the client: all of it, unless a test harness breaks it on purpose.
    public var delivery = Delivery.complete
    /// Not sent: what the handler says about the exchange to the server's observer (an EMV
    /// endpoint's message types and outcome, for metrics).
    public var annotation: (any Sendable)?
    /// The value `body` was written from, when the handler wrote it from one: read by a role of this process that called in
    /// process instead of parsing the body again. Not sent.
    public var written: WrittenJSON?

    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = [:], body: [UInt8] = [], delivery: Delivery = .complete) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delivery = delivery
    }

    /// Ways to fail a client on purpose, at the HTTP level.
    public enum Delivery: Sendable, Equatable {
        case complete
        /// The status line, the headers and this many bytes of the body, then the connection closes.
        case cut(keepingBodyBytes: Int)
        /// Nothing: the connection stays open, unanswered, until the client closes it or the server stops.
        case withheld
    }

    /// A plain-text response.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: .plainText, body: Array(text.utf8))
    }

    /// An HTML page (what a browser is answered: a form's target, a redirect's body); never
    /// cached, as each belongs to one transaction's step.
    public static func html(_ page: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: .html, body: Array(page.utf8))
    }

    /// A short page for the cardholder's browser: a title and a paragraph (`paragraph` is HTML,
    /// escaped already; `title` is text).
    public static func notice(title: String, paragraph: String, status: HTTPStatus = .ok) -> HTTPResponse {
        let title = Markup.escape(title)
        return html("""
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(title)</title></head>
            <body><h1>\(title)</h1><p>\(paragraph)</p></body></html>
            """, status: status)
    }

    /// The body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}
