/// Field rules of the AReq (Core specification Annex A, Table A.1), for the two legs it travels:
/// 3DS Server to DS (with `sdkEncData`) and DS to ACS (with `deviceInfo` and the DS's fields).
///
/// Conditions the receiver cannot check ("required if available", "unless a regional mandate
/// restricts", "based on DS rules") are optional here: a harness that refused them would be
/// stricter than the specification.
public enum AReqRules {
    /// The AReq's elements the SDK makes (the EMVCo SDK's AuthenticationRequestParameters), which the
    /// 3DS Server passes on: a violation among them is the SDK's too (`areq.sdk-parameters`).
    public static let sdkParameters: Set<String> = ["sdkAppID", "sdkTransID", "sdkReferenceNumber", "sdkEphemPubKey", "sdkEncData"]

    private static let v210: Set<MessageVersion> = [.v2_1_0]
    private static let v220: Set<MessageVersion> = [.v2_2_0]
    private static let v231: Set<MessageVersion> = [.v2_3_1]
    private static let since220 = FieldRule.since(.v2_2_0)
    private static let until220 = FieldRule.until(.v2_2_0)

    private static let appOrBrowser = Condition.channel([.app, .browser])
    private static let javascript = Condition.fieldIsTrue("browserJavascriptEnabled")

    private static func app(_ name: String, _ presence: Presence, _ format: FieldFormat,
                            versions: Set<MessageVersion> = Set(MessageVersion.allCases)) -> FieldRule {
        FieldRule(name, .only(.app, presence, where: "the app channel (deviceChannel 01)"), format, versions: versions)
    }

    private static func app(_ name: String, _ format: FieldFormat, versions: Set<MessageVersion> = Set(MessageVersion.allCases)) -> FieldRule {
        app(name, .required, format, versions: versions)
    }

    private static func browser(_ name: String, _ presence: Presence, _ format: FieldFormat,
                                versions: Set<MessageVersion> = Set(MessageVersion.allCases)) -> FieldRule {
        FieldRule(name, .only(.browser, presence, where: "the browser channel (deviceChannel 02)"), format, versions: versions)
    }

    private static func browser(_ name: String, _ format: FieldFormat, versions: Set<MessageVersion> = Set(MessageVersion.allCases)) -> FieldRule {
        browser(name, .required, format, versions: versions)
    }

    /// Browser fields that 2.1.0 requires and 2.2.0 requires only when JavaScript runs.
    private static func browserScript(_ name: String, _ format: FieldFormat, versions: Set<MessageVersion> = Set(MessageVersion.allCases)) -> [FieldRule] {
        [browser(name, .required, format, versions: versions.intersection(v210)),
         browser(name, .requiredWhen(javascript, because: "browserJavascriptEnabled true"), format, versions: versions.subtracting(v210))]
    }

    private static func payment(_ name: String, _ format: FieldFormat) -> FieldRule {
        FieldRule(name, .requiredWhen(.payment, because: "a payment authentication (messageCategory 01)"), format)
    }

    /// When a non-payment authentication carries the purchase too: a recurring or instalment
    /// setup, and (2.2.0 bulletin 214, 2.3.1) the 3RI cases that charge.
    private static let purchaseNeeded: [MessageVersion: Condition] = [
        .v2_1_0: .any([.payment, .fieldEquals("threeDSRequestorAuthenticationInd", ["02", "03"])]),
        .v2_2_0: .any([.payment, .fieldEquals("threeDSRequestorAuthenticationInd", ["02", "03"]),
                       .all([.threeRI, .fieldEquals("threeRIInd", ["01", "02", "06", "07", "08", "09", "11"])])]),
        .v2_3_1: .any([.payment, .fieldEquals("threeDSRequestorAuthenticationInd", ["02", "03", "07", "08", "09"]),
                       .all([.threeRI, .fieldEquals("threeRIInd", ["01", "02", "06", "07", "08", "09", "11", "15"])])]),
    ]

    private static func purchase(_ name: String, _ format: FieldFormat) -> [FieldRule] {
        MessageVersion.allCases.map { version in
            let presence = Presence.requiredWhen(purchaseNeeded[version] ?? .payment, because: "a payment, or a recurring, instalment or charging 3RI authentication")
            // 2.1.0 has no purchase in 3RI, which is non-payment only there.
            return FieldRule(name, version == .v2_1_0 ? .only(appOrBrowser, presence, where: "app and browser") : presence, format, versions: [version])
        }
    }

