/// How the ACS authenticated the cardholder. The raw value is the 2.3.1 `authenticationMethod`
/// code; `authenticationType` is the coarser code that 2.1.0 and 2.2.0 carry instead.
public enum AuthenticationMethod: String, Sendable, CaseIterable, Codable {
    case staticPasscode = "01"
    case smsOTP = "02"
    case knowledgeBased = "06"
    case outOfBandOther = "09"
    case decoupled = "12"
    /// Secure Payment Confirmation (2.3.1 only, SB 279 p.85).
    case securePaymentConfirmation = "14"

    /// `authenticationType`: 01 static, 02 dynamic, 03 out of band, 04 decoupled (2.2.0).
    public var authenticationType: String {
        switch self {
        case .staticPasscode: "01"
        // SPC is 2.3.1's, which carries authenticationMethod: a signature over a fresh challenge is dynamic.
        case .smsOTP, .knowledgeBased, .securePaymentConfirmation: "02"
        case .outOfBandOther: "03"
        case .decoupled: "04"
        }
    }
}
