/// A check the harness makes of what the party under test did, with a stable id: the rows of
/// a run's report. The references name the EMV 3DS specification's messages and Annex A data
/// elements (the Core Specification's section numbers differ between versions).
public enum ConformanceCheck: String, Sendable, CaseIterable {
    case areqElements = "areq.elements"
    case areqUndefinedMembers = "areq.undefined-members"
    case threeDSCompInd = "areq.three-ds-comp-ind"
    case deviceDataDecrypts = "areq.device-data"
    case rresValid = "rres.valid"
    case creqDecrypts = "creq.decrypts"
    case creqIdentifiers = "creq.ids"
    case creqCounter = "creq.counter"
    case creqElements = "creq.elements"
    case sdkErro = "sdk.erro"
    case challengeEnd = "challenge.end"

    /// Who is judged: the SDK (through the app) or a 3DS Server talking to the DS.
    public enum Party: String, Sendable, CaseIterable {
        case sdk
        case threeDSServer = "3ds-server"
    }

    public var party: Party {
        switch self {
        case .areqElements, .areqUndefinedMembers, .threeDSCompInd, .rresValid: .threeDSServer
        case .deviceDataDecrypts, .creqDecrypts, .creqIdentifiers, .creqCounter, .creqElements, .sdkErro, .challengeEnd: .sdk
        }
    }

    public var text: String {
        switch self {
        case .areqElements: "The AReq's elements meet Annex A for its version and channel"
        case .areqUndefinedMembers: "The AReq carries no member its version and channel do not define"
        case .threeDSCompInd: "A browser AReq's threeDSCompInd says what came of the card range's 3DS Method"
        case .deviceDataDecrypts: "The SDK's device data (sdkEncData) decrypts with the DS key to a JSON object"
        case .rresValid: "The 3DS Server answers the RReq with a valid RRes"
        case .creqDecrypts: "Each CReq is a JWE that decrypts with the secure channel's key"
        case .creqIdentifiers: "Each CReq carries the transaction's messageVersion and ids"
        case .creqCounter: "sdkCounterStoA starts at 000 and rises by one with each CReq"
        case .creqElements: "Each CReq's elements meet Annex A"
        case .sdkErro: "The SDK sends the Erro the scenario's fault calls for, and no other"
        case .challengeEnd: "The SDK takes the challenge to the end the scenario expects"
        }
    }

    public var reference: String {
        switch self {
        case .areqElements: "Core Spec, Annex A: AReq data elements"
        case .areqUndefinedMembers: "Core Spec, Annex A: AReq data elements (inclusion per version and device channel)"
        case .threeDSCompInd: "Core Spec: 3DS Method; Annex A: threeDSCompInd, threeDSMethodURL"
        case .deviceDataDecrypts: "Core Spec, Annex A: sdkEncData; SDK Spec: device information"
        case .rresValid: "Core Spec, Annex A: RRes data elements"
        case .creqDecrypts: "Core Spec, Annex A: CReq; app-based secure channel (JWE, sdkReferenceNumber as PartyVInfo)"
        case .creqIdentifiers: "Core Spec, Annex A: messageVersion, threeDSServerTransID, acsTransID, sdkTransID"
        case .creqCounter: "Core Spec, Annex A: sdkCounterStoA"
        case .creqElements: "Core Spec, Annex A: CReq data elements"
        case .sdkErro: "Core Spec, Annex A: Erro message, errorCode"
        case .challengeEnd: "Core Spec: challenge flow (CReq/CRes, challengeCompletionInd, challengeCancel)"
        }
    }
}
