public import JSON

/// Field rules of the RReq (ACS to DS to 3DS Server, after a challenge or decoupled
/// authentication) and of the RRes that acknowledges it.
///
/// An RReq carries no `deviceChannel`: the receiver validates it in the context of its
/// transaction (`MessageContext.channel`, and the ARes as `request` for `acsDecConInd`).
public enum ResultsRules {
    /// The ARes said the ACS authenticates decoupled.
    private static let decoupled = Condition.requestFieldEquals("acsDecConInd", ["Y"])
    /// The members of the ARes that the RReq's rules read: all a DS or 3DS Server must keep of it.
    public static let aresMembersRead = ["acsDecConInd", "transStatus"]

    /// `ares` cut to ``aresMembersRead``: the context an RReq is later checked in.
    public static func aresContext(_ ares: JSONValue) -> JSONValue {
        .object(aresMembersRead.compactMap { name in ares[name].map { (name, $0) } })
    }
    private static let authenticatedOrNot = Condition.fieldEquals("transStatus", ["Y", "N"])

    public static let rReq = MessageRules(.rReq, [
        FieldRule("messageType", .required, .oneOf(["RReq"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("messageCategory", .required, .oneOf(["01", "02"])),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("acsTransID", .required, .uuid),
        FieldRule("dsTransID", .required, .uuid),
        // 2.1.0's RReq has no sdkTransID; from 2.2.0 an app transaction's carries it.
        FieldRule("sdkTransID", .only(.app, .required, where: "the app channel"), .uuid, versions: FieldRule.since(.v2_2_0)),
        FieldRule("authenticationType", .requiredWhen(authenticatedOrNot, because: "transStatus Y or N"), .oneOf(["01", "02", "03"]),
                  versions: [.v2_1_0]),
        FieldRule("authenticationType", .requiredWhen(authenticatedOrNot, because: "transStatus Y or N"), .oneOf(["01", "02", "03", "04"]),
                  versions: [.v2_2_0]),
        FieldRule("authenticationMethod", .requiredWhen(authenticatedOrNot, because: "transStatus Y or N"),
                  .arrayOf(.numeric(2...2), count: 1...99), versions: [.v2_3_1]),
        FieldRule("interactionCounter", .required, .numeric(2...2), versions: [.v2_1_0]),
        FieldRule("interactionCounter", .requiredWhen(.not(decoupled), because: "a challenge (not when the ARes had acsDecConInd Y)"),
                  .numeric(2...2), versions: FieldRule.since(.v2_2_0)),
        FieldRule("challengeCancel", .optional, .oneOf(ChallengeCancel.values(in: .v2_1_0)), versions: [.v2_1_0]),
        FieldRule("challengeCancel", .optional, .oneOf(ChallengeCancel.values(in: .v2_2_0)), versions: [.v2_2_0]),
        FieldRule("challengeCancel", .optional, .oneOf(ChallengeCancel.values(in: .v2_3_1)), versions: [.v2_3_1]),
        FieldRule("challengeErrorReporting", .requiredWhen(.fieldEquals("challengeCancel", ["09", "10"]), because: "challengeCancel 09 or 10"),
                  .object, versions: [.v2_3_1]),
        FieldRule("cardholderInfo", .optional, AResRules.cardholderInfo, versions: [.v2_3_1]),
        FieldRule("acsRenderingType", .only(.app, .required, where: "the app channel"), AResRules.renderingType, versions: [.v2_1_0]),
        FieldRule("acsRenderingType", .only(.app, .requiredWhen(.not(decoupled), because: "an app challenge (not decoupled)"),
                                            where: "the app channel"), AResRules.renderingType, versions: FieldRule.since(.v2_2_0)),
    ] + AResRules.transStatus(in: .rReq) + AResRules.outcome)

    public static let rRes = MessageRules(.rRes, [
        FieldRule("messageType", .required, .oneOf(["RRes"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("acsTransID", .required, .uuid),
        FieldRule("dsTransID", .required, .uuid),
        FieldRule("sdkTransID", .only(.app, .required, where: "the app channel"), .uuid, versions: FieldRule.since(.v2_2_0)),
        /// 01 received, 02 challenge results not received, 03 not sent to the requestor; 2.3.1: 04 decoupled later.
        FieldRule("resultsStatus", .required, .oneOf(["01", "02", "03"]), versions: FieldRule.until(.v2_2_0)),
        FieldRule("resultsStatus", .required, .oneOf(["01", "02", "03", "04"]), versions: [.v2_3_1]),
    ] + FieldRule.messageExtension)
}
