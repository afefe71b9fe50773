import JSON

/// A Preparation Request: a 3DS Server asks the DS for its card ranges.
public struct PReq: Sendable {
    public let messageVersion: MessageVersion
    public let threeDSServerTransID: String
    public let serialNum: String?

    /// Reads and validates a PReq.
    public init(bytes: [UInt8]) throws(InvalidMessage) {
        let envelope = try MessageEnvelope.read(bytes, rules: PreparationRules.pReq)
        messageVersion = envelope.version
        threeDSServerTransID = envelope.json["threeDSServerTransID"]?.stringValue ?? ""
        serialNum = envelope.json["serialNum"]?.stringValue
    }
}

/// One card range of a PRes (`cardRangeData` element).
public struct CardRangeData: Sendable, Equatable {
    public var startRange: String
    public var endRange: String
    /// A add, D delete, M modify.
    public var actionInd = "A"
    public var acsStartProtocolVersion: MessageVersion
    public var acsEndProtocolVersion: MessageVersion
    public var dsStartProtocolVersion: MessageVersion
    public var dsEndProtocolVersion: MessageVersion

    public init(startRange: String, endRange: String, versions: ClosedRange<MessageVersion>) {
        self.startRange = startRange
        self.endRange = endRange
        acsStartProtocolVersion = versions.lowerBound
        acsEndProtocolVersion = versions.upperBound
        dsStartProtocolVersion = versions.lowerBound
        dsEndProtocolVersion = versions.upperBound
    }

    public var json: JSONValue {
        .object([
            ("startRange", .string(startRange)), ("endRange", .string(endRange)), ("actionInd", .string(actionInd)),
            ("acsStartProtocolVersion", .string(acsStartProtocolVersion.rawValue)),
            ("acsEndProtocolVersion", .string(acsEndProtocolVersion.rawValue)),
            ("dsStartProtocolVersion", .string(dsStartProtocolVersion.rawValue)),
            ("dsEndProtocolVersion", .string(dsEndProtocolVersion.rawValue)),
        ])
    }
}

/// A Preparation Response: the DS's card ranges and the versions it speaks.
public struct PRes: Sendable {
    public var messageVersion: MessageVersion
    public var threeDSServerTransID: String
    public var dsTransID: String
    public var serialNum: String?
    public var cardRangeData: [CardRangeData]

    public init(messageVersion: MessageVersion, threeDSServerTransID: String, dsTransID: String, serialNum: String?,
                cardRangeData: [CardRangeData]) {
        self.messageVersion = messageVersion
        self.threeDSServerTransID = threeDSServerTransID
        self.dsTransID = dsTransID
        self.serialNum = serialNum
        self.cardRangeData = cardRangeData
    }

    public var json: JSONValue {
        .object(omittingAbsent: [
            ("messageType", .string(MessageType.pRes.rawValue)),
            ("messageVersion", .string(messageVersion.rawValue)),
            ("threeDSServerTransID", .string(threeDSServerTransID)),
            ("dsTransID", .string(dsTransID)),
            ("serialNum", .string(serialNum)),
            ("dsStartProtocolVersion", .string(MessageVersion.allCases.first?.rawValue)),
            ("dsEndProtocolVersion", .string(MessageVersion.latest.rawValue)),
            ("cardRangeData", .array(cardRangeData.map(\.json))),
        ])
    }
}
