/// Scheme, host and port of a URL: what a pooled connection is for.
struct Endpoint: Hashable, Sendable, CustomStringConvertible {
    let secure: Bool
    let host: String
    let port: Int

    var description: String { "\(secure ? "https" : "http")://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// Splits "https://host:port/path?query" into the endpoint and the request target.
    static func parse(_ url: String) throws(HTTPClientError) -> (Endpoint, target: String) {
        let secure: Bool
        let rest: Substring
        if url.hasPrefix("https://") {
            secure = true
            rest = url.dropFirst(8)
        } else if url.hasPrefix("http://") {
            secure = false
            rest = url.dropFirst(7)
        } else {
            throw .invalidURL(url)
        }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.isEmpty { target = "/" } else if target.hasPrefix("?") { target = "/" + target }
        var host = authority
        var port = secure ? 443 : 80
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .invalidURL(url) }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                guard let value = Int(after.dropFirst()) else { throw .invalidURL(url) }
                port = value
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            guard let value = Int(authority[authority.index(after: colon)...]) else { throw .invalidURL(url) }
            port = value
        }
        guard !host.isEmpty, (1...65535).contains(port) else { throw .invalidURL(url) }
        return (Endpoint(secure: secure, host: String(host), port: port), target)
    }
}