    /// A recurring or instalment setup; from 2.2.0 (bulletin 214) also the recurring and instalment 3RI.
    private static let recurringSetup210 = Condition.fieldEquals("threeDSRequestorAuthenticationInd", ["02", "03"])
    private static let recurringSetup = Condition.any([recurringSetup210, .all([.threeRI, .fieldEquals("threeRIInd", ["01", "02"])])])

    /// `recurringExpiry` and `recurringFrequency`: required for a recurring setup up to 2.2.0;
    /// 2.3.1 ties them to an end date and to `recurringInd`, which the receiver cannot always check.
    private static func recurringTerm(_ name: String, _ format: FieldFormat) -> [FieldRule] {
        [FieldRule(name, .requiredWhen(recurringSetup210, because: "a recurring or instalment authentication"), format, versions: v210),
         FieldRule(name, .requiredWhen(recurringSetup, because: "a recurring or instalment authentication"), format, versions: v220),
         FieldRule(name, .optional, format, versions: v231)]
    }

    private static func codes(_ range: ClosedRange<Int>) -> [String] { range.map { $0 < 10 ? "0\($0)" : "\($0)" } }

    /// `deviceRenderOptions` (Table A.13; A.15 in 2.3.1).
    private static let deviceRenderOptions = FieldFormat.members([
        FieldRule("sdkInterface", .required, .oneOf(["01", "02", "03"])),
        FieldRule("sdkUiType", .required, .arrayOf(.oneOf(codes(1...5)), count: 1...5), versions: until220),
        FieldRule("sdkUiType", .required, .arrayOf(.oneOf(codes(1...7)), count: 1...7), versions: v231),
        FieldRule("sdkAuthenticationType", .optional, .arrayOf(.numeric(2...2), count: 1...99), versions: v231),
    ])

    private static let listStatuses = ["Y", "N"]  // the only list statuses an AReq may carry

