public import JSON

/// A Results Request: the ACS reports the final outcome of a challenge (or decoupled
/// authentication) through the DS to the 3DS Server.
public struct RReq: Sendable, Equatable {
    public var messageVersion: MessageVersion
    public var messageCategory: String
    public var threeDSServerTransID: String
    public var acsTransID: String
    public var dsTransID: String
    public var sdkTransID: String?
    public var transStatus: TransStatus
    public var transStatusReason: String?
    public var authenticationValue: String?
    public var eci: String?
    /// `authenticationType` (2.1.0, 2.2.0).
    public var authenticationType: String?
    /// `authenticationMethod` (2.3.1): its replacement, a list of codes.
    public var authenticationMethod: [String]?
    /// `interactionCounter`: cardholder interactions; none for a decoupled authentication.
    public var interactionCounter: String?
    public var challengeCancel: String?
    /// 2.3.1: the Erro behind a `challengeCancel` 09 or 10.
    public var challengeErrorReporting: JSONValue?
    /// `acsRenderingType`: the interface and template of the challenge (app channel).
    public var acsRenderingType: JSONValue?
    /// The cardholder's answer to the whitelisting prompt: `whiteListStatus` in 2.2.0,
    /// `trustListStatus` in 2.3.1, each sent with its source (03, the ACS).
    public var whiteListStatus: String?
    /// 2.3.1: what the RReq says beside the outcome (``CarriesOutcomeFields``): the scenario's, as in its ARes.
    public var cardholderInfo: String?
    public var outcomeFields: JSONValue?

    public init(messageVersion: MessageVersion, messageCategory: String, threeDSServerTransID: String, acsTransID: String,
                dsTransID: String, sdkTransID: String?, transStatus: TransStatus, interactionCounter: String?) {
        self.messageVersion = messageVersion
        self.messageCategory = messageCategory
        self.threeDSServerTransID = threeDSServerTransID
        self.acsTransID = acsTransID
        self.dsTransID = dsTransID
        self.sdkTransID = sdkTransID
        self.transStatus = transStatus
        self.interactionCounter = interactionCounter
    }

    /// Reads and validates an RReq of a transaction whose channel and ARes the receiver knows
    /// (rules such as `sdkTransID` for the app, or `interactionCounter` unless decoupled, need
    /// them); without them those rules are checked as far as the message allows.
    public init(bytes: [UInt8], written: JSONValue? = nil, channel: DeviceChannel? = nil, ares: JSONValue? = nil) throws(InvalidMessage) {
        let envelope = try MessageEnvelope.read(bytes, written: written, rules: ResultsRules.rReq, request: ares, channel: channel)
        let json = envelope.json
        func text(_ name: String) -> String? { json[name]?.stringValue }
        self.init(messageVersion: envelope.version, messageCategory: text("messageCategory") ?? "",
                  threeDSServerTransID: text("threeDSServerTransID") ?? "", acsTransID: text("acsTransID") ?? "",
                  dsTransID: text("dsTransID") ?? "", sdkTransID: text("sdkTransID"),
                  transStatus: text("transStatus").flatMap(TransStatus.init(rawValue:)) ?? .unavailable,
                  interactionCounter: text("interactionCounter"))
        transStatusReason = text("transStatusReason")
        authenticationValue = text("authenticationValue")
        eci = text("eci")
        authenticationType = text("authenticationType")
        authenticationMethod = json["authenticationMethod"]?.arrayValue?.compactMap(\.stringValue)
        challengeCancel = text("challengeCancel")
        challengeErrorReporting = json["challengeErrorReporting"]
        acsRenderingType = json["acsRenderingType"]
        whiteListStatus = text("whiteListStatus") ?? text("trustListStatus")
        (cardholderInfo, outcomeFields) = Self.outcomeFields(of: json)
        warnings = envelope.warnings
        received = json
    }

    /// What validation let through: members the table does not define here.
    public var warnings: [String] = []
    /// The message as received (nil for one built here): what a record shows and a relay passes on.
    public var received: JSONValue?

    /// Sets the authentication method in both forms; the version's table keeps the one it defines.
    public mutating func setAuthentication(_ method: AuthenticationMethod) {
        authenticationType = method.authenticationType
        authenticationMethod = [method.rawValue]
    }

