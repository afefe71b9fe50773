import JSON

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
    public var authenticationType: String?
    public var interactionCounter: String
    public var challengeCancel: String?
    /// `whiteListStatus` (2.2.0+): Y when the cardholder agreed to whitelist the requestor.
    public var whiteListStatus: String?

    public init(messageVersion: MessageVersion, messageCategory: String, threeDSServerTransID: String, acsTransID: String,
                dsTransID: String, sdkTransID: String?, transStatus: TransStatus, interactionCounter: String) {
        self.messageVersion = messageVersion
        self.messageCategory = messageCategory
        self.threeDSServerTransID = threeDSServerTransID
        self.acsTransID = acsTransID
        self.dsTransID = dsTransID
        self.sdkTransID = sdkTransID
        self.transStatus = transStatus
        self.interactionCounter = interactionCounter
    }

    /// Reads and validates an RReq.
    public init(bytes: [UInt8]) throws(InvalidMessage) {
        let envelope = try MessageEnvelope.read(bytes, rules: ResultsRules.rReq)
        let json = envelope.json
        func text(_ name: String) -> String? { json[name]?.stringValue }
        self.init(messageVersion: envelope.version, messageCategory: text("messageCategory") ?? "",
                  threeDSServerTransID: text("threeDSServerTransID") ?? "", acsTransID: text("acsTransID") ?? "",
                  dsTransID: text("dsTransID") ?? "", sdkTransID: text("sdkTransID"),
                  transStatus: text("transStatus").flatMap(TransStatus.init(rawValue:)) ?? .unavailable,
                  interactionCounter: text("interactionCounter") ?? "")
        transStatusReason = text("transStatusReason")
        authenticationValue = text("authenticationValue")
        eci = text("eci")
        authenticationType = text("authenticationType")
        challengeCancel = text("challengeCancel")
        whiteListStatus = text("whiteListStatus")
    }

    public var ids: TransactionIDs {
        TransactionIDs(threeDSServerTransID: threeDSServerTransID, acsTransID: acsTransID, dsTransID: dsTransID, sdkTransID: sdkTransID)
    }

    public var json: JSONValue {
        .object(omittingAbsent: [
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
            ("interactionCounter", .string(interactionCounter)),
            ("challengeCancel", .string(challengeCancel)),
            ("whiteListStatus", .string(whiteListStatus)),
        ])
    }
}

/// A Results Response: the receipt for an RReq.
public struct RRes: Sendable, Equatable {
    /// `resultsStatus`.
    public enum ResultsStatus: String, Sendable {
        case received = "01"
        case challengeResultsNotReceived = "02"
        case notSentToRequestor = "03"
    }

    public var messageVersion: MessageVersion
    public var ids: TransactionIDs
    public var resultsStatus: ResultsStatus

    public init(answering request: RReq, resultsStatus: ResultsStatus = .received) {
        messageVersion = request.messageVersion
        ids = request.ids
        self.resultsStatus = resultsStatus
    }

    /// Reads and validates an RRes.
    public init(bytes: [UInt8]) throws(InvalidMessage) {
        let envelope = try MessageEnvelope.read(bytes, rules: ResultsRules.rRes)
        messageVersion = envelope.version
        ids = TransactionIDs(json: envelope.json)
        resultsStatus = envelope.json["resultsStatus"]?.stringValue.flatMap(ResultsStatus.init(rawValue:)) ?? .received
    }

    public var json: JSONValue {
        .object(omittingAbsent: [
            ("messageType", .string(MessageType.rRes.rawValue)),
            ("messageVersion", .string(messageVersion.rawValue)),
            ("threeDSServerTransID", .string(ids.threeDSServerTransID)),
            ("acsTransID", .string(ids.acsTransID)),
            ("dsTransID", .string(ids.dsTransID)),
            ("sdkTransID", .string(ids.sdkTransID)),
            ("resultsStatus", .string(resultsStatus.rawValue)),
        ])
    }
}
