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

    /// The failure without addresses or library messages: what a party outside may be told
    /// (the full ``description`` goes to the log).
    public var summary: String {
        switch self {
        case .invalidURL: "its URL is not usable"
        case .nameResolutionFailed: "its host name does not resolve"
        case .connectFailed: "cannot connect"
        case .connectTimedOut: "connecting timed out"
        case .tlsFailed: "the TLS handshake failed"
        case .readTimedOut(let ms): "no complete response within \(ms) ms"
        case .connectionClosed: "the connection closed before a complete response"
        case .malformedResponse: "malformed HTTP response"
        case .responseTooLarge(let limit): "response larger than \(limit) bytes"
        case .clientShutDown: "the harness is stopping"
        }
    }

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
