import CHTTPParser

/// Reads requests from a byte stream as the server does: the same parser, limits and
/// strictness, pipelined requests in order. For tools that need the server's reading
/// without a socket (the fuzzer among them).
public final class HTTPRequestReader {
    private let parser: HTTPMessageParser
    private var completed: [HTTPRequest] = []

    /// The limits default to the server's (`ServerConfiguration`).
    public init(maxHeaderBytes: Int = ServerConfiguration().maxHeaderBytes, maxBodyBytes: Int = ServerConfiguration().maxBodyBytes) {
        parser = HTTPMessageParser(kind: HTTP_REQUEST, maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
        parser.onMessage = { [unowned self] message in
            completed.append(HTTPRequest(method: message.method, target: message.target, headers: message.headers,
                                         body: message.body, versionMinor: message.versionMinor))
        }
    }

    /// The requests `bytes` completes; throws the answer the server gives a stream it cannot read on.
    public func read(_ bytes: [UInt8]) throws(HTTPError) -> [HTTPRequest] {
        completed.removeAll()
        let failure: ParseFailure? = bytes.withUnsafeBytes { raw in
            do throws(ParseFailure) { try parser.feed(raw) } catch { return error }
            return nil
        }
        if let failure { throw failure.refusal(maxHeaderBytes: parser.maxHeaderBytes, maxBodyBytes: parser.maxBodyBytes) }
        return completed
    }
}
