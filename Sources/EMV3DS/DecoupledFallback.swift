/// Decoupled Authentication Fallback (EMV 3DS 2.3.1; EMVCo SB 279, Req 461-471): a challenge the ACS ends with
/// transStatus D in the RReq and the final CRes, after which the 3DS Server authenticates again, decoupled, by 3RI.
///
/// The ACS may fall back only when the AReq allowed it (`threeDSRequestorDecReqInd` F or B; footnote 11 of Table A.17).
/// The 3DS Server answers that RReq with `resultsStatus` 04 (Req 463/466) and, within 60 seconds of it, sends a 3RI AReq
/// with `threeRIInd` 19, `threeDSRequestorDecReqInd` Y and the challenged transaction as prior authentication
/// (method 02, its acsTransID; Req 467).
public enum DecoupledFallback {
    /// `threeDSRequestorDecReqInd` values that allow the fallback: F (fallback only), B (primary or fallback).
    public static let requestorIndicators: Set<String> = ["F", "B"]
    /// `transStatusReason` of the RReq D: 29 authentication not completed by the cardholder, 30 completed but more is needed.
    public static let reasons: Set<String> = ["29", "30"]
    /// `threeRIInd` of the 3RI AReq that performs the decoupled authentication.
    public static let threeRIInd = "19"
    /// `threeDSReqPriorAuthMethod` naming the challenged transaction: cardholder challenge occurred by ACS.
    public static let priorAuthMethod = "02"
    /// Seconds from the RReq D within which the 3DS Server sends the 3RI AReq (Req 467).
    public static let followUpWindow: Double = 60

    /// Whether an AReq of `version` with `threeDSRequestorDecReqInd` `indicator` lets the ACS fall back.
    public static func isAllowed(version: MessageVersion, indicator: String?) -> Bool {
        version >= .v2_3_1 && indicator.map(requestorIndicators.contains) ?? false
    }
}

/// `threeDSRequestorDecReqInd` (2.2.0+): whether the requestor accepts decoupled authentication; absent means N.
public enum DecoupledRequest {
    /// An ARes D only for Y, and in 2.3.1 for B (primary or fallback); F is for the fallback alone (Table A.17 footnote 10).
    public static func allowsARes(version: MessageVersion, indicator: String?) -> Bool {
        version >= .v2_3_1 ? ["Y", "B"].contains(indicator ?? "N") : indicator == "Y"
    }
}
