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
    /// 2.2.0 (and, in one reading, 2.1.0).
    case timedOutAtSDK = "08"
    /// 2.3.1: the SDK answered a CRes with an Erro (the RReq carries it as `challengeErrorReporting`).
    case erroFromSDK = "09"
    /// 2.3.1: the ACS answered a CReq with an Erro.
    case erroToSDK = "10"

    /// The code to report in `version`: one it does not know becomes its nearest older code
    /// (08 becomes 04, 09 and 10 become 06). The harness takes 08 in a 2.1.0 CReq but does
    /// not send it there, since 2.1.0's own text has no 08.
    public func available(in version: MessageVersion) -> ChallengeCancel {
        let sendable = Self.values(in: version).contains(rawValue) && !(version == .v2_1_0 && self == .timedOutAtSDK)
        if sendable { return self }
        return self == .timedOutAtSDK ? .timedOutAtACS : .transactionError
    }

    /// The values a CReq or RReq of `version` may carry. 2.1.0's text names 01-07 while a
    /// public per-version table allows 01 and 04-08 (bulletin 204): the harness accepts
    /// either. 2.2.0 reserves 02; 2.3.1 adds 09 and 10.
    public static func values(in version: MessageVersion) -> [String] {
        switch version {
        case .v2_1_0: ["01", "02", "03", "04", "05", "06", "07", "08"]
        case .v2_2_0: ["01", "03", "04", "05", "06", "07", "08"]
        case .v2_3_1: ["01", "03", "04", "05", "06", "07", "08", "09", "10"]
        }
    }

    /// The result the ACS reports for a challenge ended this way. The specification leaves
    /// the status to the ACS; the harness's choice, documented in the README:
    /// cancels are N with reason 01, timeouts N with 14 ("timed out at the ACS"), errors U with 07.
    public var result: (transStatus: TransStatus, reason: String) {
        switch self {
        case .cardholderCancelled, .requestorCancelled: (.notAuthenticated, "01")
        case .abandoned, .timedOutAtACS, .firstCReqNotReceived, .timedOutAtSDK: (.notAuthenticated, "14")
        case .transactionError, .unknown, .erroFromSDK, .erroToSDK: (.unavailable, "07")
        }
    }
}
