public import JSON

/// A Preparation Request: a 3DS Server asks the DS for its card ranges.
public struct PReq: Sendable {
    public let messageVersion: MessageVersion
    public let threeDSServerTransID: String
    /// Who asks: the 3DS Server's EMVCo reference number.
    public let threeDSServerRefNumber: String
    public let serialNum: String?
    public let json: JSONValue

    /// Reads and validates a PReq.
    public init(bytes: [UInt8], written: JSONValue? = nil) throws(InvalidMessage) {
        let envelope = try MessageEnvelope.read(bytes, written: written, rules: PreparationRules.pReq)
        json = envelope.json
        messageVersion = envelope.version
        threeDSServerTransID = envelope.json["threeDSServerTransID"]?.stringValue ?? ""
        threeDSServerRefNumber = envelope.json["threeDSServerRefNumber"]?.stringValue ?? ""
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
    /// The ACS's 3DS Method page for the range's cards, when it has one.
    public var threeDSMethodURL: String?

    public init(startRange: String, endRange: String, versions: ClosedRange<MessageVersion>) {
        self.startRange = startRange
        self.endRange = endRange
        acsStartProtocolVersion = versions.lowerBound
        acsEndProtocolVersion = versions.upperBound
        dsStartProtocolVersion = versions.lowerBound
        dsEndProtocolVersion = versions.upperBound
    }

    /// The element as `version` writes it: up to 2.2.0 flat start/end and version bounds; in
    /// 2.3.1 `ranges`, and the ACS's versions as `acsProtocolVersions` with what each supports.
    public func json(version: MessageVersion) -> JSONValue {
        guard version >= .v2_3_1 else {
            return .object([
                ("startRange", .string(startRange)), ("endRange", .string(endRange)), ("actionInd", .string(actionInd)),
                ("acsStartProtocolVersion", .string(acsStartProtocolVersion.rawValue)),
                ("acsEndProtocolVersion", .string(acsEndProtocolVersion.rawValue)),
                ("dsStartProtocolVersion", .string(dsStartProtocolVersion.rawValue)),
                ("dsEndProtocolVersion", .string(dsEndProtocolVersion.rawValue)),
            ] + (threeDSMethodURL.map { [("threeDSMethodURL", .string($0))] } ?? []))
        }
        let acsVersions = MessageVersion.allCases.filter { (acsStartProtocolVersion...acsEndProtocolVersion).contains($0) }
        let dsVersions = MessageVersion.allCases.filter { (dsStartProtocolVersion...dsEndProtocolVersion).contains($0) }
        return .object([
            ("ranges", .array([.object([("start", .string(startRange)), ("end", .string(endRange))])])),
            ("actionInd", .string(actionInd)),
            // 01 authentication available, 02 attempts supported.
            // 2.3.1 gives the 3DS Method URL per ACS version.
            ("acsProtocolVersions", .array(acsVersions.map { .object(omittingAbsent: [("version", .string($0.rawValue)),
                                                                                      ("acsInfoInd", .array([.string("01"), .string("02")])),
                                                                                      ("threeDSMethodURL", .string(threeDSMethodURL))]) })),
            ("dsProtocolVersions", .array(dsVersions.map { .string($0.rawValue) })),
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

    /// The message, built through `PreparationRules.pRes` for its version.
    public var json: JSONValue {
        PreparationRules.pRes.build([
            ("messageType", .string(MessageType.pRes.rawValue)),
            ("messageVersion", .string(messageVersion.rawValue)),
            ("threeDSServerTransID", .string(threeDSServerTransID)),
            ("dsTransID", .string(dsTransID)),
            ("serialNum", .string(serialNum)),
            ("dsStartProtocolVersion", .string(MessageVersion.allCases.first?.rawValue)),
            ("dsEndProtocolVersion", .string(MessageVersion.latest.rawValue)),
            ("dsProtocolVersions", .array(MessageVersion.allCases.map { .string($0.rawValue) })),
            ("readOrder", .string("01")),
            ("cardRangeData", cardRangeData.isEmpty ? nil : .array(cardRangeData.map { $0.json(version: messageVersion) })),
        ], version: messageVersion)
    }
}
