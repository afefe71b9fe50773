public import EMV3DS

/// What the ACS does for a transaction.
public enum Outcome: Sendable, Equatable {
    /// An ARes with this final status at once (Y, A, N, R, U, or I from 2.2.0).
    case frictionless(TransStatus, reason: String?)
    /// An ARes C, then the scripted challenge over the secure channel.
    case challenge(ChallengeScript)
    /// An ARes D (2.2.0 and later), then the result by RReq.
    case decoupled(DecoupledScript)

    /// What the ACS does in a transaction of `version`.
    public enum Plan: Sendable, Equatable {
        case final(TransStatus, reason: String?)
        case challenge(ChallengeScript)
        case decoupled(DecoupledScript)

        /// "frictionless", "challenge" or "decoupled": how `/admin/scenarios` and run cases name it.
        public var flow: String {
            switch self {
            case .final: "frictionless"
            case .challenge: "challenge"
            case .decoupled: "decoupled"
            }
        }
    }

    /// The plan for `version`. A status or reason the version does not know (I or D before 2.2.0, reasons 27-30 before
    /// 2.3.1) cannot be sent: the ACS answers U with reason 07 ("invalid transaction") instead.
    public func plan(for version: MessageVersion) -> Plan {
        switch self {
        case .frictionless(let status, let reason):
            guard status.since <= version else { return .final(.unavailable, reason: "07") }
            guard status.carriesReason else { return .final(status, reason: nil) }
            if let reason, !TransStatusReason.isDefined(reason, in: version) { return .final(.unavailable, reason: "07") }
            return .final(status, reason: reason)
        case .challenge(let script):
            return .challenge(script)
        case .decoupled(let script):
            guard TransStatus.decoupled.since <= version else { return .final(.unavailable, reason: "07") }
            return .decoupled(script)
        }
    }

    /// The plan for `version` on `channel`: a 3RI authentication has no cardholder to
    /// challenge, and the ACS answers U with reason 07 instead.
    public func plan(for version: MessageVersion, on channel: DeviceChannel) -> Plan {
        let plan = plan(for: version)
        if channel == .threeRI, case .challenge = plan { return .final(.unavailable, reason: "07") }
        return plan
    }

    /// The transStatus the 3DS Server ends with in `version` when the cardholder gives the
    /// scripted answers.
    public func expectedResult(for version: MessageVersion, on channel: DeviceChannel = .app) -> TransStatus {
        switch plan(for: version, on: channel) {
        case .final(let status, _): status
        case .challenge(let script): script.expectedResult(in: version)
        case .decoupled(let script): script.status
        }
    }
}
