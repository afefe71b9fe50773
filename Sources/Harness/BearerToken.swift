import JOSE
import Net

/// The bearer token a group of paths asks for when one is configured: the admin token for
/// `/admin` and `/inspector`, the SDK configuration token for `/sdk`.
struct BearerToken: Sendable {
    private let expected: [UInt8]
    /// The paths it guards and the token's name, as a refusal tells them.
    private let paths: String
    private let name: String

    init(_ token: String, guarding paths: String = "/admin and /inspector", name: String = "admin token") {
        expected = Array(token.utf8)
        self.paths = paths
        self.name = name
    }

    /// The token of `GET /sdk/config` and the logos (`sdkConfigToken`).
    static func sdkConfig(_ token: String) -> BearerToken { BearerToken(token, guarding: "/sdk/config and /sdk/logo", name: "SDK configuration token") }

    /// 401 with `WWW-Authenticate: Bearer` unless the request carries the token, compared in
    /// time independent of where it differs.
    @Sendable func check(_ request: HTTPRequest) throws(HTTPError) {
        let challenge: HTTPHeaders = ["WWW-Authenticate": #"Bearer realm="threeds-harness \#(name)""#]
        // A browser's page and its EventSource cannot set a header: they may carry the token as
        // `access_token` in the query (RFC 6750, 2.3).
        let given: Substring.UTF8View
        if let header = request.headers["Authorization"], header.lowercased().hasPrefix("bearer ") {
            given = header.dropFirst("bearer ".count).utf8
        } else if let token = request.queryItems["access_token"] {
            given = token[...].utf8
        } else {
            throw HTTPError(.unauthorized, "\(paths) need Authorization: Bearer <\(name)> (or ?access_token=)", headers: challenge)
        }
        guard constantTimeEquals(Array(given), expected) else {
            throw HTTPError(.unauthorized, "the \(name) is not the configured one", headers: challenge)
        }
    }
}
