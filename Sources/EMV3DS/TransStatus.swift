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
    /// Challenge by Secure Payment Confirmation (2.3.1, browser).
    case securePaymentConfirmation = "S"

    /// The first version that knows this status.
    public var since: MessageVersion {
        switch self {
        case .decoupled, .informational: .v2_2_0
        case .securePaymentConfirmation: .v2_3_1
        default: .v2_1_0
        }
    }

    /// C and D: the ARes is not the outcome; an RReq brings it.
    public var awaitsResult: Bool { self == .challenge || self == .decoupled }

    /// Y and A carry an authentication value and an ECI.
    public var carriesAuthenticationValue: Bool { self == .authenticated || self == .attempted }

    /// N, R and U carry a `transStatusReason`.
    public var carriesReason: Bool { self == .notAuthenticated || self == .rejected || self == .unavailable }

    /// The status a final CRes may carry for this outcome: Y or N (and D in 2.3.1, which a
    /// challenge never ends in here); the RReq carries the precise one (A, U, R).
    public var inFinalCRes: TransStatus {
        switch self {
        case .authenticated, .attempted: .authenticated
        case .decoupled: .decoupled
        default: .notAuthenticated
        }
    }

    /// Whether `message` (ARes, RReq or a final CRes) may carry this status in `version`
    /// (Annex A, `transStatus`; Table A.17 in 2.3.1): C, I and S only in an ARes; a final CRes
    /// only Y or N, and D in 2.3.1; an RReq D only in 2.3.1.
    public func isValid(in message: MessageType, version: MessageVersion) -> Bool {
        guard since <= version else { return false }
        switch message {
        case .aRes: return true
        case .rReq: return [.authenticated, .notAuthenticated, .unavailable, .attempted, .rejected].contains(self)
            || (self == .decoupled && version >= .v2_3_1)
        case .cRes: return self == .authenticated || self == .notAuthenticated || (self == .decoupled && version >= .v2_3_1)
        default: return false
        }
    }
}
