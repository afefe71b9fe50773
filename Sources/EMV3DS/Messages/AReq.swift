public import JSON

/// An Authentication Request, read and validated. The message is kept whole, in received
/// order, because the DS forwards it with only its own fields changed.
public struct AReq: Sendable {
    public private(set) var json: JSONValue
    public let version: MessageVersion
    /// What validation let through: members the table does not define for this version or channel.
    public private(set) var warnings: [String] = []

    /// Reads and validates an AReq on one of its legs (`AReqRules.fromThreeDSServer` or `.fromDirectoryServer`); `written`,
    /// the value the bytes were written from, when a role of this process sent them in process.
    public init(bytes: [UInt8], written: JSONValue? = nil, rules: MessageRules) throws(InvalidMessage) {
        let envelope = try MessageEnvelope.read(bytes, written: written, rules: rules)
        json = envelope.json
        version = envelope.version
        warnings = envelope.warnings
    }

    /// An AReq built by a 3DS Server; call `validate` before sending it.
    public init(json: JSONValue, version: MessageVersion) {
        self.json = json
        self.version = version
    }

    /// Every violation of `rules`, empty when the message is valid.
    public func violations(of rules: MessageRules) -> [Violation] { rules.validate(json, version: version) }

    public subscript(field: String) -> String? { json[field]?.stringValue }

    public var threeDSServerTransID: String { self["threeDSServerTransID"] ?? "" }
    public var acctNumber: String { self["acctNumber"] ?? "" }
    public var deviceChannel: String { self["deviceChannel"] ?? "" }
    public var messageCategory: String { self["messageCategory"] ?? "" }
    public var sdkTransID: String? { self["sdkTransID"] }
    public var sdkReferenceNumber: String? { self["sdkReferenceNumber"] }
    public var ids: TransactionIDs { TransactionIDs(json: json) }

    /// What is wrong when `answer` (its ARes) does not echo this AReq: an id it carried is
    /// another (301), or the version changed (203); nil when it echoes them all.
    public func unechoed(in answer: JSONValue) -> Violation? {
        if let field = ids.mismatches(in: TransactionIDs(json: answer)).first {
            return Violation(field: field, code: .transactionIDNotRecognised, reason: "is not the AReq's")
        }
        guard answer["messageVersion"]?.stringValue == version.rawValue else {
            return Violation(field: "messageVersion", code: .formatInvalid, reason: "is not the AReq's \(version.rawValue)")
        }
        return nil
    }

    /// Why the answer is not one this AReq allows (Erro 203): a `transStatus` Table A.17 and its footnotes refuse (C or S in
    /// a 3RI authentication, D where the requestor did not ask for decoupled authentication as its primary method: Y, in
    /// 2.3.1 Y or B, footnote 10; S without `threeDSRequestorSpcSupport` Y, footnote 13), or an `authenticationMethod` 01
    /// or 06 for a limited Split-SDK (SB 279, `authenticationMethod`). Nil when it is allowed.
    public func answerNotAllowed(_ answer: JSONValue) -> Violation? {
        let methods = answer["authenticationMethod"]?.arrayValue?.compactMap(\.stringValue) ?? []
        if isLimitedSplitSDK, let method = methods.first(where: SplitSDK.methodsNotForLimited.contains) {
            return Violation(field: "authenticationMethod", code: .formatInvalid,
                             reason: "\(method) is not valid for a limited Split-SDK (splitSdkType.limitedInd Y)")
        }
        guard let status = answer["transStatus"]?.stringValue.flatMap(TransStatus.init(rawValue:)) else { return nil }
        func refuse(_ why: String) -> Violation { Violation(field: "transStatus", code: .formatInvalid, reason: "\(status.rawValue) \(why)") }
        switch status {
        case .challenge where deviceChannel == DeviceChannel.threeRI.rawValue,
             .securePaymentConfirmation where deviceChannel == DeviceChannel.threeRI.rawValue:
            return refuse("is not valid for a 3RI authentication (deviceChannel 03)")
        case .decoupled where !DecoupledRequest.allowsARes(version: version, indicator: self["threeDSRequestorDecReqInd"]):
            return refuse("answers an AReq whose threeDSRequestorDecReqInd \(self["threeDSRequestorDecReqInd"] ?? "absent") did not ask for decoupled authentication")
        case .securePaymentConfirmation where self["threeDSRequestorSpcSupport"] != "Y":
            return refuse("answers an AReq without threeDSRequestorSpcSupport Y")
        default:
            return nil
        }
    }

    /// A Split-SDK (2.3.1 `sdkType` 02) whose client has limited capabilities (`splitSdkType.limitedInd` Y).
    public var isLimitedSplitSDK: Bool { self["sdkType"] == SplitSDK.sdkType && json["splitSdkType"]?["limitedInd"]?.stringValue == "Y" }

    /// A Split-SDK/Browser (2.3.1 `sdkType` 02, `splitSdkType.sdkVariant` 02), which cannot open an OOB app.
    public var isSplitSDKBrowser: Bool { self["sdkType"] == SplitSDK.sdkType && json["splitSdkType"]?["sdkVariant"]?.stringValue == SplitSDK.browserVariant }

    /// An Erro about its ARes that names this AReq's transaction, in its version, with the
    /// ACS's `acsTransID` and `dsTransID` where the ARes carried them (`answered`).
    public func erro(about violations: [Violation], answered: TransactionIDs, from component: ErrorComponent) -> ErroMessage {
        var ids = self.ids
        ids.acsTransID = answered.acsTransID
        ids.dsTransID = ids.dsTransID ?? answered.dsTransID
        return InvalidMessage(violations: violations, messageType: MessageType.aRes.rawValue, claimedVersion: version.rawValue, ids: ids)
            .erro(from: component)
    }

    /// Sets or (with nil) removes a field, as the DS does on the way to the ACS.
    public mutating func set(_ field: String, _ value: JSONValue?) { json.set(field, value) }
}
