/// Field rules of the ARes (Core specification Annex A), as the ACS sends it and the DS relays it.
public enum AResRules {
    static let challenge = Condition.fieldEquals("transStatus", ["C"])
    static let challengeOrDecoupled = Condition.fieldEquals("transStatus", ["C", "D"])
    // Annex A requires the proof and the reason of a payment authentication (01-PA); for 02-NPA
    // they follow DS rules, which this DS leaves optional.
    static let authenticated = Condition.all([.payment, .fieldEquals("transStatus", ["Y", "A"])])
    static let failed = Condition.all([.payment, .fieldEquals("transStatus", ["N", "U", "R"])])

    /// The `transStatus` values of each version (D and I from 2.2.0, S from 2.3.1), for the
    /// messages that carry it.
    static func transStatus(in message: MessageType) -> [FieldRule] {
        MessageVersion.allCases.map { version in
            FieldRule("transStatus", .required, .oneOf(TransStatus.allCases.filter { $0.isValid(in: message, version: version) }.map(\.rawValue)),
                      versions: [version])
        }
    }

    /// Fields an ARes and an RReq share: the outcome and its proof, and the list statuses.
    static let outcome: [FieldRule] = MessageVersion.allCases.map { version in
        FieldRule("transStatusReason", .requiredWhen(failed, because: "a payment with transStatus N, U or R"),
                  .oneOf(TransStatusReason.codes(in: version)), versions: [version])
    } + [
        FieldRule("transStatusReasonInfo", .optional, .string(1...256), versions: [.v2_3_1]),
        FieldRule("authenticationValue", .requiredWhen(authenticated, because: "a payment with transStatus Y or A"), .string(28...28),
                  versions: FieldRule.until(.v2_2_0)),
        // 2.3.1 leaves the length to the payment system (at most 4000 characters).
        FieldRule("authenticationValue", .requiredWhen(authenticated, because: "a payment with transStatus Y or A"), .string(1...4000),
                  versions: [.v2_3_1]),
        // eci is "DS-specific": this DS's rule is the payment schemes', an ECI with every Y and A.
        // Table A.1: 2 characters, "Payment System-specific" values: not only digits (Mastercard's test platform sent "N0").
        FieldRule("eci", .requiredWhen(authenticated, because: "a payment with transStatus Y or A (this DS's rule)"), .string(2...2)),
        FieldRule("whiteListStatus", .optional, .oneOf(["Y", "N", "E", "P", "R", "U"]), versions: [.v2_2_0]),
        FieldRule("whiteListStatusSource", .requiredWhen(.fieldPresent("whiteListStatus"), because: "whiteListStatus"),
                  .oneOf(["01", "02", "03"]), versions: [.v2_2_0]),
        FieldRule("trustListStatus", .optional, .oneOf(["Y", "N", "E", "P", "R", "U"]), versions: [.v2_3_1]),
        FieldRule("trustListStatusSource", .requiredWhen(.fieldPresent("trustListStatus"), because: "trustListStatus"),
                  .oneOf(["01", "02", "03"]), versions: [.v2_3_1]),
        FieldRule("deviceBindingStatus", .optional, .oneOf(["01", "02", "03", "04", "05", "11", "12", "13", "14", "15"]), versions: [.v2_3_1]),
        FieldRule("deviceBindingStatusSource", .requiredWhen(.fieldPresent("deviceBindingStatus"), because: "deviceBindingStatus"),
                  .oneOf(["01", "02", "03"]), versions: [.v2_3_1]),
    ] + FieldRule.messageExtension

    /// `cardholderInfo` in 2.3.1: an object, in the ARes and the RReq.
    static let cardholderInfo = FieldFormat.members([
        FieldRule("text", .required, .string(1...128)),
        FieldRule("issuerImage", .optional, .url(maxLength: 256)),
        FieldRule("paymentSystemImage", .optional, .url(maxLength: 256)),
    ])

