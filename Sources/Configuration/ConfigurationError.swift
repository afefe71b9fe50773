/// A configuration file that cannot be used, and why.
public enum ConfigurationError: Error, Equatable, CustomStringConvertible {
    case unreadable(path: String)
    case invalid(source: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path): "cannot read configuration file \(path)"
        case .invalid(let source, let reason): "\(source): \(reason)"
        }
    }
}
