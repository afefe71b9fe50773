import Foundation

/// An HTTP/1.1 request as received by the server or built for the client.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// The request target as sent ("/path?query").
    public var target: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    public var versionMinor: Int

    public init(method: HTTPMethod, target: String, headers: HTTPHeaders = [:], body: [UInt8] = [], versionMinor: Int = 1) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.versionMinor = versionMinor
    }

    /// The path part of the target, without the query.
    public var path: Substring {
        guard let mark = target.firstIndex(of: "?") else { return target[...] }
        return target[..<mark]
    }

    /// The query part of the target, if any.
    public var query: Substring? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        return target[target.index(after: mark)...]
    }

    /// The query's values by name (the first of repeated names), percent-decoded.
    public var queryItems: [String: String] {
        var items: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            let name = decoded(parts[0])
            if items[name] == nil { items[name] = parts.count > 1 ? decoded(parts[1]) : "" }
        }
        return items
    }
}
