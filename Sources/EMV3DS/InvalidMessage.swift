public import JSON

/// The transaction ids a message carries, echoed in an Erro about it.
public struct TransactionIDs: Sendable, Equatable {
    public var threeDSServerTransID: String?
    public var acsTransID: String?
    public var dsTransID: String?
    public var sdkTransID: String?

    /// The elements that name a transaction.
    public static let names = ["threeDSServerTransID", "acsTransID", "dsTransID", "sdkTransID"]

    public init(threeDSServerTransID: String? = nil, acsTransID: String? = nil, dsTransID: String? = nil, sdkTransID: String? = nil) {
        self.threeDSServerTransID = threeDSServerTransID
        self.acsTransID = acsTransID
        self.dsTransID = dsTransID
        self.sdkTransID = sdkTransID
    }

    /// The ids found in `json`; only canonical UUIDs are echoed, so an Erro never repeats a malformed id.
    public init(json: JSONValue) {
        func id(_ name: String) -> String? { json[name]?.stringValue.flatMap { FieldFormat.isCanonicalUUID($0) ? $0 : nil } }
        self.init(threeDSServerTransID: id("threeDSServerTransID"), acsTransID: id("acsTransID"),
                  dsTransID: id("dsTransID"), sdkTransID: id("sdkTransID"))
    }
}

/// A message that cannot be processed: every violation found (the first decides the Erro),
/// and what an Erro about it needs.
public struct InvalidMessage: Error, Sendable, CustomStringConvertible {
    public let violations: [Violation]
    /// `messageType` as received, for `errorMessageType`.
    public let messageType: String?
    /// `messageVersion` as received.
    public let claimedVersion: String?
    public let ids: TransactionIDs

    public init(violations: [Violation], messageType: String?, claimedVersion: String?, ids: TransactionIDs) {
        precondition(!violations.isEmpty, "an invalid message has at least one violation")
        self.violations = violations
        self.messageType = messageType
        self.claimedVersion = claimedVersion
        self.ids = ids
    }

    public init(_ violation: Violation, about json: JSONValue?) {
        self.init(violations: [violation], messageType: json?["messageType"]?.stringValue,
                  claimedVersion: json?["messageVersion"]?.stringValue, ids: json.map(TransactionIDs.init(json:)) ?? TransactionIDs())
    }

    public var code: ErrorCode { violations[0].code }

    /// The `errorDetail` of an Erro about it, as Table A.4 has it for its code (``ErrorDetail``): for 102 the versions
    /// spoken, for 202 the extensions' IDs, else the names of the elements of every violation with the first one's code,
    /// each behind `elementPrefix` ("ARes." when the Erro answers another message than the one at fault).
    public func errorDetail(elementPrefix: String = "") -> String {
        guard code != .versionNotSupported else { return ErrorDetail.supportedVersions }
        let details = violations.filter { $0.code == code }.map { $0.detail ?? elementPrefix + $0.field }
        return String(details.joined(separator: ",").prefix(2048))
    }

    public var description: String { violations.map(\.description).joined(separator: "; ") }

    /// The Erro a party answers with. Its version is the one received when the harness speaks
    /// it, else the newest it speaks (a peer cannot read an Erro in a version it sent wrongly).
    public func erro(from component: ErrorComponent) -> ErroMessage {
        let version = claimedVersion.flatMap(MessageVersion.init(rawValue:)) ?? .latest
        var erro = ErroMessage(messageVersion: version.rawValue, errorCode: code, errorComponent: component, errorDetail: errorDetail(),
                               errorMessageType: messageType.flatMap { MessageType(rawValue: $0) == nil ? nil : $0 },
                               threeDSServerTransID: ids.threeDSServerTransID, acsTransID: ids.acsTransID,
                               dsTransID: ids.dsTransID, sdkTransID: ids.sdkTransID)
        let reasons = violations.filter { $0.code == code }.map { "\($0.field) \($0.reason)" }
        erro.explain(reasons.joined(separator: "; "))
        return erro
    }

    /// The Erro about the answer to the party's own `request`: in the request's version and naming its
    /// threeDSServerTransID, whatever the answer claimed or left out.
    public func erro(from component: ErrorComponent, answering request: JSONValue) -> ErroMessage {
        var erro = erro(from: component)
        if let version = request["messageVersion"]?.stringValue { erro.messageVersion = version }
        if let id = request["threeDSServerTransID"]?.stringValue { erro.threeDSServerTransID = id }
        return erro
    }
}

extension MessageEnvelope {
    /// Reads `bytes` as a message of `rules`' type and checks every field rule; `request` is
    /// the message this one answers, if any; `channel` is the transaction's, for messages that
    /// do not carry it (RReq, RRes, CRes); `written`, the value the bytes were written from when a role of this process
    /// sent them in process (read instead of the bytes, with the same rules). Warnings ride on the envelope.
    public static func read(_ bytes: [UInt8], written: JSONValue? = nil, rules: MessageRules, request: JSONValue? = nil,
                            channel: DeviceChannel? = nil) throws(InvalidMessage) -> MessageEnvelope {
        var envelope: MessageEnvelope
        do throws(Rejection) {
            if let written {
                envelope = try MessageEnvelope(written: written, expected: [rules.messageType])
            } else {
                envelope = try MessageEnvelope(bytes: bytes, expected: [rules.messageType])
            }
        } catch {
            // The body may still be readable JSON: echo what ids it has.
            let json = written ?? (try? JSONReader.parse(bytes).value)
            throw InvalidMessage(violations: [Violation(field: error.field, code: error.code, reason: error.reason)],
                                 messageType: json?["messageType"]?.stringValue, claimedVersion: error.claimedVersion,
                                 ids: json.map(TransactionIDs.init(json:)) ?? TransactionIDs())
        }
        let context = MessageContext(version: envelope.version, channel: channel, request: request)
        let report = rules.check(envelope.json, context: context, duplicates: envelope.duplicates)
        guard report.violations.isEmpty else {
            throw InvalidMessage(violations: report.violations, messageType: rules.messageType.rawValue,
                                 claimedVersion: envelope.version.rawValue, ids: TransactionIDs(json: envelope.json))
        }
        envelope.warnings = report.warnings
        return envelope
    }
}

extension MessageEnvelope {
    /// Refuses an answer to a `request` of `version` that is in another version (203 naming messageVersion): an answer is
    /// in its request's version.
    public func answers(_ request: MessageType, in version: MessageVersion) throws(InvalidMessage) {
        guard self.version != version else { return }
        throw InvalidMessage(Violation(field: "messageVersion", code: .formatInvalid, reason: "is not the \(request.rawValue)'s \(version.rawValue)"), about: json)
    }
}

extension TransactionIDs {
    /// The fields where `answer` does not echo the ids of the request (`self`); only ids
    /// the request carried are compared.
    public func mismatches(in answer: TransactionIDs) -> [String] {
        [("threeDSServerTransID", threeDSServerTransID, answer.threeDSServerTransID), ("acsTransID", acsTransID, answer.acsTransID),
         ("dsTransID", dsTransID, answer.dsTransID), ("sdkTransID", sdkTransID, answer.sdkTransID)]
            .compactMap { name, expected, got in expected != nil && expected != got ? name : nil }
    }
}
