public import JSON

/// An error a handler throws to answer with a given status and reason.
///
/// The server renders it as `{"error": message}` with that status, so every refusal
/// tells the client why.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    public let status: HTTPStatus
    public let message: String
    public var headers: HTTPHeaders

    public init(_ status: HTTPStatus, _ message: String, headers: HTTPHeaders = [:]) {
        self.status = status
        self.message = message
        self.headers = headers
    }

    public var description: String { "\(status): \(message)" }

    /// The response a server sends for this error.
    public var response: HTTPResponse {
        var response = HTTPResponse(status: status, headers: .json,
                                    body: JSONWriter.write(.object([("error", .string(message))])))
        for (name, value) in headers { response.headers.set(name, value) }
        return response
    }
}

extension HTTPRequest {
    /// The body as JSON, or 400 saying where it is not.
    public func jsonBody() throws(HTTPError) -> JSONValue {
        do { return try JSONReader.parse(body).value } catch { throw HTTPError(.badRequest, "body is not JSON: \(error.description)") }
    }
}
