/// Field rules of the app-channel challenge messages (Core specification Annex A): the CReq
/// the SDK sends inside the secure channel, and the CRes the ACS answers.
public enum ChallengeRules {
    private static let v231: Set<MessageVersion> = [.v2_3_1]
    private static let v220: Set<MessageVersion> = [.v2_2_0]
    private static let until220 = FieldRule.until(.v2_2_0)

    static let ids = [
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("acsTransID", .required, .uuid),
        FieldRule("sdkTransID", .required, .uuid),
    ] + FieldRule.messageExtension

    public static let cReq = MessageRules(.cReq, [
        FieldRule("messageType", .required, .oneOf(["CReq"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("sdkCounterStoA", .required, .numeric(3...3)),
        FieldRule("challengeDataEntry", .optional, .string(1...45)),
        FieldRule("challengeDataEntryTwo", .optional, .string(1...45), versions: v231),
        FieldRule("challengeHTMLDataEntry", .optional, .string(1...256)),
        FieldRule("challengeNoEntry", .optional, .oneOf(["Y"]), versions: FieldRule.since(.v2_2_0)),
        // A JSON true up to 2.2.0; in 2.3.1 "01" (the cardholder pressed continue) or "02" (the app came back).
        FieldRule("oobContinue", .optional, .boolean, versions: until220),
        FieldRule("oobContinue", .optional, .oneOf(["01", "02"]), versions: v231),
        FieldRule("resendChallenge", .optional, .oneOf(["Y", "N"]), versions: until220),
        FieldRule("resendChallenge", .optional, .oneOf(["Y"]), versions: v231),
        FieldRule("threeDSRequestorAppURL", .optional, .string(1...256), versions: v220),
        FieldRule("threeDSRequestorAppURL", .optional, .url(maxLength: 2048), versions: v231),
        FieldRule("whitelistingDataEntry", .optional, .oneOf(["Y", "N"]), versions: v220),
        FieldRule("trustListDataEntry", .optional, .oneOf(["Y", "N"]), versions: v231),
        FieldRule("oobAppURLInd", .required, .oneOf(["01", "02", "03"]), versions: v231),
        FieldRule("oobAppStatus", .optional, .oneOf(["01"]), versions: v231),
        FieldRule("challengeAddCode", .optional, .oneOf(["Y"]), versions: v231),
        FieldRule("deviceBindingDataEntry", .optional, .oneOf(["Y", "N"]), versions: v231),
        FieldRule("infoContinueIndicator", .optional, .boolean, versions: v231),
    ] + ids + MessageVersion.allCases.map { version in
        FieldRule("challengeCancel", .optional, .oneOf(ChallengeCancel.values(in: version)), versions: [version])
    })

    /// The browser's CReq (Core specification Table A.1, browser): posted as the `creq` form
    /// field to the acsURL, base64url; no secure channel, no counter, the window size instead.
    public static let browserCReq = MessageRules(.cReq, [
        FieldRule("messageType", .required, .oneOf(["CReq"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("acsTransID", .required, .uuid),
        FieldRule("challengeWindowSize", .required, .oneOf(["01", "02", "03", "04", "05"])),
    ] + FieldRule.messageExtension)

    /// The browser's final CRes, posted as the `cres` form field to the notificationURL.
    public static let browserFinalCRes = MessageRules(.cRes, [
        FieldRule("messageType", .required, .oneOf(["CRes"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("acsTransID", .required, .uuid),
        FieldRule("challengeCompletionInd", .required, .oneOf(["Y"])),
    ] + MessageVersion.allCases.map { version in
        FieldRule("transStatus", .required, .oneOf(TransStatus.allCases.filter { $0.isValid(in: .cRes, version: version) }.map(\.rawValue)),
                  versions: [version])
    } + FieldRule.messageExtension)

    /// Why the screens' header, label and text are required up to 2.2.0 though Annex A does not require them.
    private static let sdkTestCasesExpect = "the EMVCo SDK test cases (TC_SDK_10268 and after) expect it on screens 01-03; Annex A up to 2.2.0 does not require it"

    /// Why an SDK ignores `transStatus` in a CRes that is not the final one. EMVCo's FAQ answers for the versions it
    /// still covers, 2.2.0 and later.
    private static let transStatusBeforeTheEnd = "EMVCo 3DS FAQ (Technical Questions, April 2026), Q15: transStatus is present only in the final CRes; "
        + "received in another, it \"should be ignored by the 3DS SDK as per Req 209\""

    static let final = Condition.fieldEquals("challengeCompletionInd", ["Y"])
    static let ongoing = Condition.fieldEquals("challengeCompletionInd", ["N"])
    static func showing(_ types: ACSUIType...) -> Condition { .fieldEquals("acsUiType", types.map(\.rawValue)) }

    /// What each native screen needs. Up to 2.2.0, Annex A requires the submit and continue
    /// labels; the EMVCo SDK test cases (TC_SDK_10268 and after, cited by GuavaPay's parser)
    /// also expect header, label and text on screens 01-03, and SDKs refuse a CRes without them.
    /// 2.3.1 Table A.20 requires header and text on every native screen, gives the text screen's
    /// label to `challengeEntryBox` (challengeInfoLabel stays allowed), and the information screen its own label.
    private static let screens: [FieldRule] = [
        FieldRule("challengeInfoHeader", .requiredWhen(showing(.text, .singleSelect, .multiSelect), because: "acsUiType 01-03"),
                  .string(1...45), versions: until220,
                  beyondAnnexA: sdkTestCasesExpect),
        FieldRule("challengeInfoHeader", .requiredWhen(showing(.text, .singleSelect, .multiSelect, .outOfBand, .information),
                                                       because: "acsUiType 01-04 and 07"), .string(1...45), versions: v231),
        FieldRule("challengeInfoLabel", .requiredWhen(showing(.text, .singleSelect, .multiSelect), because: "acsUiType 01-03"),
                  .string(1...45), versions: until220,
                  beyondAnnexA: sdkTestCasesExpect),
        // 2.3.1 keeps challengeInfoLabel, "CRes = OC, see Table A.20" (EMVCo SB 279 p.101), beside the text screen's new
        // challengeEntryBox.challengeDataEntryLabel: a text screen may carry both, and the harness sends both (CRes.swift).
        FieldRule("challengeInfoLabel", .requiredWhen(showing(.singleSelect, .multiSelect), because: "acsUiType 02-03"), .string(1...45), versions: v231),
        FieldRule("challengeInfoText", .requiredWhen(showing(.text, .singleSelect, .multiSelect), because: "acsUiType 01-03"),
                  .string(1...350), versions: until220,
                  beyondAnnexA: sdkTestCasesExpect),
        FieldRule("challengeInfoText", .requiredWhen(showing(.text, .singleSelect, .multiSelect, .outOfBand, .information),
                                                     because: "acsUiType 01-04 and 07"), .string(1...350), versions: v231),
        FieldRule("challengeInfoTextIndicator", .optional, .oneOf(["Y", "N"])),
        FieldRule("challengeAddInfo", .optional, .string(1...256), versions: until220),
        FieldRule("submitAuthenticationLabel", .requiredWhen(showing(.text, .singleSelect, .multiSelect), because: "acsUiType 01-03"),
                  .string(1...45), versions: until220),
        // Table A.20: not present on the out-of-band and information screens.
        FieldRule("submitAuthenticationLabel", .only(showing(.text, .singleSelect, .multiSelect), .required, where: "acsUiType 01-03"),
                  .string(1...45), versions: v231),
        FieldRule("challengeSelectInfo", .requiredWhen(showing(.singleSelect, .multiSelect), because: "acsUiType 02 and 03"), .keyLabelList),
        FieldRule("oobContinueLabel", .requiredWhen(showing(.outOfBand), because: "acsUiType 04"), .string(1...45), versions: until220),
        FieldRule("oobContinueLabel", .requiredWhen(.all([showing(.outOfBand), .not(.fieldPresent("oobAppLabel"))]),
                                                    because: "acsUiType 04 without oobAppLabel"), .string(1...45), versions: v231),
        FieldRule("oobAppURL", .optional, .string(1...256), versions: v220),
        FieldRule("oobAppURL", .optional, .url(maxLength: 2048), versions: v231),
        FieldRule("oobAppLabel", .optional, .string(1...45), versions: FieldRule.since(.v2_2_0)),
        FieldRule("acsHTML", .requiredWhen(showing(.html), because: "acsUiType 05"), .base64url(maxLength: 100_000), versions: until220),
        FieldRule("acsHTML", .requiredWhen(showing(.html, .htmlOutOfBand), because: "acsUiType 05 and 06"), .base64url(maxLength: 300_000),
                  versions: v231),
        FieldRule("acsHTMLRefresh", .optional, .base64url(maxLength: 100_000), versions: until220),
        FieldRule("expandInfoLabel", .optional, .string(1...45)),
        FieldRule("expandInfoText", .optional, .string(1...256)),
        FieldRule("whyInfoLabel", .optional, .string(1...45)),
        FieldRule("whyInfoText", .optional, .string(1...256)),
        FieldRule("resendInformationLabel", .optional, .string(1...45)),
        FieldRule("issuerImage", .optional, .object),
        FieldRule("psImage", .optional, .object),
        FieldRule("whitelistingInfoText", .optional, .string(1...64), versions: v220),
        FieldRule("trustListInfoText", .optional, .string(1...64), versions: v231),
        FieldRule("challengeAddLabel", .optional, .string(1...45), versions: v231),
        FieldRule("challengeEntryBox", .requiredWhen(showing(.text), because: "acsUiType 01"), .members([
            FieldRule("challengeDataEntryLabel", .required, .string(1...45)),
            FieldRule("challengeDataEntryKeyboardType", .optional, .oneOf(["01", "02"])),
            FieldRule("challengeDataEntryLengthMax", .optional, .numeric(1...2)),
            FieldRule("challengeDataEntryAutofill", .optional, .oneOf(["Y"])),
            FieldRule("challengeDataEntryAutofillType", .optional, .numeric(2...2)),
            FieldRule("challengeDataEntryMasking", .optional, .string(1...2)),
            FieldRule("challengeDataEntryToggle", .optional, .string(1...2)),
        ]), versions: v231),
        FieldRule("challengeEntryBoxTwo", .optional, .object, versions: v231),
        FieldRule("deviceBindingInfoText", .optional, .string(1...64), versions: v231),
        FieldRule("infoContinueLabel", .requiredWhen(showing(.information), because: "acsUiType 07"), .string(1...45), versions: v231),
        FieldRule("togglePositionInd", .optional, .oneOf(["01"]), versions: v231),
    ]

    public static let cRes = MessageRules(.cRes, [
        FieldRule("messageType", .required, .oneOf(["CRes"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("acsCounterAtoS", .required, .numeric(3...3)),
        FieldRule("challengeCompletionInd", .required, .oneOf(["Y", "N"])),
    ] + MessageVersion.allCases.flatMap { version in [
        FieldRule("transStatus", .requiredWhen(final, because: "the final CRes"),
                  .oneOf(TransStatus.allCases.filter { $0.isValid(in: .cRes, version: version) }.map(\.rawValue)), versions: [version],
                  ignoredOutsideItsCondition: version >= .v2_2_0 ? transStatusBeforeTheEnd : nil),
        FieldRule("acsUiType", .requiredWhen(ongoing, because: "a CRes that is not the final one"),
                  .oneOf(ACSUIType.allCases.filter { $0.since <= version }.map(\.rawValue)), versions: [version]),
    ] } + screens + ids)
}
