import EMV3DS
import Foundation
import JSON

/// A transaction as the 3DS Server sees it: its state, outcome and message trail.
public struct Transaction: Sendable {
    public enum State: String, Sendable {
        /// Ended without a challenge.
        case frictionless
        /// The ACS asked for a challenge; the result comes by RReq.
        case challenge
        /// The result came by RReq.
        case completed
        /// No outcome: an Erro, an invalid answer, or no answer.
        case error
    }

    public enum Direction: String, Sendable { case sent, received }

    public let threeDSServerTransID: String
    public let messageVersion: MessageVersion
    public let createdAt: Date
    public let maskedPAN: String
    public let channel: DeviceChannel?
    public var ids: TransactionIDs
    public var state = State.error
    public var ares: ARes?
    public var rreq: RReq?
    public var error: String?
    /// The Erro received instead of an answer.
    public var erro: ErroMessage?
    /// Erro messages received later (from the DS, about an RRes it could not relay).
    public var erroReceived: [ErroMessage] = []
    /// The Erro this 3DS Server sent (about an invalid ARes or RReq): what a 3DS Server is judged on.
    public var erroSent: ErroMessage?
    public var violations: [String] = []
    /// Members of received messages that their tables do not define for this version or channel.
    public var warnings: [String] = []
    public var messages: [(direction: Direction, at: Date, message: JSONValue)] = []

    init(areq: AReq) {
        threeDSServerTransID = areq.threeDSServerTransID
        messageVersion = areq.version
        createdAt = Date()
        maskedPAN = CardNumber.masked(areq.acctNumber)
        channel = DeviceChannel(rawValue: areq.deviceChannel)
        ids = areq.ids
    }

    /// Why `rreq` cannot be this transaction's result: a transaction awaits one only after an
    /// ARes C or D, once, and every id the RReq carries for it must be the transaction's.
    func refusal(of rreq: RReq) -> InvalidMessage? {
        func refuse(_ field: String, _ code: ErrorCode, _ reason: String) -> InvalidMessage {
            InvalidMessage(Violation(field: field, code: code, reason: reason), about: rreq.json)
        }
        guard rreq.messageVersion == messageVersion else {
            return refuse("messageVersion", .formatInvalid, "\(rreq.messageVersion.rawValue) differs from the transaction's \(messageVersion.rawValue)")
        }
        // sdkTransID is compared only where the version's RReq carries it (not 2.1.0).
        let expected = TransactionIDs(acsTransID: ids.acsTransID, dsTransID: ids.dsTransID,
                                      sdkTransID: ResultsRules.rReq.defines("sdkTransID", in: messageVersion) ? ids.sdkTransID : nil)
        if let field = expected.mismatches(in: rreq.ids).first {
            return refuse(field, .transactionIDNotRecognised, "is not the transaction's \(field)")
        }
        guard state == .challenge else {
            if state == .completed {
                return refuse("threeDSServerTransID", ErrorCode.duplicate(in: messageVersion), "awaits no RReq: its result has already been received")
            }
            let why = ares.map { "its ARes was \($0.transStatus.rawValue), not C or D" } ?? "it has no ARes"
            return refuse("threeDSServerTransID", ErrorCode.unexpectedResults(in: messageVersion), "awaits no RReq: \(why)")
        }
        return nil
    }

    mutating func record(_ direction: Direction, _ message: JSONValue) {
        messages.append((direction, Date(), message))
    }

    mutating func apply(_ ares: ARes) {
        self.ares = ares
        ids.acsTransID = ares.acsTransID
        ids.dsTransID = ares.dsTransID
        state = ares.transStatus == .challenge || ares.transStatus == .decoupled ? .challenge : .frictionless
    }

    mutating func apply(_ rreq: RReq) {
        self.rreq = rreq
        state = .completed
    }

    mutating func fail(_ erro: ErroMessage) {
        self.erro = erro
        fail("Erro \(erro.errorCode.rawValue) from component \(erro.errorComponent.rawValue): \(erro.errorDescription)")
    }

    mutating func fail(_ reason: String) {
        state = .error
        error = reason
    }

    /// The final outcome: the RReq's when there is one, else the ARes's.
    var transStatus: String? { rreq?.transStatus.rawValue ?? ares?.transStatus.rawValue }

    /// The record as the requestor API shows it.
    public var json: JSONValue {
        let outcome = rreq.map { ($0.transStatusReason, $0.authenticationValue, $0.eci) } ?? (ares?.transStatusReason, ares?.authenticationValue, ares?.eci)
        let challenge: JSONValue? = ares.flatMap { ares in
            guard state == .challenge || rreq != nil, ares.transStatus == .challenge || ares.transStatus == .decoupled else { return nil }
            return .object(omittingAbsent: [
                ("threeDSServerTransID", .string(threeDSServerTransID)), ("acsTransID", .string(ares.acsTransID)),
                ("acsRefNumber", .string(ares.acsReferenceNumber)), ("acsSignedContent", .string(ares.acsSignedContent)),
            ])
        }
        return .object(omittingAbsent: [
            ("threeDSServerTransID", .string(threeDSServerTransID)),
            ("state", .string(state.rawValue)),
            ("messageVersion", .string(messageVersion.rawValue)),
            ("acctNumber", .string(maskedPAN)),
            ("transStatus", .string(transStatus)),
            ("transStatusReason", .string(outcome.0)),
            ("authenticationValue", .string(outcome.1)),
            ("eci", .string(outcome.2)),
            ("dsTransID", .string(ids.dsTransID)),
            ("acsTransID", .string(ids.acsTransID)),
            ("sdkTransID", .string(ids.sdkTransID)),
            ("challengeCancel", .string(rreq?.challengeCancel)),
            ("whiteListStatus", .string(rreq?.whiteListStatus)),
            ("challenge", challenge),
            ("error", .string(error)),
            ("erro", erro?.json),
            ("erroSent", erroSent?.json),
            ("erroReceived", erroReceived.isEmpty ? nil : .array(erroReceived.map(\.json))),
            ("violations", violations.isEmpty ? nil : .array(violations.map(JSONValue.string))),
            ("warnings", warnings.isEmpty ? nil : .array(warnings.map(JSONValue.string))),
            ("createdAt", .string(UTCTime.iso8601(createdAt))),
            ("messages", .array(messages.map { entry in
                .object([("direction", .string(entry.direction.rawValue)), ("at", .string(UTCTime.iso8601(entry.at))),
                         ("message", CardNumber.maskingAcctNumber(in: entry.message))])
            })),
        ])
    }
}