    /// `spcTransData` (Table A.28; the members as clearhaus/3DSv2-api-documentation's 2.3.1 table has them, EMVCo's
    /// bulletin SB 279 does not replicate the table): what the page passes to SPC. Either payee member may stand alone.
    static let spcTransData = FieldFormat.members([
        FieldRule("challenge", .required, .base64url(maxLength: 100)),
        FieldRule("currency", .required, .string(3...3)),
        FieldRule("value", .required, .string(1...40)),
        FieldRule("displayName", .required, .string(1...40)),
        FieldRule("icon", .required, .string(1...2048)),
        FieldRule("timeout", .required, .numeric(5...6)),
        FieldRule("payeeName", .optional, .string(1...40)),
        FieldRule("payeeOrigin", .optional, .url(maxLength: 2048)),
        FieldRule("challengeInfoText", .optional, .string(1...350)),
    ])

    /// `broadInfo` in the AReq and the ARes, "DS specific" in every version. Up to 2.2.0 Table A.1 defines it as
    /// unstructured information, a JSON object of the sender's choosing: EMVCo's 2.1.0 sample AReq carries
    /// `{"message": "TLS 1.x will be turned off starting summer 2019"}` (Tests/EMV3DSTests/ThirdParty). 2.3.1 gives it
    /// a structure of its own (``broadcastInformation``).
    static func broadInfo() -> [FieldRule] {
        [FieldRule("broadInfo", .optional, .object, versions: FieldRule.until(.v2_2_0)),
         FieldRule("broadInfo", .optional, broadcastInformation, versions: [.v2_3_1])]
    }

    /// 2.3.1's BroadcastInformation (Table A.27; SB 279 does not replicate the table): the members as
    /// clearhaus/3DSv2-api-documentation's broadcastinformation_231 table has them.
    public static let broadcastInformation = FieldFormat.members([
        FieldRule("category", .required, .oneOf(["01", "02", "03", "04", "05", "06"])),
        FieldRule("description", .optional, .string(1...4000)),
        FieldRule("expDate", .optional, .numeric(8...8)),
        FieldRule("recipients", .required, .arrayOf(.oneOf(["01", "02", "03", "04"]), count: 1...3)),
        FieldRule("severity", .required, .oneOf(["01", "02", "03", "04"])),
        FieldRule("source", .required, .oneOf(["01", "02", "03"])),
    ])

    /// The 2.3.1 members of an ARes that say more about its outcome, which a scenario may script (`outcomeFields`): the
    /// list statuses (their source is the ACS's, 03), the information for the cardholder and for the other parties.
    public static let outcomeFieldNames = ["deviceBindingStatus", "trustListStatus", "cardholderInfo", "broadInfo", "transStatusReasonInfo"]

    /// `webAuthnCredList` (SB 279 p.143): 1-10 objects, each a relying party and one credential id, base64url.
    static let webAuthnCredList = FieldFormat.arrayOf(.members([
        FieldRule("rpID", .required, .string(1...2048)),
        FieldRule("credentialIds", .required, .base64url(maxLength: 1000)),
    ]), count: 1...10)

    /// `acsRenderingType` (Table A.14): how the ACS renders the challenge.
    static let renderingType = FieldFormat.members([
        FieldRule("acsInterface", .required, .oneOf(["01", "02"])),
        FieldRule("acsUiTemplate", .required, .oneOf(["01", "02", "03", "04", "05"]), versions: FieldRule.until(.v2_2_0)),
        FieldRule("acsUiTemplate", .required, .oneOf(["01", "02", "03", "04", "05", "06", "07"]), versions: [.v2_3_1]),
        FieldRule("deviceUserInterfaceMode", .required, .oneOf(["01", "02", "03", "04"]), versions: [.v2_3_1]),
    ])

