/// Field rules of the PReq (3DS Server asks the DS for its card ranges) and the PRes.
///
/// 2.3.1 reshapes the PRes: the DS's versions are a list (`dsProtocolVersions`), a card range
/// holds `ranges` and the ACS's data per version (`acsProtocolVersions`), and `readOrder` says
/// how to apply them.
public enum PreparationRules {
    private static let until220 = FieldRule.until(.v2_2_0)
    private static let v231: Set<MessageVersion> = [.v2_3_1]
    private static let versionText = FieldFormat.string(5...8)

    public static let pReq = MessageRules(.pReq, [
        FieldRule("messageType", .required, .oneOf(["PReq"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("threeDSServerRefNumber", .required, .string(1...32)),
        FieldRule("threeDSServerOperatorID", .optional, .string(1...32)),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("serialNum", .optional, .string(1...20)),
        FieldRule("cardRangeDataDownloadInd", .optional, .oneOf(["Y"]), versions: v231),
    ] + FieldRule.messageExtension)

    public static let pRes = MessageRules(.pRes, [
        FieldRule("messageType", .required, .oneOf(["PRes"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("dsTransID", .required, .uuid),
        FieldRule("serialNum", .optional, .string(1...20)),
        FieldRule("dsStartProtocolVersion", .required, versionText, versions: until220),
        FieldRule("dsEndProtocolVersion", .required, versionText, versions: until220),
        FieldRule("dsProtocolVersions", .required, .arrayOf(versionText, count: 1...10), versions: v231),
        FieldRule("readOrder", .required, .oneOf(["01", "02"]), versions: v231),
        FieldRule("cardRangeData", .optional, .arrayOf(.object, count: 1...200_000)),
        FieldRule("cardRangeDataFileURL", .optional, .url(maxLength: 2048), versions: v231),
        FieldRule("dsUrlList", .optional, .array, versions: v231),
    ] + FieldRule.messageExtension)
}
