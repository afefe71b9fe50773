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
        out.reserveCapacity(128 + response.body.count + response.headers.fields.count * 32)
        out.append(contentsOf: "HTTP/1.1 \(response.status.code) \(response.status.reason)\r\n".utf8)
        for (name, value) in response.headers where !name.equalsIgnoringASCIICase("Content-Length") && !name.equalsIgnoringASCIICase("Connection") {
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: ": ".utf8)
            out.append(contentsOf: value.utf8)
            out.append(contentsOf: "\r\n".utf8)
        }
        out.append(contentsOf: "Content-Length: \(response.body.count)\r\nDate: \(date())\r\n".utf8)
        if !keepAlive { out.append(contentsOf: "Connection: close\r\n".utf8) }
        out.append(contentsOf: "\r\n".utf8)
        if includeBody { out.append(contentsOf: response.body) }
        return out
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
