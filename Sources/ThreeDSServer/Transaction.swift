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
    public var ids: TransactionIDs
    public var state = State.error
    public var ares: ARes?
    public var rreq: RReq?
    public var error: String?
    public var erro: ErroMessage?
    public var violations: [String] = []
    public var messages: [(direction: Direction, at: Date, message: JSONValue)] = []

    init(areq: AReq) {
        threeDSServerTransID = areq.threeDSServerTransID
        messageVersion = areq.version
        createdAt = Date()
        maskedPAN = CardNumber.masked(areq.acctNumber)
        ids = areq.ids
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
            ("violations", violations.isEmpty ? nil : .array(violations.map(JSONValue.string))),
            ("createdAt", .string(UTCTime.iso8601(createdAt))),
            ("messages", .array(messages.map { entry in
                .object([("direction", .string(entry.direction.rawValue)), ("at", .string(UTCTime.iso8601(entry.at))),
                         ("message", entry.message)])
            })),
        ])
    }
}
