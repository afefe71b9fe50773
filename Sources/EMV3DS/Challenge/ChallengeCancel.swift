/// Why a challenge ended early: `challengeCancel` in the CReq (from the SDK) and the RReq.
public enum ChallengeCancel: String, Sendable, CaseIterable, Codable {
    case cardholderCancelled = "01"
    /// 2.1.0: the 3DS Requestor cancelled; reserved from 2.2.0.
    case requestorCancelled = "02"
    /// 2.1.0: transaction abandoned; 2.2.0+: decoupled authentication timed out.
    case abandoned = "03"
    case timedOutAtACS = "04"
    case firstCReqNotReceived = "05"
    case transactionError = "06"
    case unknown = "07"
    /// 2.2.0 and later.
    case timedOutAtSDK = "08"

    public var since: MessageVersion { self == .timedOutAtSDK ? .v2_2_0 : .v2_1_0 }

    /// The result the ACS reports for a challenge ended this way. The specification leaves
    /// the status to the ACS; the harness's choice, documented in the README:
    /// cancels are N with reason 01, timeouts N with 14 ("timed out at the ACS"), errors U with 07.
    public var result: (transStatus: TransStatus, reason: String) {
        switch self {
        case .cardholderCancelled, .requestorCancelled: (.notAuthenticated, "01")
        case .abandoned, .timedOutAtACS, .firstCReqNotReceived, .timedOutAtSDK: (.notAuthenticated, "14")
        case .transactionError, .unknown: (.unavailable, "07")
        }
    }
}
