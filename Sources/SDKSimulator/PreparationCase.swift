public import EMV3DS
import EMVCrypto
import Foundation
import JSON
import Messaging
public import Net

/// A 3DS Server's PReq to a DS, and what it makes of the PRes: read with the PRes table (Annex A) for the PReq's version,
/// and an Erro posted to the DS's PReq URL about one that fails (Core specification: the 3DS Server validates the PRes;
/// Table A.4 names the code), the ranges it had kept. What a PRes case asks of a 3DS Server under test.
public struct PreparationExchange: Sendable {
    /// What the DS answered, and the Erro sent about it (nil: the PRes was taken).
    public struct Outcome: Sendable {
        public let answer: HTTPResponse
        public let erroSent: ErroMessage?
    }

    public let client: HTTPClient
    /// The DS's PReq URL (the harness's: `…/ds/preq`).
    public let url: String
    public let threeDSServerRefNumber: String
    /// Sent with each message: a run case's `X-Harness-Case`, a team's `X-Harness-Team`.
    public var headers: HTTPHeaders = [:]
    /// A wrong 3DS Server on purpose; nil for a correct one.
    public var mistake: Mistake?

    /// What a deliberately wrong 3DS Server gets wrong about a PRes.
    public enum Mistake: String, Sendable, CaseIterable {
        /// Takes whatever PRes comes: no Erro.
        case takesAnyPRes = "takes-any-pres"
        /// Answers every PRes it refuses with Erro 203, whatever was wrong.
        case erro203ForEverything = "erro-203-for-everything"
        /// Refuses a PRes with a member its table does not define (Erro 203 naming it): stricter than Annex A.
        case refusesUnknownMembers = "refuses-unknown-members"
        /// Answers an Erro in place of the PRes that does not read (no errorCode, an errorComponent outside C, S, D and A)
        /// with an Erro naming what is wrong: a receiver never answers an Erro, also one in error (EMVCo 3DS FAQ Q52).
        case answersAnInvalidErro = "answers-an-invalid-erro"
    }

    public init(client: HTTPClient, url: String, threeDSServerRefNumber: String) {
        self.client = client
        self.url = url
        self.threeDSServerRefNumber = threeDSServerRefNumber
    }

    /// One PReq without `serialNum` in `version`, the PRes read, an Erro about it when it fails the table.
    public func prepare(version: MessageVersion) async throws -> Outcome {
        let preq = PreparationRules.pReq.build([
            ("messageType", .string(MessageType.pReq.rawValue)), ("messageVersion", .string(version.rawValue)),
            ("threeDSServerRefNumber", .string(threeDSServerRefNumber)), ("threeDSServerTransID", .string(TransactionIdentifier.make())),
        ], version: version)
        let answer = try await client.post(url, body: JSONWriter.write(preq), headers: headers)
        guard mistake != .takesAnyPRes else { return Outcome(answer: answer, erroSent: nil) }
        // An Erro in place of the PRes is never answered, also when it is in error (EMVCo 3DS FAQ Q52).
        if let json = (try? JSONReader.parse(answer.body))?.value, json["messageType"]?.stringValue == MessageType.erro.rawValue {
            var problem: MessageError?
            do { _ = try ErroMessage(json: json) } catch { problem = error }
            guard mistake == .answersAnInvalidErro, let violation = problem?.violation else { return Outcome(answer: answer, erroSent: nil) }
            var erro = InvalidMessage(violation, about: json).erro(from: .threeDSServer, answering: preq)
            erro.errorMessageType = MessageType.erro.rawValue
            _ = try await client.post(url, body: JSONWriter.write(erro.json), headers: headers)
            return Outcome(answer: answer, erroSent: erro)
        }
        do throws(InvalidMessage) {
            let envelope = try MessageEnvelope.read(answer.body, rules: PreparationRules.pRes, request: preq)
            try envelope.answers(.pReq, in: version)
            let defined = Set(PreparationRules.pRes.rules(for: version).map(\.name))
            if mistake == .refusesUnknownMembers, let member = envelope.json.objectMembers?.first(where: { !defined.contains($0.key) })?.key {
                throw InvalidMessage(Violation(field: member, code: .formatInvalid, reason: "is not a member of the PRes"), about: envelope.json)
            }
            return Outcome(answer: answer, erroSent: nil)
        } catch {
            var erro = error.erro(from: .threeDSServer, answering: preq)
            if mistake == .erro203ForEverything { erro.errorCode = .formatInvalid }
            erro.errorMessageType = MessageType.pRes.rawValue
            _ = try await client.post(url, body: JSONWriter.write(erro.json), headers: headers)
            return Outcome(answer: answer, erroSent: erro)
        }
    }
}

extension Simulator {
    /// Plays the PRes case `scenario` in `version` as a correct 3DS Server: arms the case's faults for the next PReq of a
    /// reference number of its own (`POST /admin/ds/pres-faults`), sends that PReq under the run case, and answers the
    /// spoilt PRes with the Erro the table names. A line of what happened, and the Erro sent.
    public func playPreparationCase(_ scenario: String, version: MessageVersion, mistake: PreparationExchange.Mistake? = nil) async throws -> (line: String, erroSent: ErroMessage?) {
        let reference = "HARNESS-SIM-" + String(UUID().uuidString.prefix(8))
        let arming = JSONValue.object([("scenario", .string(scenario)), ("threeDSServerRefNumber", .string(reference))])
        var headers = adminHeaders
        headers.set("Content-Type", "application/json")
        let armed = try await client.post(baseURL + "/admin/ds/pres-faults", body: JSONWriter.write(arming), headers: headers)
        guard armed.status == .created else { throw SimulationError.refused(status: armed.status.code, armed.bodyText) }
        var exchange = PreparationExchange(client: client, url: baseURL + "/ds/preq", threeDSServerRefNumber: reference)
        exchange.headers = caseHeaders
        exchange.mistake = mistake
        let outcome = try await exchange.prepare(version: version)
        let line = outcome.erroSent.map { "3DS Server sent Erro \($0.errorCode.rawValue) about the PRes: \($0.errorDetail)" }
            ?? "3DS Server took the PRes (HTTP \(outcome.answer.status.code))"
        return (line, outcome.erroSent)
    }
}
