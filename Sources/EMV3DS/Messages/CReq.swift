public import JSON

/// A Challenge Request, as decrypted from the secure channel: the ids, the SDK's counter,
/// and what the cardholder did on the last screen.
public struct CReq: Sendable {
    /// What the cardholder did; one per CReq (the first CReq usually carries none).
    public enum Action: Sendable, Equatable {
        /// No answer: the CReq that asks for the first screen.
        case none
        /// Text typed, or the selected keys (comma-separated for multi-select).
        case dataEntry(String)
        /// The query string of the form an HTML screen posted to `https://emv3ds/challenge`.
        case htmlDataEntry(String)
        case cancel(ChallengeCancel)
        case oobContinue
        case resend
        /// An empty submit (`challengeNoEntry` "Y").
        case noEntry

        /// The element that carries the action, as a report names it.
        public var elementName: String {
            switch self {
            case .none: "no entry element"
            case .dataEntry: "challengeDataEntry"
            case .htmlDataEntry: "challengeHTMLDataEntry"
            case .cancel: "challengeCancel"
            case .oobContinue: "oobContinue"
            case .resend: "resendChallenge"
            case .noEntry: "challengeNoEntry"
            }
        }
    }

    public var messageVersion: MessageVersion
    public var threeDSServerTransID: String
    public var acsTransID: String
    public var sdkTransID: String
    /// `sdkCounterStoA`: "000" for the first CReq, one more for each after it.
    public var counter: Int
    public var action: Action
    /// `whitelistingDataEntry` (2.2.0+): the cardholder's answer to the whitelisting prompt.
    public var whitelistingDataEntry: String?
    /// `threeDSRequestorAppURL` (2.2.0+): where an OOB app returns the cardholder.
    public var threeDSRequestorAppURL: String?
    /// `oobAppURLInd` (2.3.1): 01 the SDK supports the OOB App URL, 02 not the device, 03 not the requestor. A simulated
    /// device opens no OOB app: 02 unless set.
    public var oobAppURLInd: String?
    /// Members beyond the standard ones, kept as sent (e.g. `messageExtensions`).
    public var extraMembers: [(key: String, value: JSONValue)] = []

    public init(messageVersion: MessageVersion, threeDSServerTransID: String, acsTransID: String, sdkTransID: String,
                counter: Int, action: Action) {
        self.messageVersion = messageVersion
        self.threeDSServerTransID = threeDSServerTransID
        self.acsTransID = acsTransID
        self.sdkTransID = sdkTransID
        self.counter = counter
        self.action = action
    }

    /// Reads and validates a decrypted CReq.
    public init(bytes: [UInt8]) throws(InvalidMessage) {
        let envelope = try MessageEnvelope.read(bytes, rules: ChallengeRules.cReq)
        let json = envelope.json
        func text(_ name: String) -> String? { json[name]?.stringValue }
        self.init(messageVersion: envelope.version, threeDSServerTransID: text("threeDSServerTransID") ?? "",
                  acsTransID: text("acsTransID") ?? "", sdkTransID: text("sdkTransID") ?? "",
                  counter: text("sdkCounterStoA").flatMap { Int($0) } ?? 0, action: .none)
        // One action decides; a cancel outweighs anything sent beside it.
        if let cancel = text("challengeCancel").flatMap(ChallengeCancel.init(rawValue:)) {
            action = .cancel(cancel)
        } else if text("resendChallenge") == "Y" {
            action = .resend
        } else if let entry = text("challengeDataEntry") {
            action = .dataEntry(entry)
        } else if let entry = text("challengeHTMLDataEntry") {
            action = .htmlDataEntry(entry)
        } else if json["oobContinue"] == .bool(true) || ["01", "02"].contains(text("oobContinue") ?? "")
                    || json["infoContinueIndicator"] == .bool(true) {
            // 2.3.1 sends oobContinue as "01"/"02", and the information screen's button as infoContinueIndicator.
            action = .oobContinue
        } else if text("challengeNoEntry") == "Y" {
            action = .noEntry
        }
        whitelistingDataEntry = text("whitelistingDataEntry") ?? text("trustListDataEntry")
        threeDSRequestorAppURL = text("threeDSRequestorAppURL")
        oobAppURLInd = text("oobAppURLInd")
    }

    public var ids: TransactionIDs {
        TransactionIDs(threeDSServerTransID: threeDSServerTransID, acsTransID: acsTransID, sdkTransID: sdkTransID)
    }

    /// The counter as sent: three digits.
    public static func counterText(_ counter: Int) -> String {
        let digits = String(counter)
        return String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }

    /// The message, built through `ChallengeRules.cReq` for its version. `continuing` says
    /// which screen a continue answers: the 2.3.1 information screen has its own indicator.
    public func json(continuing screen: ACSUIType? = nil) -> JSONValue {
        var members: [(String, JSONValue?)] = [
            ("messageType", .string(MessageType.cReq.rawValue)),
            ("messageVersion", .string(messageVersion.rawValue)),
            ("threeDSServerTransID", .string(threeDSServerTransID)),
            ("acsTransID", .string(acsTransID)),
            ("sdkTransID", .string(sdkTransID)),
            ("sdkCounterStoA", .string(Self.counterText(counter))),
            ("oobAppURLInd", .string(oobAppURLInd ?? "02")),
        ]
        switch action {
        case .none: break
        case .dataEntry(let entry): members.append(("challengeDataEntry", .string(entry)))
        case .htmlDataEntry(let entry): members.append(("challengeHTMLDataEntry", .string(entry)))
        case .cancel(let cancel): members.append(("challengeCancel", .string(cancel.rawValue)))
        case .oobContinue where screen == .information && messageVersion >= .v2_3_1:
            members.append(("infoContinueIndicator", .bool(true)))
        case .oobContinue: members.append(("oobContinue", messageVersion >= .v2_3_1 ? .string("01") : .bool(true)))
        case .resend: members.append(("resendChallenge", .string("Y")))
        case .noEntry: members.append(("challengeNoEntry", .string("Y")))
        }
        members.append(("whitelistingDataEntry", .string(whitelistingDataEntry)))
        members.append(("trustListDataEntry", .string(whitelistingDataEntry)))
        members.append(("threeDSRequestorAppURL", .string(threeDSRequestorAppURL)))
        // Members beyond the table (e.g. `messageExtensions`) go out as set, for tests of tolerance.
        guard case .object(let built) = ChallengeRules.cReq.build(members, version: messageVersion) else { return .object(extraMembers) }
        return .object(built + extraMembers)
    }

    public var json: JSONValue { json() }
}
