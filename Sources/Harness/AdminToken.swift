import JOSE
import Net

/// The bearer token `/admin` asks for when one is configured.
struct AdminToken: Sendable {
    private let expected: [UInt8]

    init(_ token: String) { expected = Array(token.utf8) }

    /// 401 with `WWW-Authenticate: Bearer` unless the request carries the token, compared in
    /// time independent of where it differs.
    @Sendable func check(_ request: HTTPRequest) throws(HTTPError) {
        let challenge: HTTPHeaders = ["WWW-Authenticate": #"Bearer realm="threeds-harness admin""#]
        // A browser's page and its EventSource cannot set a header: they may carry the token as
        // `access_token` in the query (RFC 6750, 2.3).
        let given: Substring.UTF8View
        if let header = request.headers["Authorization"], header.lowercased().hasPrefix("bearer ") {
            given = header.dropFirst("bearer ".count).utf8
        } else if let token = request.queryItems["access_token"] {
            given = token[...].utf8
        } else {
            throw HTTPError(.unauthorized, "/admin and /inspector need Authorization: Bearer <admin token> (or ?access_token=)", headers: challenge)
        }
        guard constantTimeEquals(Array(given), expected) else {
            throw HTTPError(.unauthorized, "the admin token is not the configured one", headers: challenge)
        }
    }
}
