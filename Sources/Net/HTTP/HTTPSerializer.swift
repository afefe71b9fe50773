import Foundation

/// Writes HTTP/1.1 heads; the Date header is formatted once a second per loop.
struct HTTPSerializer {
    private var cachedSecond = 0
    private var cachedDate = ""

    mutating func date() -> String {
        var now = time(nil)
        if now != cachedSecond {
            cachedSecond = now
            var parts = tm()
            gmtime_r(&now, &parts)
            var buffer = [CChar](repeating: 0, count: 40)
            strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
            cachedDate = String(nulTerminated: buffer)
        }
        return cachedDate
    }

    /// The response's head and body in one buffer; `includeBody` is false for HEAD.
    mutating func serialize(_ response: HTTPResponse, keepAlive: Bool, includeBody: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        serialize(response, keepAlive: keepAlive, includeBody: includeBody, into: &out)
        return out
    }

    /// The response's head and body written over `out` (a connection's buffer, reused from answer to answer: the bytes
    /// are sent, or copied to wait for the socket, before the next answer is written).
    mutating func serialize(_ response: HTTPResponse, keepAlive: Bool, includeBody: Bool, into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        out.reserveCapacity(128 + response.body.count + response.headers.fields.count * 32)
        if response.status == .ok {
            out.append(contentsOf: Self.okStatusLine)
        } else {
            out.append(contentsOf: "HTTP/1.1 \(response.status.code) \(response.status.reason)\r\n".utf8)
        }
        for (name, value) in response.headers where !name.equalsIgnoringASCIICase("Content-Length") && !name.equalsIgnoringASCIICase("Connection") {
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: Self.contentLengthPrefix)
        Self.appendDecimal(response.body.count, to: &out)
        out.append(contentsOf: Self.datePrefix)
        out.append(contentsOf: date().utf8)
        out.append(contentsOf: Self.crlf)
        if !keepAlive { out.append(contentsOf: "Connection: close\r\n".utf8) }
        out.append(contentsOf: "\r\n".utf8)
        if includeBody { out.append(contentsOf: response.body) }
    }

    private static let okStatusLine = Array("HTTP/1.1 200 OK\r\n".utf8)
    private static let contentLengthPrefix = Array("Content-Length: ".utf8)
    private static let datePrefix = Array("\r\nDate: ".utf8)
    private static let crlf = Array("\r\n".utf8)

    private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        guard value >= 10 else { return out.append(UInt8(ascii: "0") + UInt8(value)) }
        appendDecimal(value / 10, to: &out)
        out.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// A request head and body for the client.
    static func serialize(_ request: HTTPRequest, host: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128 + request.body.count)
        out.append(contentsOf: "\(request.method.rawValue) \(request.target.isEmpty ? "/" : request.target) HTTP/1.1\r\n".utf8)
        if !request.headers.contains("Host") { out.append(contentsOf: "Host: \(host)\r\n".utf8) }
        for (name, value) in request.headers where !name.equalsIgnoringASCIICase("Content-Length") {
            out.append(contentsOf: "\(name): \(value)\r\n".utf8)
        }
        if !request.body.isEmpty || request.method == .post || request.method == .put || request.method == .patch {
            out.append(contentsOf: "Content-Length: \(request.body.count)\r\n".utf8)
        }
        out.append(contentsOf: "\r\n".utf8)
        out.append(contentsOf: request.body)
        return out
    }
}
