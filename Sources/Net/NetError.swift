import CLibUV

/// Failures of the network layer, each with what went wrong in words.
public enum NetError: Error, Equatable, CustomStringConvertible {
    case invalidAddress(String)
    case bindFailed(address: String, reason: String)
    case system(operation: String, reason: String)
    case tls(String)

    static func uv(_ operation: String, _ code: Int32) -> NetError {
        .system(operation: operation, reason: String(cString: uv_strerror(code)))
    }

    public var description: String {
        switch self {
        case .invalidAddress(let address): "invalid address \(address) (expected a numeric IPv4/IPv6 host and a port)"
        case .bindFailed(let address, let reason): "cannot listen on \(address): \(reason)"
        case .system(let operation, let reason): "\(operation) failed: \(reason)"
        case .tls(let reason): "TLS: \(reason)"
        }
    }
}

extension String {
    /// A string from a C buffer that holds a NUL-terminated UTF-8 string.
    init(nulTerminated buffer: [CChar]) {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        self = String(decoding: bytes, as: UTF8.self)
    }
}
