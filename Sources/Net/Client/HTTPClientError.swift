/// Why a client request failed, one case per failure a caller may handle differently.
public enum HTTPClientError: Error, Equatable, CustomStringConvertible {
    case invalidURL(String)
    case nameResolutionFailed(host: String, reason: String)
    case connectFailed(address: String, reason: String)
    case connectTimedOut(address: String, milliseconds: UInt64)
    case tlsFailed(address: String, reason: String)
    case readTimedOut(milliseconds: UInt64)
    case connectionClosed(reason: String)
    case malformedResponse(String)
    case responseTooLarge(limit: Int)
    case clientShutDown

    public var description: String {
        switch self {
        case .invalidURL(let url): "invalid URL \(url) (expected http:// or https://host[:port]/path)"
        case .nameResolutionFailed(let host, let reason): "cannot resolve \(host): \(reason)"
        case .connectFailed(let address, let reason): "cannot connect to \(address): \(reason)"
        case .connectTimedOut(let address, let ms): "connecting to \(address) took more than \(ms) ms"
        case .tlsFailed(let address, let reason): "TLS with \(address) failed: \(reason)"
        case .readTimedOut(let ms): "no complete response within \(ms) ms"
        case .connectionClosed(let reason): "connection closed before a complete response: \(reason)"
        case .malformedResponse(let reason): "malformed response: \(reason)"
        case .responseTooLarge(let limit): "response larger than \(limit) bytes"
        case .clientShutDown: "the HTTP client is shut down"
        }
    }
}
