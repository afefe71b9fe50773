import Foundation

extension HTTPResponse {
    /// A JSON response of `value` (`application/json`).
    public static func json<T: Encodable>(_ value: T, status: HTTPStatus = .ok, encoder: JSONEncoder = .harness) throws -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(try encoder.encode(value)))
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
