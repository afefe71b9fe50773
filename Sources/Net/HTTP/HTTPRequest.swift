import Foundation
public import JSON

/// An HTTP/1.1 request as received by the server or built for the client.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// The request target as sent ("/path?query").
    public var target: String
    public var headers: HTTPHeaders
    public var body: [UInt8]
    public var versionMinor: Int
    /// The value `body` was written from, when a role of this process posted it in process (never from the wire).
    public var written: WrittenJSON?

    public init(method: HTTPMethod, target: String, headers: HTTPHeaders = [:], body: [UInt8] = [], versionMinor: Int = 1) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.versionMinor = versionMinor
    }

    /// The path part of the target, without the query.
    public var path: Substring {
        guard let mark = queryMark else { return target[...] }
        return target[..<mark]
    }

    /// The query part of the target, if any.
    public var query: Substring? {
        guard let mark = queryMark else { return nil }
        return target[target.index(after: mark)...]
    }

    /// Where "?" is: looked for in the UTF-8 bytes, as routing does on every request (a
    /// Character search walks graphemes).
    private var queryMark: String.Index? { target.utf8.firstIndex(of: UInt8(ascii: "?")) }

    /// The query's values by name (the first of repeated names), percent-decoded.
    public var queryItems: [String: String] { Self.formValues(String(query ?? "")) }

    /// The fields of an `application/x-www-form-urlencoded` body (what an HTML form posts), by
    /// name as `queryItems` reads a query; nil for a body of another Content-Type.
    public var formFields: [String: String]? {
        guard headers.mediaType == "application/x-www-form-urlencoded" else { return nil }
        return Self.formValues(String(decoding: body, as: UTF8.self))
    }

    /// Every field of such a body in order, a name repeated for each value (the boxes of a
    /// multiple choice); nil for a body of another Content-Type.
    public var formPairs: [(name: String, value: String)]? {
        guard headers.mediaType == "application/x-www-form-urlencoded" else { return nil }
        return Self.formPairs(String(decoding: body, as: UTF8.self))
    }

    /// `name=value&…` as a query and a form body write it: `+` is a space, then percent-decoded
    /// (a value that does not decode is kept as sent); the first of repeated names.
    public static func formValues(_ text: String) -> [String: String] {
        var items: [String: String] = [:]
        for (name, value) in formPairs(text) where items[name] == nil { items[name] = value }
        return items
    }

    static func formPairs(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (decoded(parts[0]), parts.count > 1 ? decoded(parts[1]) : "")
        }
    }
}
