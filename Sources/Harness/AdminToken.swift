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
        guard let header = request.headers["Authorization"], header.lowercased().hasPrefix("bearer ") else {
            throw HTTPError(.unauthorized, "/admin needs Authorization: Bearer <admin token>", headers: challenge)
        }
        guard constantTimeEquals(Array(header.utf8.dropFirst("bearer ".count)), expected) else {
            throw HTTPError(.unauthorized, "the admin token is not the configured one", headers: challenge)
        }
    }
}