    public var ids: TransactionIDs {
        TransactionIDs(threeDSServerTransID: threeDSServerTransID, acsTransID: acsTransID, dsTransID: dsTransID, sdkTransID: sdkTransID)
    }

    /// The message, built through `ResultsRules.rReq` for its version.
    public var json: JSONValue {
        let listSource: JSONValue? = whiteListStatus == nil ? nil : .string("03")
        // The cardholder's answer to the whitelisting prompt is the trust list status; a scenario's gives way to it.
        // Only what the RReq defines (broadInfo is the ARes's alone).
        let outcome = Self.withSources(outcomeFields).filter {
            ResultsRules.rReq.defines($0.0, in: messageVersion) && (whiteListStatus == nil || !$0.0.hasPrefix("trustListStatus"))
        }
        return ResultsRules.rReq.build([
            ("messageType", .string(MessageType.rReq.rawValue)),
            ("messageVersion", .string(messageVersion.rawValue)),
            ("messageCategory", .string(messageCategory)),
            ("threeDSServerTransID", .string(threeDSServerTransID)),
            ("acsTransID", .string(acsTransID)),
            ("dsTransID", .string(dsTransID)),
            ("sdkTransID", .string(sdkTransID)),
            ("transStatus", .string(transStatus.rawValue)),
            ("transStatusReason", .string(transStatusReason)),
            ("authenticationValue", .string(authenticationValue)),
            ("eci", .string(eci)),
            ("authenticationType", .string(authenticationType)),
            ("authenticationMethod", authenticationMethod.map { .array($0.map(JSONValue.string)) }),
            ("interactionCounter", .string(interactionCounter)),
            ("challengeCancel", .string(challengeCancel)),
            ("challengeErrorReporting", challengeErrorReporting),
            ("acsRenderingType", acsRenderingType),
            ("whiteListStatus", .string(whiteListStatus)),
            ("whiteListStatusSource", listSource),
            ("trustListStatus", .string(whiteListStatus)),
            ("trustListStatusSource", listSource),
            ("cardholderInfo", cardholderInfo.map { .object([("text", .string($0))]) }),
        ] + outcome, version: messageVersion)
    }
}

extension RReq: CarriesOutcomeFields {}

/// A Results Response: the receipt for an RReq.
public struct RRes: Sendable, Equatable {
    /// `resultsStatus`.
    public enum ResultsStatus: String, Sendable {
        case received = "01"
        case challengeResultsNotReceived = "02"
        case notSentToRequestor = "03"
        /// 2.3.1: the 3DS Server will perform Decoupled Authentication in a subsequent authentication (``DecoupledFallback``).
        case decoupledLater = "04"
    }

    public var messageVersion: MessageVersion
    public var ids: TransactionIDs
    public var resultsStatus: ResultsStatus

    public init(answering request: RReq, resultsStatus: ResultsStatus = .received) {
        messageVersion = request.messageVersion
        ids = request.ids
        self.resultsStatus = resultsStatus
    }

    /// Reads and validates an RRes; `channel` is its transaction's (an app RRes carries `sdkTransID` from 2.2.0).
    public init(bytes: [UInt8], written: JSONValue? = nil, channel: DeviceChannel? = nil) throws(InvalidMessage) {
        let envelope = try MessageEnvelope.read(bytes, written: written, rules: ResultsRules.rRes, channel: channel)
        messageVersion = envelope.version
        ids = TransactionIDs(json: envelope.json)
        resultsStatus = envelope.json["resultsStatus"]?.stringValue.flatMap(ResultsStatus.init(rawValue:)) ?? .received
    }

    /// The message, built through `ResultsRules.rRes` for its version.
    public var json: JSONValue {
        ResultsRules.rRes.build([
            ("messageType", .string(MessageType.rRes.rawValue)),
            ("messageVersion", .string(messageVersion.rawValue)),
            ("threeDSServerTransID", .string(ids.threeDSServerTransID)),
            ("acsTransID", .string(ids.acsTransID)),
            ("dsTransID", .string(ids.dsTransID)),
            ("sdkTransID", .string(ids.sdkTransID)),
            ("resultsStatus", .string(resultsStatus.rawValue)),
        ], version: messageVersion)
    }
}
