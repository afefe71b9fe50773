/// Field rules of the app-channel challenge messages (Core specification Annex A): the CReq
/// the SDK sends inside the secure channel, and the CRes the ACS answers.
public enum ChallengeRules {
    static let ids = [
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("acsTransID", .required, .uuid),
        FieldRule("sdkTransID", .required, .uuid),
        FieldRule("messageExtension", .optional, .array),
    ]

    public static let cReq = MessageRules(.cReq, [
        FieldRule("messageType", .required, .oneOf(["CReq"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("sdkCounterStoA", .required, .numeric(3...3)),
        FieldRule("challengeDataEntry", .optional, .string(1...45)),
        FieldRule("challengeHTMLDataEntry", .optional, .string(1...256)),
        FieldRule("challengeNoEntry", .optional, .oneOf(["Y"])),
        FieldRule("oobContinue", .optional, .boolean),
        FieldRule("resendChallenge", .optional, .oneOf(["Y", "N"])),
        FieldRule("threeDSRequestorAppURL", .optional, .string(1...256), versions: FieldRule.since(.v2_2_0)),
        FieldRule("whitelistingDataEntry", .optional, .string(1...2), versions: FieldRule.since(.v2_2_0)),
    ] + ids + MessageVersion.allCases.map { version in
        FieldRule("challengeCancel", .optional, .oneOf(ChallengeCancel.allCases.filter { $0.since <= version }.map(\.rawValue)), versions: [version])
    })

    static let final = Condition.fieldEquals("challengeCompletionInd", ["Y"])
    static let ongoing = Condition.fieldEquals("challengeCompletionInd", ["N"])
    static func showing(_ types: ACSUIType...) -> Condition { .fieldEquals("acsUiType", types.map(\.rawValue)) }

    public static let cRes = MessageRules(.cRes, [
        FieldRule("messageType", .required, .oneOf(["CRes"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("acsCounterAtoS", .required, .numeric(3...3)),
        FieldRule("challengeCompletionInd", .required, .oneOf(["Y", "N"])),
        FieldRule("transStatus", .requiredWhen(final, because: "in the final CRes"), .oneOf(["Y", "N", "A", "U", "R"])),
        FieldRule("challengeInfoHeader", .optional, .string(1...45)),
        FieldRule("challengeInfoLabel", .optional, .string(1...45)),
        FieldRule("challengeInfoText", .optional, .string(1...350)),
        FieldRule("challengeInfoTextIndicator", .optional, .oneOf(["Y", "N"])),
        FieldRule("challengeAddInfo", .optional, .string(1...256)),
        FieldRule("submitAuthenticationLabel", .requiredWhen(showing(.text, .singleSelect, .multiSelect), because: "for acsUiType 01-03"), .string(1...45)),
        FieldRule("challengeSelectInfo", .requiredWhen(showing(.singleSelect, .multiSelect), because: "for acsUiType 02 and 03"), .keyLabelList),
        FieldRule("oobContinueLabel", .requiredWhen(showing(.outOfBand), because: "for acsUiType 04"), .string(1...45)),
        FieldRule("oobAppURL", .optional, .string(1...256), versions: FieldRule.since(.v2_2_0)),
        FieldRule("oobAppLabel", .optional, .string(1...45), versions: FieldRule.since(.v2_2_0)),
        FieldRule("acsHTML", .requiredWhen(showing(.html, .htmlOutOfBand), because: "for an HTML acsUiType"), .base64url(maxLength: 100_000)),
        FieldRule("acsHTMLRefresh", .optional, .base64url(maxLength: 100_000)),
        FieldRule("expandInfoLabel", .optional, .string(1...45)),
        FieldRule("expandInfoText", .optional, .string(1...256)),
        FieldRule("whyInfoLabel", .optional, .string(1...45)),
        FieldRule("whyInfoText", .optional, .string(1...256)),
        FieldRule("resendInformationLabel", .optional, .string(1...45)),
        FieldRule("issuerImage", .optional, .object),
        FieldRule("psImage", .optional, .object),
        FieldRule("whitelistingInfoText", .optional, .string(1...64), versions: FieldRule.since(.v2_2_0)),
    ] + ids + MessageVersion.allCases.map { version in
        FieldRule("acsUiType", .requiredWhen(ongoing, because: "while the challenge goes on"),
                  .oneOf(ACSUIType.allCases.filter { $0.since <= version }.map(\.rawValue)), versions: [version])
    })
}
