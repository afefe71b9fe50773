/// Field rules of the PReq (3DS Server asks the DS for its card ranges) and the PRes.
public enum PreparationRules {
    public static let pReq = MessageRules(.pReq, [
        FieldRule("messageType", .required, .oneOf(["PReq"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("threeDSServerRefNumber", .required, .string(1...32)),
        FieldRule("threeDSServerOperatorID", .optional, .string(1...32)),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("serialNum", .optional, .string(1...20)),
        FieldRule("messageExtension", .optional, .array),
    ])

    public static let pRes = MessageRules(.pRes, [
        FieldRule("messageType", .required, .oneOf(["PRes"])),
        FieldRule("messageVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("threeDSServerTransID", .required, .uuid),
        FieldRule("dsTransID", .required, .uuid),
        FieldRule("serialNum", .optional, .string(1...20)),
        FieldRule("dsStartProtocolVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("dsEndProtocolVersion", .required, .oneOf(MessageVersion.allCases.map(\.rawValue))),
        FieldRule("cardRangeData", .optional, .array),
        FieldRule("messageExtension", .optional, .array),
    ])
}
