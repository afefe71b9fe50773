/// A check the harness makes of what the party under test did, with a stable id: the rows of
/// a run's report. The references name the EMV 3DS specification's messages and Annex A data
/// elements (the Core Specification's section numbers differ between versions).
public enum ConformanceCheck: String, Sendable, CaseIterable {
    case areqElements = "areq.elements"
    case areqUndefinedMembers = "areq.undefined-members"
    case threeDSCompInd = "areq.three-ds-comp-ind"
    case threeDSMethodData = "method.data"
    case deviceDataDecrypts = "areq.device-data"
    case deviceInformation = "areq.device-info"
    case deviceDataHeader = "areq.sdk-enc-header"
    case sdkParameters = "areq.sdk-parameters"
    case freshEphemeralKey = "areq.sdk-ephem-key"
    case aresErro = "ares.erro"
    case purchaseDate = "areq.purchase-date"
    case browserCReqForm = "creq.browser-form"
    case rresValid = "rres.valid"
    case rreqErro = "rreq.erro"
    case preparationSerial = "preq.serial-number"
    case preparationFrequency = "preq.frequency"
    case preparationElements = "preq.elements"
    case presErro = "pres.erro"
    case areqCardRange = "areq.card-range"
    case creqDecrypts = "creq.decrypts"
    case creqIdentifiers = "creq.ids"
    case creqCounter = "creq.counter"
    case creqElements = "creq.elements"
    case sdkErro = "sdk.erro"
    case challengeEnd = "challenge.end"
    case oobContinuation = "creq.oob-continue"
    case sdkTimeout = "challenge.sdk-timeout"
    case spcFollowUp = "areq.spc"
    case sdkServerSignedContent = "areq.sdk-server-signed-content"
    case rresDecoupledFallback = "rres.decoupled-fallback"
    case decoupledFallback = "areq.decoupled-fallback"

    /// Who is judged: the SDK (through the app) or a 3DS Server talking to the DS.
    public enum Party: String, Sendable, CaseIterable {
        case sdk
        case threeDSServer = "3ds-server"
    }

    public var party: Party {
        switch self {
        case .areqElements, .areqUndefinedMembers, .threeDSCompInd, .threeDSMethodData, .aresErro, .purchaseDate, .browserCReqForm, .rresValid,
             .rreqErro, .preparationSerial, .preparationFrequency, .preparationElements, .presErro, .areqCardRange, .spcFollowUp, .rresDecoupledFallback, .decoupledFallback: .threeDSServer
        case .deviceDataDecrypts, .deviceInformation, .deviceDataHeader, .sdkParameters, .freshEphemeralKey, .creqDecrypts, .creqIdentifiers, .creqCounter,
             .creqElements, .sdkErro, .challengeEnd, .oobContinuation, .sdkTimeout, .sdkServerSignedContent: .sdk
        }
    }

