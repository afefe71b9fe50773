/// Field rules of the ARes (Core specification Annex A), as the ACS sends it and the DS relays it.
public enum AResRules {
    static let app = Condition.requestFieldEquals("deviceChannel", ["01"])
    static let challenge = Condition.fieldEquals("transStatus", ["C"])
    static let authenticated = Condition.fieldEquals("transStatus", ["Y", "A"])
    static let failed = Condition.fieldEquals("transStatus", ["N", "U", "R"])

    /// The `transStatus` values of each version (D and I from 2.2.0).
    static func transStatus(required presence: Presence) -> [FieldRule] {
        MessageVersion.allCases.map { version in
            FieldRule("transStatus", presence, .oneOf(TransStatus.allCases.filter { $0.since <= version }.map(\.rawValue)), versions: [version])
        }
    }

    /// Fields an ARes and an RReq share: the outcome and its proof.
    static let outcome: [FieldRule] = [
        FieldRule("transStatusReason", .requiredWhen(failed, because: "when transStatus is N, U or R"), .numeric(2...2)),
        FieldRule("authenticationValue", .requiredWhen(authenticated, because: "when transStatus is Y or A"), .string(28...28)),
        FieldRule("eci", .requiredWhen(authenticated, because: "when transStatus is Y or A"), .numeric(2...2)),
        FieldRule("messageExtension", .optional, .array),
    ]

    public static let rules = MessageRules(.aRes, [
        FieldRule("messageType", .required, .oneOf(["ARes"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("acsTransID", .required, .uuid),
        FieldRule("dsTransID", .required, .uuid),
        FieldRule("sdkTransID", .requiredWhen(app, because: "for the app channel"), .uuid),
        FieldRule("acsReferenceNumber", .required, .string(1...32)),
        FieldRule("dsReferenceNumber", .required, .string(1...32)),
        FieldRule("acsOperatorID", .optional, .string(1...32)),
        FieldRule("acsChallengeMandated", .requiredWhen(challenge, because: "when transStatus is C"), .oneOf(["Y", "N"])),
        FieldRule("authenticationType", .requiredWhen(challenge, because: "when transStatus is C"), .numeric(2...2)),
        FieldRule("acsRenderingType", .requiredWhen(.all([challenge, app]), because: "for an app challenge"), .object),
        FieldRule("acsSignedContent", .requiredWhen(.all([challenge, app]), because: "for an app challenge"), .base64url(maxLength: 64_000)),
        FieldRule("acsURL", .optional, .url(maxLength: 2048)),
        FieldRule("cardholderInfo", .optional, .string(1...128)),
        FieldRule("acsDecConInd", .optional, .oneOf(["Y", "N"]), versions: FieldRule.since(.v2_2_0)),
    ] + transStatus(required: .required) + outcome)
}
