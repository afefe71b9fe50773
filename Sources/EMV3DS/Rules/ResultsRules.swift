/// Field rules of the RReq (ACS to DS to 3DS Server, after a challenge or decoupled
/// authentication) and of the RRes that acknowledges it.
public enum ResultsRules {
    private static let app = Condition.fieldEquals("deviceChannel", ["01"])

    public static let rReq = MessageRules(.rReq, [
        FieldRule("messageType", .required, .oneOf(["RReq"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("messageCategory", .required, .oneOf(["01", "02"])),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("acsTransID", .required, .uuid),
        FieldRule("dsTransID", .required, .uuid),
        FieldRule("sdkTransID", .optional, .uuid),
        FieldRule("authenticationType", .optional, .numeric(2...2)),
        FieldRule("authenticationMethod", .optional, .numeric(2...2)),
        FieldRule("interactionCounter", .required, .numeric(2...2)),
        FieldRule("challengeCancel", .optional, .numeric(2...2)),
        FieldRule("acsRenderingType", .optional, .object),
        FieldRule("whiteListStatus", .optional, .oneOf(["Y", "N", "E", "P", "R", "U"]), versions: FieldRule.since(.v2_2_0)),
    ] + AResRules.transStatus(required: .required) + AResRules.outcome)

    public static let rRes = MessageRules(.rRes, [
        FieldRule("messageType", .required, .oneOf(["RRes"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("acsTransID", .required, .uuid),
        FieldRule("dsTransID", .required, .uuid),
        FieldRule("sdkTransID", .optional, .uuid),
        /// 01 received, 02 challenge results not received, 03 not sent to the requestor.
        FieldRule("resultsStatus", .required, .oneOf(["01", "02", "03"])),
        FieldRule("messageExtension", .optional, .array),
    ])
}