    public var text: String {
        switch self {
        case .areqElements: "The AReq's elements meet Annex A for its version and channel"
        case .areqUndefinedMembers: "The AReq carries no member its version and channel do not define"
        case .threeDSCompInd: "A browser AReq's threeDSCompInd says what came of the card range's 3DS Method"
        case .threeDSMethodData: "The 3DS Method's form carries threeDSMethodData: unpadded base64url of {threeDSServerTransID, threeDSMethodNotificationURL}"
        case .deviceDataDecrypts: "The SDK's device data (sdkEncData) decrypts with the DS key to a JSON object"
        case .deviceInformation: "The device data carries DV, DD, DPNA and SW as the SDK specification lays them out, each DD value a string of the platform's identifiers"
        case .deviceDataHeader: "The device data's JWE header uses the algorithms the SDK specification allows (RSA-OAEP-256 or ECDH-ES on P-256; A128CBC-HS256 or A128GCM)"
        case .freshEphemeralKey: "The SDK makes a new ephemeral key (sdkEphemPubKey) for every transaction"
        case .sdkParameters: "The SDK's parameters in the AReq (sdkAppID, sdkTransID, sdkReferenceNumber, sdkEphemPubKey, sdkEncData) meet Annex A"
        case .aresErro: "The 3DS Server answers an ARes it cannot process with the Erro the specification names, and a valid ARes or an Erro with none"
        case .purchaseDate: "The AReq's purchaseDate is in UTC (not ahead of the DS's UTC clock)"
        case .browserCReqForm: "The 3DS Server's page posts the CReq to the acsURL as creq (unpadded base64url of a valid CReq of the transaction), with threeDSSessionData when it sends one"
        case .rresValid: "The 3DS Server answers the RReq with a valid RRes that echoes its ids"
        case .rreqErro: "The 3DS Server answers an RReq it cannot process (one naming a transaction it does not have, one missing a required element) with the Erro the specification names, not an RRes"
        case .preparationSerial: "The 3DS Server's PReq carries the serialNum of the DS's last PRes, to get what changed, not every range again"
        case .preparationElements: "The PReq's elements meet Annex A for its version"
        case .preparationFrequency: "The 3DS Server caches the card ranges: a PReq at most once an hour (sooner only after a change), not one per transaction"
        case .presErro: "The 3DS Server answers a PRes it cannot process with the Erro the specification names, and a valid PRes or an Erro with none"
        case .areqCardRange: "The AReq is for a card in a range of the DS's last PRes, in a messageVersion that range offers"
        case .creqDecrypts: "Each CReq is a JWE that decrypts with the secure channel's key (a Split-SDK's in A128GCM)"
        case .creqIdentifiers: "Each CReq carries the transaction's messageVersion and ids"
        case .creqCounter: "sdkCounterStoA starts at 000 and rises by one with each CReq"
        case .creqElements: "Each CReq's elements meet Annex A"
        case .sdkErro: "The SDK sends the Erro the scenario's fault calls for, and no other"
        case .challengeEnd: "The SDK takes the challenge to the end the scenario expects"
        case .oobContinuation: "After an out-of-band screen the SDK continues with oobContinue (or cancels, or asks to resend), and sends oobContinue after no other screen"
        case .sdkTimeout: "The SDK ends a challenge not completed within the AReq's sdkMaxTimeout with Erro 402, and sends no CReq after it"
        case .sdkServerSignedContent: "A Split-SDK's AReq (sdkType 02) carries sdkServerSignedContent: a JWS (PS256 or ES256) by its server, x5c chaining to the DS CA, over the AReq's sdkReferenceNumber and sdkTransID, a splitSdkServerID and an sdkSignatureTimestamp"
        case .rresDecoupledFallback: "The 3DS Server answers an RReq D (Decoupled Authentication Fallback, 2.3.1) with resultsStatus 04"
        case .decoupledFallback: "A 2.3.1 challenge that falls back to decoupled authentication was allowed (threeDSRequestorDecReqInd F or B), and is followed within 60 s of its RReq D by a 3RI AReq (threeRIInd 19, threeDSRequestorDecReqInd Y) naming it (threeDSReqPriorAuthMethod 02, threeDSReqPriorRef its acsTransID)"
        case .spcFollowUp: "After an ARes S, the second AReq names the first (threeDSReqPriorAuthMethod 05, threeDSReqPriorRef its acsTransID) and carries the SPC assertion, which verifies, or spcIncompInd"
        }
    }