    /// Fields common to both legs.
    static let common: [FieldRule] = [
        FieldRule("messageType", .required, .oneOf(["AReq"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("messageCategory", .required, .oneOf(["01", "02"])),
        FieldRule("deviceChannel", .required, .oneOf(["01", "02", "03"])),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("threeDSServerRefNumber", .required, .string(1...32)),
        FieldRule("threeDSServerOperatorID", .optional, .string(1...32)),
        FieldRule("threeDSServerURL", .only(appOrBrowser, .required, where: "app and browser"), .url(maxLength: 2048), versions: v210),
        FieldRule("threeDSServerURL", .required, .url(maxLength: 2048), versions: since220),
        FieldRule("threeDSRequestorID", .required, .string(1...35)),
        FieldRule("threeDSRequestorName", .required, .string(1...40)),
        FieldRule("threeDSRequestorURL", .required, .url(maxLength: 2048), versions: until220),
        // The requestor's web site: 2.3.1's Fully Qualified URL is https (SB 279 p.16; clearhaus's 2.3.1 AReq table: urlHttps).
        FieldRule("threeDSRequestorURL", .required, .httpsURL(maxLength: 2048), versions: v231),
        FieldRule("threeDSRequestorAuthenticationInd", .only(appOrBrowser, .required, where: "app and browser"), .oneOf(codes(1...6)), versions: v210),
        FieldRule("threeDSRequestorAuthenticationInd", .only(appOrBrowser, .required, where: "app and browser"), .oneOf(codes(1...7)), versions: v220),
        FieldRule("threeDSRequestorAuthenticationInd", .only(appOrBrowser, .required, where: "app and browser"), .oneOf(codes(1...10)), versions: v231),
        FieldRule("threeDSRequestorAuthenticationInfo", .only(appOrBrowser, .optional, where: "app and browser"), .object, versions: until220),
        FieldRule("threeDSRequestorAuthenticationInfo", .optional, .arrayOf(.object, count: 1...3), versions: v231),
        FieldRule("threeDSRequestorChallengeInd", .only(appOrBrowser, .optional, where: "app and browser"), .oneOf(codes(1...4)), versions: v210),
        FieldRule("threeDSRequestorChallengeInd", .only(appOrBrowser, .optional, where: "app and browser"), .oneOf(codes(1...9)), versions: v220),
        FieldRule("threeDSRequestorChallengeInd", .optional, .arrayOf(.oneOf(codes(1...14)), count: 1...2), versions: v231),
        FieldRule("threeDSRequestorPriorAuthenticationInfo", .optional, .object, versions: until220),
        FieldRule("threeDSRequestorPriorAuthenticationInfo", .optional, .arrayOf(.object, count: 1...3), versions: v231),
        FieldRule("threeDSReqAuthMethodInd", .optional, .oneOf(["01", "02", "03"]), versions: v220),
        FieldRule("threeDSRequestorDecReqInd", .optional, .oneOf(["Y", "N"]), versions: v220),
        FieldRule("threeDSRequestorDecReqInd", .optional, .oneOf(["Y", "N", "F", "B"]), versions: v231),
        FieldRule("threeDSRequestorDecMaxTime", .requiredWhen(.fieldEquals("threeDSRequestorDecReqInd", ["Y"]), because: "threeDSRequestorDecReqInd Y"),
                  .numeric(1...5), versions: v220),
        FieldRule("threeDSRequestorDecMaxTime", .requiredWhen(.fieldEquals("threeDSRequestorDecReqInd", ["Y", "F", "B"]),
                                                              because: "threeDSRequestorDecReqInd Y, F or B"), .numeric(5...5), versions: v231),
        // 3DS Requestor Initiated: non-payment only in 2.1.0, payment too from 2.2.0.
        FieldRule("threeRIInd", .only(.all([.threeRI, .category([.nonPayment])]), .required, where: "3RI non-payment (deviceChannel 03)"),
                  .oneOf(codes(1...5)), versions: v210),
        FieldRule("threeRIInd", .only(.threeRI, .required, where: "3RI (deviceChannel 03)"), .oneOf(codes(1...12)), versions: v220),
        FieldRule("threeRIInd", .only(.threeRI, .required, where: "3RI (deviceChannel 03)"), .oneOf(codes(1...19)), versions: v231),

        FieldRule("acctNumber", .required, .numeric(13...19)),
        FieldRule("acctType", .optional, .oneOf(["01", "02", "03"])),
        FieldRule("acctID", .optional, .string(1...64)),
        FieldRule("acctInfo", .optional, .object),
        FieldRule("cardExpiryDate", .optional, .expiryYYMM),
        FieldRule("cardholderName", .optional, .string(2...45), versions: until220),
        FieldRule("cardholderName", .optional, .string(1...45), versions: v231),
        FieldRule("email", .optional, .string(1...254)),
        FieldRule("homePhone", .optional, .object),
        FieldRule("mobilePhone", .optional, .object),
        FieldRule("workPhone", .optional, .object),
        FieldRule("addrMatch", .optional, .oneOf(["Y", "N"])),
        FieldRule("billAddrCity", .optional, .string(1...50)),
        FieldRule("billAddrLine1", .optional, .string(1...50)),
        FieldRule("billAddrLine2", .optional, .string(1...50)),
        FieldRule("billAddrLine3", .optional, .string(1...50)),
        FieldRule("billAddrPostCode", .optional, .string(1...16)),
        FieldRule("billAddrState", .optional, .string(1...3)),
        FieldRule("billAddrCountry", .requiredWhen(.fieldPresent("billAddrState"), because: "billAddrState"), .countryCode),
        FieldRule("shipAddrCity", .optional, .string(1...50)),
        FieldRule("shipAddrLine1", .optional, .string(1...50)),
        FieldRule("shipAddrLine2", .optional, .string(1...50)),
        FieldRule("shipAddrLine3", .optional, .string(1...50)),
        FieldRule("shipAddrPostCode", .optional, .string(1...16)),
        FieldRule("shipAddrState", .optional, .string(1...3)),
        FieldRule("shipAddrCountry", .requiredWhen(.fieldPresent("shipAddrState"), because: "shipAddrState"), .countryCode),

        payment("acquirerBIN", .string(1...11)),
        payment("acquirerMerchantID", .string(1...35)),
        FieldRule("acquirerCountryCode", .required, .countryCode, versions: v231),
        FieldRule("acquirerCountryCodeSource", .required, .oneOf(["01", "02"]), versions: v231),
        payment("mcc", .numeric(4...4)),
        payment("merchantCountryCode", .countryCode),
        payment("merchantName", .string(1...40)),
        FieldRule("merchantRiskIndicator", .optional, .object),
        FieldRule("transType", .only(.payment, .optional, where: "payment authentications"), .oneOf(["01", "03", "10", "11", "28"])),
        FieldRule("purchaseInstalData", .requiredWhen(.fieldEquals("threeDSRequestorAuthenticationInd", ["03"]), because: "an instalment authentication"),
                  .numeric(1...3), versions: v210),
        // Bulletin 214 (2.2.0) adds the instalment 3RI.
        FieldRule("purchaseInstalData", .requiredWhen(.any([.fieldEquals("threeDSRequestorAuthenticationInd", ["03"]),
                                                            .all([.threeRI, .fieldEquals("threeRIInd", ["02"])])]),
                                                      because: "an instalment authentication"), .numeric(1...3), versions: since220),
        FieldRule("recurringInd", .requiredWhen(recurringSetup, because: "a recurring or instalment authentication"), .members([
            FieldRule("amountInd", .optional, .oneOf(["01", "02"])),
            FieldRule("frequencyInd", .optional, .oneOf(["01", "02"])),
        ]), versions: v231),
        FieldRule("recurringAmount", .optional, .numeric(1...48), versions: v231),
        FieldRule("recurringCurrency", .requiredWhen(.fieldPresent("recurringAmount"), because: "recurringAmount"), .currencyCode, versions: v231),
        FieldRule("recurringExponent", .requiredWhen(.fieldPresent("recurringAmount"), because: "recurringAmount"), .numeric(1...1), versions: v231),
        FieldRule("recurringDate", .optional, .numeric(8...8), versions: v231),

        FieldRule("payTokenInd", .optional, .boolean),
        FieldRule("payTokenSource", .requiredWhen(.fieldIsTrue("payTokenInd"), because: "payTokenInd true"), .oneOf(["01", "02"]), versions: since220),
        FieldRule("payTokenInfo", .optional, .object, versions: v231),
        FieldRule("whiteListStatus", .optional, .oneOf(listStatuses), versions: v220),
        FieldRule("whiteListStatusSource", .requiredWhen(.fieldPresent("whiteListStatus"), because: "whiteListStatus"), .oneOf(["01", "02", "03"]),
                  versions: v220),
        FieldRule("trustListStatus", .optional, .oneOf(listStatuses), versions: v231),
        FieldRule("trustListStatusSource", .requiredWhen(.fieldPresent("trustListStatus"), because: "trustListStatus"), .oneOf(["01", "02", "03"]),
                  versions: v231),
        FieldRule("deviceBindingStatus", .optional, .oneOf(["01", "02", "03", "04", "05", "11", "12", "13", "14", "15"]), versions: v231),
        FieldRule("deviceBindingStatusSource", .requiredWhen(.fieldPresent("deviceBindingStatus"), because: "deviceBindingStatus"),
                  .oneOf(["01", "02", "03"]), versions: v231),
        FieldRule("cardSecurityCode", .optional, .numeric(3...4), versions: v231),
        FieldRule("cardSecurityCodeStatus", .optional, .oneOf(["Y", "N", "U"]), versions: v231),
        FieldRule("cardSecurityCodeStatusSource", .requiredWhen(.fieldPresent("cardSecurityCodeStatus"), because: "cardSecurityCodeStatus"),
                  .oneOf(["01", "02"]), versions: v231),
        FieldRule("multiTransaction", .optional, .object, versions: v231),
        FieldRule("sellerInfo", .optional, .arrayOf(.object, count: 1...50), versions: v231),
        FieldRule("taxId", .optional, .string(1...45), versions: v231),
    ] + AResRules.broadInfo() + [

        // The app channel. The SDK makes sdkAppID, sdkTransID, sdkReferenceNumber, sdkEphemPubKey and sdkEncData
        // (``sdkParameters``); the 3DS Server carries them.
        app("sdkAppID", .uuid),
        app("sdkTransID", .uuid),
        app("sdkReferenceNumber", .string(1...32)),
        app("sdkEphemPubKey", .ecPublicJWK),
        app("sdkMaxTimeout", .numericAtLeast(2...2, minimum: 5)),
        app("deviceRenderOptions", deviceRenderOptions),
        app("sdkType", .oneOf(["01", "02"]), versions: v231),
        app("defaultSdkType", .requiredWhen(.fieldEquals("sdkType", ["01"]), because: "sdkType 01"), .members([
            FieldRule("sdkVariant", .required, .numeric(2...2)),
            FieldRule("wrappedInd", .optional, .oneOf(["Y"])),
        ]), versions: v231),
        app("splitSdkType", .requiredWhen(.fieldEquals("sdkType", ["02"]), because: "sdkType 02"), .members([
            FieldRule("sdkVariant", .required, .numeric(2...2)),
            FieldRule("limitedInd", .optional, .oneOf(["Y"])),
        ]), versions: v231),
        app("sdkServerSignedContent", .requiredWhen(.fieldEquals("sdkType", ["02"]), because: "sdkType 02"), .base64url(maxLength: 4000), versions: v231),
        app("appIp", .optional, .string(1...45), versions: v231),

        // The browser channel.
        browser("notificationURL", .url(maxLength: 256)),
        browser("threeDSCompInd", .oneOf(["Y", "N", "U"])),
        browser("browserAcceptHeader", .string(1...2048)),
        browser("browserUserAgent", .string(1...2048)),
        browser("browserIP", .optional, .string(1...45)),
        browser("browserJavascriptEnabled", .boolean, versions: since220),
        browser("browserLanguage", .string(1...8), versions: until220),
        browser("browserLanguage", .requiredWhen(javascript, because: "browserJavascriptEnabled true"), .string(1...35), versions: v231),
        browser("acceptLanguage", .arrayOf(.string(1...100), count: 1...99), versions: v231),
        browser("deviceId", .optional, .string(1...64), versions: v231),
        browser("userId", .optional, .string(1...64), versions: v231),
        browser("threeDSMethodId", .optional, .uuid, versions: v231),
        browser("threeDSRequestorSpcSupport", .optional, .oneOf(["Y"]), versions: v231),
        browser("spcIncompInd", .optional, .oneOf(["01", "02", "03"]), versions: v231),
        browser("payeeOrigin", .requiredWhen(.fieldEquals("threeDSRequestorSpcSupport", ["Y"]), because: "threeDSRequestorSpcSupport Y"),
                .url(maxLength: 2048), versions: v231),
    ] + browserScript("browserJavaEnabled", .boolean)
      + browserScript("browserColorDepth", .oneOf(["1", "4", "8", "15", "16", "24", "32", "48"]), versions: until220)
      + browserScript("browserColorDepth", .numeric(1...2), versions: v231)
      + browserScript("browserScreenHeight", .numeric(1...6))
      + browserScript("browserScreenWidth", .numeric(1...6))
      + browserScript("browserTZ", .string(1...5))
      + FieldRule.messageExtension
      + recurringTerm("recurringExpiry", .numeric(8...8))
      + recurringTerm("recurringFrequency", .numeric(1...4))
      + purchase("purchaseAmount", .numeric(1...48))
      + purchase("purchaseCurrency", .currencyCode)
      + purchase("purchaseExponent", .numeric(1...1))
      + purchase("purchaseDate", .dateTime14)

    /// The AReq a 3DS Server sends to the DS: the SDK's device data still encrypted.
    public static let fromThreeDSServer = MessageRules(.aReq, common + [
        app("sdkEncData", .base64url(maxLength: 64_000)),
        FieldRule("deviceInfo", .absent, .string(1...64_000)),
        FieldRule("dsTransID", .absent, .uuid),
        FieldRule("dsReferenceNumber", .absent, .string(1...32)),
        FieldRule("dsURL", .absent, .url(maxLength: 2048)),
    ])

    /// The AReq the DS sends to the ACS: device data decrypted into `deviceInfo`, and the DS's own fields.
    public static let fromDirectoryServer = MessageRules(.aReq, common + [
        FieldRule("sdkEncData", .absent, .string(1...64_000)),
        app("deviceInfo", .base64url(maxLength: 64_000)),
        FieldRule("dsTransID", .required, .uuid),
        FieldRule("dsReferenceNumber", .required, .string(1...32)),
        // 2.1.0 has no RReq for 3RI, and so no dsURL there (bulletin 207 adds it in 2.2.0).
        FieldRule("dsURL", .only(appOrBrowser, .required, where: "app and browser"), .url(maxLength: 2048), versions: v210),
        FieldRule("dsURL", .required, .url(maxLength: 2048), versions: since220),
    ])
}
