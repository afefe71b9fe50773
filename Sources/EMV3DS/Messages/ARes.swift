import JSON

/// An Authentication Response.
public struct ARes: Sendable, Equatable {
    public var messageVersion: MessageVersion
    public var threeDSServerTransID: String
    public var acsTransID: String
    public var dsTransID: String
    public var sdkTransID: String?
    public var acsReferenceNumber: String
    public var dsReferenceNumber: String
    public var acsOperatorID: String?
    public var transStatus: TransStatus
    public var transStatusReason: String?
    public var authenticationValue: String?
    public var eci: String?
    public var acsChallengeMandated: String?
    public var authenticationType: String?
    public var acsRenderingType: JSONValue?
    public var acsSignedContent: String?
    public var acsURL: String?
    public var cardholderInfo: String?
    /// `acsDecConInd` (2.2.0+): "Y" when the ACS authenticates decoupled.
    public var acsDecConInd: String?
    public var messageExtension: JSONValue?

    public init(messageVersion: MessageVersion, threeDSServerTransID: String, acsTransID: String, dsTransID: String,
                sdkTransID: String?, acsReferenceNumber: String, dsReferenceNumber: String, transStatus: TransStatus) {
        self.messageVersion = messageVersion
        self.threeDSServerTransID = threeDSServerTransID
        self.acsTransID = acsTransID
        self.dsTransID = dsTransID
        self.sdkTransID = sdkTransID
        self.acsReferenceNumber = acsReferenceNumber
        self.dsReferenceNumber = dsReferenceNumber
        self.transStatus = transStatus
    }

    /// Reads and validates an ARes that answers `request` (the AReq, for the app-channel rules).
    public init(bytes: [UInt8], answering request: JSONValue) throws(InvalidMessage) {
        let envelope = try MessageEnvelope.read(bytes, rules: AResRules.rules, request: request)
        self.init(validated: envelope)
    }

    /// Reads an ARes whose fields passed `AResRules.rules`.
    public init(validated envelope: MessageEnvelope) {
        let json = envelope.json
        func text(_ name: String) -> String? { json[name]?.stringValue }
        self.init(messageVersion: envelope.version, threeDSServerTransID: text("threeDSServerTransID") ?? "",
                  acsTransID: text("acsTransID") ?? "", dsTransID: text("dsTransID") ?? "", sdkTransID: text("sdkTransID"),
                  acsReferenceNumber: text("acsReferenceNumber") ?? "", dsReferenceNumber: text("dsReferenceNumber") ?? "",
                  transStatus: text("transStatus").flatMap(TransStatus.init(rawValue:)) ?? .unavailable)
        acsOperatorID = text("acsOperatorID")
        transStatusReason = text("transStatusReason")
        authenticationValue = text("authenticationValue")
        eci = text("eci")
        acsChallengeMandated = text("acsChallengeMandated")
        authenticationType = text("authenticationType")
        acsRenderingType = json["acsRenderingType"]
        acsSignedContent = text("acsSignedContent")
        acsURL = text("acsURL")
        cardholderInfo = text("cardholderInfo")
        acsDecConInd = text("acsDecConInd")
        messageExtension = json["messageExtension"]
    }

    public var json: JSONValue {
        .object(omittingAbsent: [
            ("messageType", .string(MessageType.aRes.rawValue)),
            ("messageVersion", .string(messageVersion.rawValue)),
            ("threeDSServerTransID", .string(threeDSServerTransID)),
            ("acsTransID", .string(acsTransID)),
            ("dsTransID", .string(dsTransID)),
            ("sdkTransID", .string(sdkTransID)),
            ("acsReferenceNumber", .string(acsReferenceNumber)),
            ("dsReferenceNumber", .string(dsReferenceNumber)),
            ("acsOperatorID", .string(acsOperatorID)),
            ("transStatus", .string(transStatus.rawValue)),
            ("transStatusReason", .string(transStatusReason)),
            ("authenticationValue", .string(authenticationValue)),
            ("eci", .string(eci)),
            ("acsChallengeMandated", .string(acsChallengeMandated)),
            ("authenticationType", .string(authenticationType)),
            ("acsRenderingType", acsRenderingType),
            ("acsSignedContent", .string(acsSignedContent)),
            ("acsURL", .string(acsURL)),
            ("cardholderInfo", .string(cardholderInfo)),
            ("acsDecConInd", .string(acsDecConInd)),
            ("messageExtension", messageExtension),
        ])
    }
}
