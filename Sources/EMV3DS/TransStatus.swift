/// The outcome of an authentication: `transStatus`.
public enum TransStatus: String, Sendable, CaseIterable, Codable {
    /// Authenticated.
    case authenticated = "Y"
    /// Not authenticated.
    case notAuthenticated = "N"
    /// Could not be performed.
    case unavailable = "U"
    /// Attempts processing.
    case attempted = "A"
    /// Challenge required.
    case challenge = "C"
    /// Decoupled authentication (2.2.0 and later).
    case decoupled = "D"
    /// Rejected.
    case rejected = "R"
    /// Information only (2.2.0 and later).
    case informational = "I"

    /// The first version that knows this status.
    public var since: MessageVersion {
        switch self {
        case .decoupled, .informational: .v2_2_0
        default: .v2_1_0
        }
    }

    /// Y and A carry an authentication value and an ECI.
    public var carriesAuthenticationValue: Bool { self == .authenticated || self == .attempted }

    /// N, R and U carry a `transStatusReason`.
    public var carriesReason: Bool { self == .notAuthenticated || self == .rejected || self == .unavailable }
}