    public static let rules = MessageRules(.aRes, [
        FieldRule("messageType", .required, .oneOf(["ARes"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("acsTransID", .required, .uuid),
        FieldRule("dsTransID", .required, .uuid),
        FieldRule("sdkTransID", .only(.app, .required, where: "the app channel"), .uuid),
        FieldRule("acsReferenceNumber", .required, .string(1...32)),
        FieldRule("dsReferenceNumber", .required, .string(1...32)),
        FieldRule("acsOperatorID", .optional, .string(1...32)),
        FieldRule("acsChallengeMandated", .requiredWhen(challenge, because: "transStatus C"), .oneOf(["Y", "N"]), versions: [.v2_1_0]),
        FieldRule("acsChallengeMandated", .requiredWhen(challengeOrDecoupled, because: "transStatus C or D"), .oneOf(["Y", "N"]),
                  versions: FieldRule.since(.v2_2_0)),
        FieldRule("acsRenderingType", .only(.app, .requiredWhen(challenge, because: "transStatus C"), where: "the app channel"), renderingType),
        FieldRule("acsSignedContent", .only(.app, .requiredWhen(challenge, because: "transStatus C"), where: "the app channel"),
                  .base64url(maxLength: 64_000)),
        // The app finds the acsURL inside acsSignedContent; only the browser gets it here.
        FieldRule("acsURL", .only(.browser, .requiredWhen(challenge, because: "transStatus C"), where: "the browser channel"),
                  .url(maxLength: 2048)),
        FieldRule("acsDecConInd", .requiredWhen(.fieldEquals("transStatus", ["D"]), because: "transStatus D"), .oneOf(["Y", "N"]),
                  versions: FieldRule.since(.v2_2_0)),
        FieldRule("cardholderInfo", .optional, .string(1...128), versions: [.v2_1_0]),
        FieldRule("cardholderInfo", .requiredWhen(.fieldEquals("acsDecConInd", ["Y"]), because: "acsDecConInd Y"), .string(1...128), versions: [.v2_2_0]),
        FieldRule("cardholderInfo", .requiredWhen(.fieldEquals("acsDecConInd", ["Y"]), because: "acsDecConInd Y"), cardholderInfo, versions: [.v2_3_1]),
    ] + broadInfo() + [
        FieldRule("deviceInfoRecognisedVersion", .only(.app, .required, where: "the app channel"), .string(3...64), versions: [.v2_3_1]),
        FieldRule("threeDSRequestorAppURLInd", .only(.app, .required, where: "the app channel"), .oneOf(["Y", "N"]), versions: [.v2_3_1]),
        FieldRule("cardSecurityCodeStatus", .optional, .oneOf(["Y", "N", "U"]), versions: [.v2_3_1]),
        FieldRule("cardSecurityCodeStatusSource", .requiredWhen(.fieldPresent("cardSecurityCodeStatus"), because: "cardSecurityCodeStatus"),
                  .oneOf(["01", "02"]), versions: [.v2_3_1]),
        FieldRule("transChallengeExemption", .optional, .oneOf(["05", "08", "10", "11", "79"]), versions: [.v2_3_1]),
        FieldRule("spcTransData", .only(.browser, .requiredWhen(.fieldEquals("transStatus", ["S"]), because: "transStatus S"),
                                        where: "the browser channel"), spcTransData, versions: [.v2_3_1]),
        FieldRule("webAuthnCredList", .only(.browser, .requiredWhen(.fieldEquals("transStatus", ["S"]), because: "transStatus S"),
                                            where: "the browser channel"), webAuthnCredList, versions: [.v2_3_1]),
        // authenticationType (01 static, 02 dynamic, 03 OOB, 04 decoupled from 2.2.0) became
        // authenticationMethod in 2.3.1: a list of finer codes.
        FieldRule("authenticationType", .requiredWhen(challenge, because: "transStatus C"), .oneOf(["01", "02", "03"]), versions: [.v2_1_0]),
        FieldRule("authenticationType", .requiredWhen(challengeOrDecoupled, because: "transStatus C or D"), .oneOf(["01", "02", "03", "04"]),
                  versions: [.v2_2_0]),
        FieldRule("authenticationMethod", .requiredWhen(challengeOrDecoupled, because: "transStatus C or D"),
                  .arrayOf(.numeric(2...2), count: 1...99), versions: [.v2_3_1]),
    ] + transStatus(in: .aRes) + outcome)
}
