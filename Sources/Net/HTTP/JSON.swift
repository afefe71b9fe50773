import Foundation

extension HTTPResponse {
    /// A JSON response of `value` (`application/json`).
    public static func json<T: Encodable>(_ value: T, status: HTTPStatus = .ok, encoder: JSONEncoder = .harness) throws -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(try encoder.encode(value)))
    }

    /// Decodes the body as JSON.
    public func decodeJSON<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(type, from: Data(body))
    }
}

extension HTTPRequest {
    /// Decodes a JSON body; a missing or wrong Content-Type is 415, a body that does not
    /// decode is 400 with the decoder's reason.
    public func decodeJSON<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws(HTTPError) -> T {
        guard headers.mediaType == "application/json" else {
            throw HTTPError(.unsupportedMediaType, "expected Content-Type application/json, got \(headers["Content-Type"] ?? "none")")
        }
        do {
            return try decoder.decode(type, from: Data(body))
        } catch let error as DecodingError {
            throw HTTPError(.badRequest, "invalid JSON body: \(error.readableDescription)")
        } catch {
            throw HTTPError(.badRequest, "invalid JSON body: \(error)")
        }
    }

    /// A JSON request to send with the client.
    public static func json<T: Encodable>(_ method: HTTPMethod, _ target: String, _ value: T, encoder: JSONEncoder = .harness) throws -> HTTPRequest {
        HTTPRequest(method: method, target: target, headers: ["Content-Type": "application/json"], body: Array(try encoder.encode(value)))
    }
}

extension JSONEncoder {
    /// Sorted keys, no escaped slashes: stable output that diffs and logs well.
    public static var harness: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

extension DecodingError {
    /// "field.path: what was wrong", without Swift type names.
    public var readableDescription: String {
        func path(_ context: Context) -> String {
            let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? "body" : path
        }
        switch self {
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return "\(parent == "body" ? "" : parent + ".")\(key.stringValue): required member missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context)): \(context.debugDescription)"
        case .dataCorrupted(let context):
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return "\(path(context)): \(underlying ?? context.debugDescription)"
        @unknown default:
            return "\(self)"
        }
    }
}
