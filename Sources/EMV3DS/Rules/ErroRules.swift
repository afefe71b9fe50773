/// Field rules of the Erro message (Annex A): the ids are "required if available", so optional here.
public enum ErroRules {
    public static let rules = MessageRules(.erro, [
        FieldRule("messageType", .required, .oneOf(["Erro"])),
        FieldRule("messageVersion", .required, .string(5...8)),
        FieldRule("errorCode", .required, .numeric(3...3)),
        FieldRule("errorComponent", .required, .oneOf(["C", "S", "D", "A"])),
        FieldRule("errorDescription", .required, .string(1...2048)),
        FieldRule("errorDetail", .required, .string(1...2048)),
        FieldRule("errorMessageType", .optional, .oneOf(MessageType.allCases.map(\.rawValue))),
        FieldRule("threeDSServerTransID", .optional, .uuid),
        FieldRule("acsTransID", .optional, .uuid),
        FieldRule("dsTransID", .optional, .uuid),
        FieldRule("sdkTransID", .optional, .uuid),
    ])
}
