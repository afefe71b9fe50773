import Net

/// The bearer token `/admin` asks for when one is configured.
struct AdminToken: Sendable {
    private let expected: [UInt8]

    init(_ token: String) { expected = Array(token.utf8) }

    /// 401 with `WWW-Authenticate: Bearer` unless the request carries the token. The
    /// comparison takes the same time wherever the first difference is.
    @Sendable func check(_ request: HTTPRequest) throws(HTTPError) {
        let challenge: HTTPHeaders = ["WWW-Authenticate": #"Bearer realm="threeds-harness admin""#]
        guard let header = request.headers["Authorization"], header.lowercased().hasPrefix("bearer ") else {
            throw HTTPError(.unauthorized, "/admin needs Authorization: Bearer <admin token>", headers: challenge)
        }
        let given = Array(header.utf8.dropFirst("bearer ".count))
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in expected.indices { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        guard difference == 0 else { throw HTTPError(.unauthorized, "the admin token is not the configured one", headers: challenge) }
    }
}