    public var reference: String {
        switch self {
        case .areqElements: "Core Spec, Annex A: AReq data elements"
        case .areqUndefinedMembers: "Core Spec, Annex A: AReq data elements (inclusion per version and device channel)"
        case .threeDSCompInd: "Core Spec: 3DS Method; Annex A: threeDSCompInd, threeDSMethodURL"
        case .threeDSMethodData: "Core Spec: 3DS Method (threeDSMethodData); Annex A: threeDSServerTransID, threeDSMethodNotificationURL"
        case .deviceDataDecrypts: "Core Spec, Annex A: sdkEncData; SDK Spec: device information"
        case .deviceInformation: "SDK Spec / EMV 3DS SDK Device Information: DV, DD (C/A/I identifiers, string values), DPNA (RE01-RE04), SW (SW01-SW05)"
        case .deviceDataHeader: "SDK Spec: device data encryption (JWE with RSA-OAEP-256, or ECDH-ES with the DS id as PartyVInfo; A128CBC-HS256 or A128GCM); Core Spec, Annex A: sdkEncData"
        case .freshEphemeralKey: "Core Spec, Annex A: sdkEphemPubKey (generated for each transaction); SDK Spec: ephemeral key pair"
        case .sdkParameters: "Core Spec, Annex A: sdkAppID, sdkTransID (UUID), sdkReferenceNumber (1-32 characters), sdkEphemPubKey (P-256 JWK); SDK Spec: AuthenticationRequestParameters"
        case .aresErro: "Core Spec: 3DS Server ARes processing (an invalid ARes is answered with an Erro to the DS); Annex A: Erro, errorCode, errorComponent, errorDetail, errorMessageType"
        case .purchaseDate: "Core Spec, Annex A: purchaseDate (date and time of the purchase, expressed in UTC)"
        case .browserCReqForm: "Core Spec: browser challenge flow (CReq posted through the cardholder's browser); Annex A: CReq, threeDSSessionData"
        case .rresValid: "Core Spec, Annex A: RRes data elements (threeDSServerTransID, acsTransID, dsTransID as in the RReq)"
        case .rreqErro: "Core Spec: 3DS Server RReq processing (an RReq that fails validation, or names a transaction the 3DS Server does not know, is answered with an Erro); Annex A: Erro, errorCode 301, 201, 203"
        case .preparationSerial: "Core Spec: PReq/PRes processing; Annex A: serialNum, cardRangeData.actionInd"
        case .preparationElements: "Core Spec: DS PReq processing; Annex A: PReq"
        case .preparationFrequency: "Core Spec: PReq/PRes processing (a PReq at least once every 24 hours, at most once an hour)"
        case .presErro: "Core Spec: 3DS Server PRes processing (a PRes that fails validation is answered with an Erro to the DS); Annex A: Erro, errorCode, errorComponent, errorDetail, errorMessageType"
        case .areqCardRange: "Core Spec: 3DS Server AReq processing (card range cache, version selection); Annex A: messageVersion, cardRangeData"
        case .creqDecrypts: "Core Spec, Annex A: CReq; app-based secure channel (JWE, sdkReferenceNumber as PartyVInfo)"
        case .creqIdentifiers: "Core Spec, Annex A: messageVersion, threeDSServerTransID, acsTransID, sdkTransID"
        case .creqCounter: "Core Spec, Annex A: sdkCounterStoA"
        case .creqElements: "Core Spec, Annex A: CReq data elements"
        case .sdkErro: "Core Spec, Annex A: Erro message, errorCode"
        case .challengeEnd: "Core Spec: challenge flow (CReq/CRes, challengeCompletionInd, challengeCancel)"
        case .oobContinuation: "Core Spec, Annex A: oobContinue (CReq after acsUiType 04), challengeCancel, resendChallenge"
        case .sdkTimeout: "Core Spec, Annex A: sdkMaxTimeout; SDK Spec: challenge timeout (Erro 402 transaction timed out, timedout reported)"
        case .sdkServerSignedContent: "Core Spec 2.3.1: 6.2.2.3 Split-SDK Server Signature, 6.2.2.4, Req 390 (Erro 308); Annex A: sdkType, splitSdkType, sdkServerSignedContent, sdkSignatureTimestamp, splitSdkServerID (EMVCo SB 279)"
        case .rresDecoupledFallback: "Core Spec 2.3.1: Req 463/466 (transStatus D in the RReq and threeDSRequestorDecReqInd F or B: resultsStatus 04); Annex A: resultsStatus (EMVCo SB 279)"
        case .decoupledFallback: "Core Spec 2.3.1: Decoupled Authentication Fallback, Req 461-471 and Req 467 (the 3RI AReq); Annex A: threeDSRequestorDecReqInd F/B, threeRIInd 19, threeDSRequestorPriorAuthenticationInfo, transStatusReason 29/30, Table A.17 footnote 11 (EMVCo SB 279)"
        case .spcFollowUp: "Core Spec 2.3.1: SPC authentication (second AReq); Annex A: threeDSRequestorAuthenticationInfo (threeDSReqAuthMethod 09), threeDSRequestorPriorAuthenticationInfo (05), spcIncompInd, spcTransData (EMVCo SB 279)"
        }
    }

