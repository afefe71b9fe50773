public import JSON

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
    /// `authenticationType` (2.1.0, 2.2.0): one two-digit code.
    public var authenticationType: String?
    /// `authenticationMethod` (2.3.1): its replacement, a list of two-digit codes.
    public var authenticationMethod: [String]?
    public var acsRenderingType: JSONValue?
    public var acsSignedContent: String?
    public var acsURL: String?
    /// `cardholderInfo`: a string up to 2.2.0, an object `{"text": ...}` in 2.3.1; the text either way.
    public var cardholderInfo: String?
    /// `acsDecConInd` (2.2.0+): "Y" when the ACS authenticates decoupled.
    public var acsDecConInd: String?
    /// `deviceInfoRecognisedVersion` (2.3.1, app): the device information version the ACS read.
    public var deviceInfoRecognisedVersion: String?
    /// `threeDSRequestorAppURLInd` (2.3.1, app): whether the ACS's OOB app returns to the requestor app.
    public var threeDSRequestorAppURLInd: String?
    /// `spcTransData` and `webAuthnCredList` (2.3.1, browser, transStatus S): what the requestor's page passes to
    /// Secure Payment Confirmation, and the cardholder's credentials for it.
    public var spcTransData: JSONValue?
    public var webAuthnCredList: JSONValue?
    /// The 2.3.1 members that say more about the outcome (``AResRules/outcomeFieldNames`` but `cardholderInfo`, which is
    /// its own), as an object; nil when there are none.
    public var outcomeFields: JSONValue?
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
        authenticationMethod = json["authenticationMethod"]?.arrayValue?.compactMap(\.stringValue)
        acsRenderingType = json["acsRenderingType"]
        acsSignedContent = text("acsSignedContent")
        acsURL = text("acsURL")
        (cardholderInfo, outcomeFields) = Self.outcomeFields(of: json)
        acsDecConInd = text("acsDecConInd")
        deviceInfoRecognisedVersion = text("deviceInfoRecognisedVersion")
        threeDSRequestorAppURLInd = text("threeDSRequestorAppURLInd")
        messageExtension = json["messageExtension"]
    }

    /// The fields an app-channel ARes carries beside its outcome where the version has them
    /// (2.3.1): the device information version read, and no OOB app that returns to the
    /// requestor's app (the harness scripts out-of-band steps without one).
    public mutating func setAppChannelFields(deviceInfoVersion: @autoclosure () -> String) {
        guard AResRules.rules.defines("deviceInfoRecognisedVersion", in: messageVersion) else { return }
        deviceInfoRecognisedVersion = deviceInfoVersion()
        threeDSRequestorAppURLInd = "N"
    }

    /// Sets the authentication method in both forms; the version's table keeps the one it defines.
    public mutating func setAuthentication(_ method: AuthenticationMethod) {
        authenticationType = method.authenticationType
        authenticationMethod = [method.rawValue]
    }

    /// The message, built through `AResRules.rules` for its version.
    public var json: JSONValue {
        AResRules.rules.build([
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
            ("authenticationMethod", authenticationMethod.map { .array($0.map(JSONValue.string)) }),
            ("acsRenderingType", acsRenderingType),
            ("acsSignedContent", .string(acsSignedContent)),
            ("acsURL", .string(acsURL)),
            ("cardholderInfo", cardholderInfo.map { messageVersion >= .v2_3_1 ? .object([("text", .string($0))]) : .string($0) }),
            ("acsDecConInd", .string(acsDecConInd)),
            ("deviceInfoRecognisedVersion", .string(deviceInfoRecognisedVersion)),
            ("threeDSRequestorAppURLInd", .string(threeDSRequestorAppURLInd)),
            ("spcTransData", spcTransData),
            ("webAuthnCredList", webAuthnCredList),
        ] + Self.withSources(outcomeFields) + [
            ("messageExtension", messageExtension),
        ], version: messageVersion)
    }
}

extension ARes: CarriesOutcomeFields {}

/// The ARes and the RReq (2.3.1) say more about the outcome than its status (``AResRules/outcomeFieldNames``): device
/// binding and trust list statuses, `cardholderInfo`, `broadInfo`, `transStatusReasonInfo`.
public protocol CarriesOutcomeFields {
    /// `cardholderInfo`: a string up to 2.2.0, an object `{"text": ...}` in 2.3.1; the text either way.
    var cardholderInfo: String? { get set }
    /// The other outcome fields, as an object; nil when there are none.
    var outcomeFields: JSONValue? { get set }
}

extension CarriesOutcomeFields {
    /// Puts a scenario's outcome fields in the message: `cardholderInfo`'s text in its own member (unless the message has
    /// one already: a decoupled ARes's), the others as they are.
    public mutating func addOutcomeFields(_ fields: JSONValue) {
        cardholderInfo = cardholderInfo ?? fields["cardholderInfo"]?.stringValue
        let others = (fields.objectMembers ?? []).filter { $0.key != "cardholderInfo" }
        outcomeFields = others.isEmpty ? nil : .object(others)
    }

    /// A received message's `cardholderInfo` text and its other outcome fields.
    static func outcomeFields(of json: JSONValue) -> (cardholderInfo: String?, others: JSONValue?) {
        let others = AResRules.outcomeFieldNames.filter { $0 != "cardholderInfo" }.compactMap { name in json[name].map { (name, $0) } }
        return (json["cardholderInfo"]?.stringValue ?? json["cardholderInfo"]?["text"]?.stringValue, others.isEmpty ? nil : .object(others))
    }

    /// The outcome fields, each list status followed by its source: the ACS's (03) unless given.
    static func withSources(_ fields: JSONValue?) -> [(String, JSONValue?)] {
        (fields?.objectMembers ?? []).flatMap { member -> [(String, JSONValue?)] in
            guard ["deviceBindingStatus", "trustListStatus"].contains(member.key), fields?[member.key + "Source"] == nil else { return [(member.key, member.value)] }
            return [(member.key, member.value), (member.key + "Source", .string("03"))]
        }
    }
}
