public import JSON

/// What an ongoing CRes shows: the screen of one challenge step (every field optional but
/// the type; absent fields are omitted, never sent as "").
public struct ChallengeScreenContent: Sendable, Equatable {
    public var uiType: ACSUIType
    public var header: String?
    public var label: String?
    public var text: String?
    /// `challengeInfoTextIndicator` "Y": the text is a warning (e.g. after a wrong answer).
    public var textIsWarning = false
    public var additionalInfo: String?
    public var submitLabel: String?
    /// `challengeSelectInfo`, in order.
    public var options: [(key: String, label: String)] = []
    public var oobContinueLabel: String?
    public var oobAppURL: String?
    public var oobAppLabel: String?
    /// The HTML itself; the CRes carries it base64url-encoded.
    public var html: String?
    public var htmlRefresh: String?
    public var expandInfoLabel: String?
    public var expandInfoText: String?
    public var whyInfoLabel: String?
    public var whyInfoText: String?
    public var resendInformationLabel: String?
    public var issuerImage: JSONValue?
    public var psImage: JSONValue?
    public var whitelistingInfoText: String?

    public init(uiType: ACSUIType) { self.uiType = uiType }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        JSONValue.object(omittingAbsent: lhs.json(htmlEncoder: { $0 })) == JSONValue.object(omittingAbsent: rhs.json(htmlEncoder: { $0 }))
    }

    /// The CRes members of this screen for `version`; `htmlEncoder` turns HTML into the wire
    /// form. Members a version names differently are given under each name; the table keeps
    /// the version's own.
    func json(version: MessageVersion = .v2_2_0, htmlEncoder: (String) -> String) -> [(String, JSONValue?)] {
        // 2.3.1: a text screen's label is its entry box's too, and still challengeInfoLabel, which a parser built for
        // 2.2.0 requires on a text screen (both are allowed: SB 279 p.99 and p.101); an information screen has its own
        // continue label.
        let entryBox = version >= .v2_3_1 && uiType == .text
        let informationScreen = version >= .v2_3_1 && uiType == .information
        return [
            ("acsUiType", .string(uiType.rawValue)),
            ("challengeInfoHeader", .string(header)),
            ("challengeInfoLabel", .string(label)),
            ("challengeEntryBox", entryBox ? label.map { .object([("challengeDataEntryLabel", .string($0))]) } : nil),
            ("challengeInfoText", .string(text)),
            ("challengeInfoTextIndicator", textIsWarning ? .string("Y") : nil),
            ("challengeAddInfo", .string(additionalInfo)),
            ("submitAuthenticationLabel", .string(submitLabel)),
            ("challengeSelectInfo", options.isEmpty ? nil : .array(options.map { .object([($0.key, .string($0.label))]) })),
            ("oobContinueLabel", informationScreen ? nil : .string(oobContinueLabel)),
            ("infoContinueLabel", informationScreen ? .string(oobContinueLabel ?? "Continue") : nil),
            ("oobAppURL", .string(oobAppURL)),
            ("oobAppLabel", .string(oobAppLabel)),
            ("acsHTML", .string(html.map(htmlEncoder))),
            ("acsHTMLRefresh", .string(htmlRefresh.map(htmlEncoder))),
            ("expandInfoLabel", .string(expandInfoLabel)),
            ("expandInfoText", .string(expandInfoText)),
            ("whyInfoLabel", .string(whyInfoLabel)),
            ("whyInfoText", .string(whyInfoText)),
            ("resendInformationLabel", .string(resendInformationLabel)),
            ("issuerImage", issuerImage),
            ("psImage", psImage),
            ("whitelistingInfoText", .string(whitelistingInfoText)),
            ("trustListInfoText", .string(whitelistingInfoText)),
        ]
    }
}

/// A Challenge Response: the next screen (`challengeCompletionInd` "N") or the final status ("Y").
public struct CRes: Sendable, Equatable {
    public enum Content: Sendable, Equatable {
        case screen(ChallengeScreenContent)
        /// The final CRes carries `transStatus` and nothing else (older SDKs reject other members).
        case final(TransStatus)
    }

