/// The screen an app challenge shows: `acsUiType` in the CRes (and `acsUiTemplate` in the
/// ARes's `acsRenderingType`).
public enum ACSUIType: String, Sendable, CaseIterable, Codable {
    case text = "01"
    case singleSelect = "02"
    case multiSelect = "03"
    case outOfBand = "04"
    case html = "05"
    /// HTML out-of-band (2.3.1).
    case htmlOutOfBand = "06"
    /// An information screen with a continue button (2.3.1).
    case information = "07"

    /// The first version that knows this type.
    public var since: MessageVersion {
        switch self {
        case .htmlOutOfBand, .information: .v2_3_1
        default: .v2_1_0
        }
    }

    /// The type a transaction of `version` shows instead: 06 becomes 05 and 07 becomes 04
    /// before 2.3.1, because older SDKs reject types they do not know.
    public func available(in version: MessageVersion) -> ACSUIType {
        guard since > version else { return self }
        return self == .htmlOutOfBand ? .html : .outOfBand
    }

    /// HTML screens are rendered by the ACS; the others natively by the SDK (`acsInterface`).
    public var isHTML: Bool { self == .html || self == .htmlOutOfBand }

    /// Screens the cardholder leaves by confirming elsewhere (`oobContinue`), not by typing an answer.
    public var continuesOutOfBand: Bool { self == .outOfBand || self == .information }

    /// How a screen of this type authenticates: `authenticationType` (2.1.0, 2.2.0) or `authenticationMethod` (2.3.1).
    public var authenticationMethod: AuthenticationMethod {
        switch self {
        case .text: .smsOTP
        case .singleSelect, .multiSelect: .knowledgeBased
        case .outOfBand, .htmlOutOfBand, .information: .outOfBandOther
        case .html: .staticPasscode
        }
    }
}