    /// How to fix what failed it: what a report says beside what was seen.
    public var fix: String {
        switch self {
        case .areqElements: "Build the AReq from Annex A's table for its messageVersion and deviceChannel (threeds-harness spec AReq --version V --channel C prints it); make a new threeDSServerTransID for every AReq, also when one is sent again after a refusal."
        case .areqUndefinedMembers: "Leave out members the version and channel do not define (a 2.1.0 AReq has no 2.2.0 fields; an app AReq no browser fields)."
        case .threeDSCompInd: "Set threeDSCompInd Y only when the 3DS Method's notification came within 10 s, N when it did not, U only when the card range has no threeDSMethodURL."
        case .threeDSMethodData: "Post the form field threeDSMethodData = base64url without '=' padding (JSON {\"threeDSServerTransID\": the AReq's id, \"threeDSMethodNotificationURL\": an http(s) URL of at most 256 characters}) to the card range's threeDSMethodURL."
        case .aresErro: "Validate each ARes against Annex A before using it; when it fails, post an Erro to the DS (errorComponent S, errorMessageType ARes, the code the failure calls for, errorDetail naming the data element, the AReq's messageVersion and ids); never answer a valid ARes or an Erro with an Erro."
        case .purchaseDate: "Write purchaseDate from a UTC clock (YYYYMMDDHHMMSS in UTC), not the server's local time."
        case .browserCReqForm: "Post a form to the ARes's acsURL with creq = base64url without '=' padding (JSON of the CReq: the transaction's messageVersion, threeDSServerTransID, acsTransID, challengeWindowSize) and, if you keep state that way, threeDSSessionData (at most 1024 characters)."
        case .preparationSerial: "Keep the serialNum of each PRes and send it in the next PReq; apply the cardRangeData it returns in order (A add, M modify, D delete); after Erro 307 ask once without serialNum."
        case .preparationElements: "Send each PReq element as Annex A defines it for the PReq's messageVersion: the Erro's errorDetail names the element at fault."
        case .preparationFrequency: "Cache the card ranges and refresh them on a timer (hourly to daily) with the serialNum, not before each transaction."
        case .presErro: "Validate each PRes against Annex A before applying its card ranges; when it fails, post an Erro to the DS's PReq URL (errorComponent S, errorMessageType PRes, the code the failure calls for, errorDetail naming the data element, the PReq's messageVersion and threeDSServerTransID), keep the ranges you had and ask again later; never answer a valid PRes or an Erro with an Erro."
        case .areqCardRange: "Look the card up in the cached ranges before the AReq: send none for a card no range holds, and choose the highest messageVersion the range's ACS and DS versions both offer."
        case .rresValid: "Answer each RReq with an RRes carrying the RReq's messageVersion, threeDSServerTransID, acsTransID and dsTransID and resultsStatus, within the DS's time limit."
        case .rreqErro: "Validate each RReq against Annex A and look its threeDSServerTransID up before answering; when either fails, answer with an Erro (errorComponent S, errorMessageType RReq, the code the failure calls for: 301 for an unknown transaction, 201 for a missing element, errorDetail naming the data element) instead of an RRes, and do not take the result."
        case .deviceInformation: "Build the device data as {\"DV\": version, \"DD\": {parameter id: value}, \"DPNA\": {parameter id: RE01-RE04}, \"SW\": [SW01-SW05]}, with the identifiers and codes of the SDK specification: every DD value a string (numbers and lists as text), A identifiers only on Android, I identifiers only on iOS."
        case .deviceDataHeader: "Encrypt the device data with alg RSA-OAEP-256 to an RSA DS key or ECDH-ES (P-256 epk) to an EC one, and enc A128CBC-HS256 or A128GCM; not RSA-OAEP (SHA-1) or 256-bit content encryption."
        case .sdkParameters: "Make sdkAppID once per installation and sdkTransID per transaction as canonical UUIDs (RFC 4122), keep sdkReferenceNumber as EMVCo assigned it (at most 32 characters), and give sdkEphemPubKey as a P-256 public JWK (kty EC, crv P-256, x, y)."
        case .freshEphemeralKey: "Generate the P-256 ephemeral key pair anew in each createTransaction, never cache or reuse it: the secure channel's key is derived from it."
        case .deviceDataDecrypts: "Encrypt the device data as a JWE to the DS certificate of the card's scheme (RSA-OAEP-256, or ECDH-ES with the DS id as PartyVInfo) with A128CBC-HS256 or A128GCM, over a JSON object."
        case .creqDecrypts: "Derive the secure channel's key from the ACS's ephemeral key with sdkReferenceNumber as PartyVInfo and encrypt each CReq as a JWE with kid = acsTransID and the ARes's enc."
        case .creqIdentifiers: "Carry the ARes's messageVersion, threeDSServerTransID, acsTransID and sdkTransID in every CReq, unchanged."
        case .creqCounter: "Start sdkCounterStoA at 000 and add one for every CReq, three digits."
        case .creqElements: "Build each CReq from Annex A's CReq table for the version: one entry element per screen, challengeCancel codes the version defines."
        case .sdkErro: "Validate each CRes (decryption, counter, ids, elements); when it fails, post the Erro the failure calls for to the acsURL and end the challenge with a protocol error."
        case .challengeEnd: "Take the challenge to its end: the final CRes, the cardholder's cancel (challengeCancel), or a stop after an Erro or a runtime error; send nothing after the final CRes."
        case .oobContinuation: "On an acsUiType 04 screen, send the next CReq with oobContinue true when the cardholder returns (or challengeCancel, or resendChallenge), never challengeDataEntry; on other screens never oobContinue."
        case .sdkTimeout: "Start the challenge timer at the ARes with the timeout given (sdkMaxTimeout, at least 5 minutes); when it runs out, post Erro 402 to the acsURL, report timedout and send no further CReq."
        case .sdkServerSignedContent: "Have the Split-SDK server sign, for each transaction, the JSON {sdkReferenceNumber, sdkSignatureTimestamp (UTC YYYYMMDDHHMMSS), sdkTransID, splitSdkServerID} as a compact JWS with alg PS256 or ES256 and x5c its certificate issued under the DS CA (not the DS CA's own), and carry it unchanged as sdkServerSignedContent beside sdkType 02 and splitSdkType."
        case .rresDecoupledFallback: "When an RReq says transStatus D (reason 29 or 30) for an AReq you sent with threeDSRequestorDecReqInd F or B, answer it with resultsStatus 04 (\"3DS Server will process Decoupled Authentication in a subsequent authentication\"), not 01."
        case .decoupledFallback: "Send threeDSRequestorDecReqInd F (fallback only) or B (primary or fallback) with threeDSRequestorDecMaxTime in the 2.3.1 AReq; after an RReq D, send within 60 s a new AReq with deviceChannel 03, threeRIInd 19, threeDSRequestorDecReqInd Y, the same card and purchase, and threeDSRequestorPriorAuthenticationInfo [{threeDSReqPriorAuthMethod 02, threeDSReqPriorRef: the RReq's acsTransID, threeDSReqPriorAuthTimestamp}]; its ARes D and RReq bring the result."
        case .spcFollowUp: "Pass spcTransData and webAuthnCredList to the browser's PaymentRequest (secure-payment-confirmation) unchanged, then send a new AReq with threeDSRequestorPriorAuthenticationInfo [{threeDSReqPriorAuthMethod 05, threeDSReqPriorRef: the first acsTransID}] and either threeDSRequestorAuthenticationInfo [{threeDSReqAuthMethod 09, threeDSReqAuthData: PaymentResponse.details as JSON, binary members base64url}] or, when SPC did not complete, spcIncompInd (01 failed, 02 cancelled, 03 timed out)."
        }
    }
}