    public var messageVersion: MessageVersion
    public var ids: TransactionIDs
    /// `acsCounterAtoS`: the counter of the CReq this answers.
    public var counter: Int
    public var content: Content
    /// What validation let through: members the table does not define for this version.
    public var warnings: [String] = []

    public init(messageVersion: MessageVersion, ids: TransactionIDs, counter: Int, content: Content) {
        self.messageVersion = messageVersion
        self.ids = ids
        self.counter = counter
        self.content = content
    }

    public init(answering creq: CReq, content: Content) {
        messageVersion = creq.messageVersion
        ids = creq.ids
        counter = creq.counter
        self.content = content
    }

    /// Reads and validates a decrypted CRes (what an SDK does).
    public init(bytes: [UInt8]) throws(InvalidMessage) {
        let envelope = try MessageEnvelope.read(bytes, rules: ChallengeRules.cRes)
        let json = envelope.json
        func text(_ name: String) -> String? { json[name]?.stringValue }
        messageVersion = envelope.version
        ids = TransactionIDs(json: json)
        counter = text("acsCounterAtoS").flatMap { Int($0) } ?? 0
        warnings = envelope.warnings
        if text("challengeCompletionInd") == "Y" {
            content = .final(text("transStatus").flatMap(TransStatus.init(rawValue:)) ?? .unavailable)
            return
        }
        var screen = ChallengeScreenContent(uiType: text("acsUiType").flatMap(ACSUIType.init(rawValue:)) ?? .text)
        screen.header = text("challengeInfoHeader")
        screen.label = text("challengeInfoLabel") ?? json["challengeEntryBox"]?["challengeDataEntryLabel"]?.stringValue
        screen.text = text("challengeInfoText")
        screen.textIsWarning = text("challengeInfoTextIndicator") == "Y"
        screen.additionalInfo = text("challengeAddInfo")
        screen.submitLabel = text("submitAuthenticationLabel")
        if case .array(let items)? = json["challengeSelectInfo"] {
            screen.options = items.compactMap { $0.objectMembers?.first.flatMap { member in member.value.stringValue.map { (member.key, $0) } } }
        }
        screen.oobContinueLabel = text("oobContinueLabel") ?? text("infoContinueLabel")
        screen.oobAppURL = text("oobAppURL")
        screen.oobAppLabel = text("oobAppLabel")
        screen.html = text("acsHTML").flatMap(Self.decodeHTML)
        screen.htmlRefresh = text("acsHTMLRefresh").flatMap(Self.decodeHTML)
        screen.expandInfoLabel = text("expandInfoLabel")
        screen.expandInfoText = text("expandInfoText")
        screen.whyInfoLabel = text("whyInfoLabel")
        screen.whyInfoText = text("whyInfoText")
        screen.resendInformationLabel = text("resendInformationLabel")
        screen.issuerImage = json["issuerImage"]
        screen.psImage = json["psImage"]
        screen.whitelistingInfoText = text("whitelistingInfoText") ?? text("trustListInfoText")
        content = .screen(screen)
    }

    public var isFinal: Bool { if case .final = content { true } else { false } }

    public var json: JSONValue {
        var members: [(String, JSONValue?)] = [
            ("messageType", .string(MessageType.cRes.rawValue)),
            ("messageVersion", .string(messageVersion.rawValue)),
            ("threeDSServerTransID", .string(ids.threeDSServerTransID)),
            ("acsTransID", .string(ids.acsTransID)),
            ("sdkTransID", .string(ids.sdkTransID)),
            ("acsCounterAtoS", .string(CReq.counterText(counter))),
        ]
        switch content {
        case .final(let status):
            members += [("challengeCompletionInd", .string("Y")), ("transStatus", .string(status.rawValue))]
        case .screen(let screen):
            members.append(("challengeCompletionInd", .string("N")))
            members += screen.json(version: messageVersion, htmlEncoder: Self.encodeHTML)
        }
        return ChallengeRules.cRes.build(members, version: messageVersion)
    }

    /// `acsHTML` is the HTML's UTF-8 in unpadded base64url.
    static func encodeHTML(_ html: String) -> String { Base64URL.encode(html) }

    static func decodeHTML(_ encoded: String) -> String? {
        (try? Base64URL.decode(encoded, part: "acsHTML")).map { String(decoding: $0, as: UTF8.self) }
    }
}
