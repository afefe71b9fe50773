/// Field rules of the AReq (Core specification Annex A), for the two legs it travels:
/// 3DS Server to DS (with `sdkEncData`) and DS to ACS (with `deviceInfo` and the DS's fields).
public enum AReqRules {
    private static let app = Condition.fieldEquals("deviceChannel", ["01"])
    private static let browser = Condition.fieldEquals("deviceChannel", ["02"])
    private static let payment = Condition.fieldEquals("messageCategory", ["01"])

    private static func forApp(_ name: String, _ format: FieldFormat) -> FieldRule {
        FieldRule(name, .requiredWhen(app, because: "for the app channel (deviceChannel 01)"), format)
    }

    private static func forBrowser(_ name: String, _ format: FieldFormat) -> FieldRule {
        FieldRule(name, .requiredWhen(browser, because: "for the browser channel (deviceChannel 02)"), format)
    }

    private static func forPayment(_ name: String, _ format: FieldFormat) -> FieldRule {
        FieldRule(name, .requiredWhen(payment, because: "for a payment authentication (messageCategory 01)"), format)
    }

    /// Fields common to both legs.
    static let common: [FieldRule] = [
        FieldRule("messageType", .required, .oneOf(["AReq"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("messageCategory", .required, .oneOf(["01", "02"])),
        FieldRule("deviceChannel", .required, .oneOf(["01", "02", "03"])),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("threeDSServerRefNumber", .required, .string(1...32)),
        FieldRule("threeDSServerOperatorID", .optional, .string(1...32)),
        FieldRule("threeDSServerURL", .required, .url(maxLength: 2048)),
        FieldRule("threeDSRequestorID", .required, .string(1...35)),
        FieldRule("threeDSRequestorName", .required, .string(1...40)),
        FieldRule("threeDSRequestorURL", .required, .url(maxLength: 2048)),
        FieldRule("threeDSRequestorAuthenticationInd", .requiredWhen(.fieldEquals("deviceChannel", ["01", "02"]), because: "for app and browser"),
                  .numeric(2...2)),
        FieldRule("threeDSRequestorChallengeInd", .optional, .numeric(2...2)),
        FieldRule("acctNumber", .required, .numeric(13...19)),
        FieldRule("acctType", .optional, .oneOf(["01", "02", "03"])),
        FieldRule("cardExpiryDate", .optional, .expiryYYMM),
        FieldRule("cardholderName", .optional, .string(2...45)),
        FieldRule("email", .optional, .string(1...254)),
        forPayment("acquirerBIN", .string(1...11)),
        forPayment("acquirerMerchantID", .string(1...35)),
        forPayment("mcc", .numeric(4...4)),
        forPayment("merchantCountryCode", .numeric(3...3)),
        forPayment("merchantName", .string(1...40)),
        forPayment("purchaseAmount", .numeric(1...48)),
        forPayment("purchaseCurrency", .numeric(3...3)),
        forPayment("purchaseExponent", .numeric(1...1)),
        forPayment("purchaseDate", .dateTime14),
        FieldRule("transType", .optional, .oneOf(["01", "03", "10", "11", "28"])),
        forApp("sdkAppID", .uuid),
        forApp("sdkTransID", .uuid),
        forApp("sdkReferenceNumber", .string(1...32)),
        forApp("sdkEphemPubKey", .ecPublicJWK),
        forApp("sdkMaxTimeout", .numeric(2...2)),
        forApp("deviceRenderOptions", .object),
        forBrowser("notificationURL", .url(maxLength: 256)),
        forBrowser("threeDSCompInd", .oneOf(["Y", "N", "U"])),
        forBrowser("browserAcceptHeader", .string(1...2048)),
        forBrowser("browserLanguage", .string(1...8)),
        forBrowser("browserUserAgent", .string(1...2048)),
        FieldRule("messageExtension", .optional, .array),
    ]

    /// The AReq a 3DS Server sends to the DS: the SDK's device data still encrypted.
    public static let fromThreeDSServer = MessageRules(.aReq, common + [
        forApp("sdkEncData", .base64url(maxLength: 64_000)),
        FieldRule("deviceInfo", .absent, .string(1...64_000)),
        FieldRule("dsTransID", .absent, .uuid),
    ])

    /// The AReq the DS sends to the ACS: device data decrypted into `deviceInfo`, and the DS's own fields.
    public static let fromDirectoryServer = MessageRules(.aReq, common + [
        FieldRule("sdkEncData", .absent, .string(1...64_000)),
        forApp("deviceInfo", .base64url(maxLength: 64_000)),
        FieldRule("dsTransID", .required, .uuid),
        FieldRule("dsReferenceNumber", .required, .string(1...32)),
        FieldRule("dsURL", .required, .url(maxLength: 2048)),
    ])
}
