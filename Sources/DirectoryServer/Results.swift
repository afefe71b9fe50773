import EMV3DS
import Faults
import Journal
import JSON
import Logging
import Messaging
import Net
import Store

// The RReq: relayed from the ACS to the 3DS Server, and its RRes back.
extension DirectoryServer {
    /// Relays the ACS's RReq to the 3DS Server of the transaction, as received, and its RRes
    /// back. An RReq or RRes the DS cannot relay is answered with an Erro to the ACS, and the
    /// same Erro goes to the 3DS Server (5.9.8, 5.9.10); the 3DS Server's own Erro is relayed.
    func results(_ request: HTTPRequest) async -> HTTPResponse {
        let body: [UInt8]
        do { body = try request.emvMessageBody() } catch { return .erro(error, from: .directoryServer) }
        let written = request.writtenJSON
        let named = request.bodyJSON?["dsTransID"]?.stringValue
        let known = named.flatMap { dsTransID in transactions.get(dsTransID).map { (dsTransID, $0) } }
        let rreq: RReq
        do { rreq = try RReq(bytes: body, written: written, channel: known?.1.channel, ares: known?.1.aresContext) } catch {
            guard let (dsTransID, transaction) = known else { return .erro(error, from: .directoryServer) }
            return await refuse(error, of: dsTransID, transaction, about: "RReq")
        }
        guard let transaction = transactions.get(rreq.dsTransID), transaction.ids.threeDSServerTransID == rreq.threeDSServerTransID else {
            let invalid = InvalidMessage(Violation(field: "dsTransID", code: .transactionIDNotRecognised, reason: "names no transaction of this DS"),
                                         about: rreq.json)
            return .erro(invalid, from: .directoryServer)
        }
        transactions.update(rreq.dsTransID) { transaction in
            transaction.warnings += rreq.warnings.map { "RReq: " + $0 }
            transaction.resultsRelayed = true
        }
        let dsTransID = rreq.dsTransID
        journal?.message(dsTransID, from: .accessControlServer, to: .directoryServer, type: MessageType.rReq.rawValue, body: body)
        // The scenario's faults on the RReq leg spoil what goes to the 3DS Server: it owes an Erro about it.
        let faults = transaction.resultsFaults
        let sent = faults.isEmpty ? body : faults.write(rreq.json).bytes
        let erroDue = ErroDue(answerSpoiltBy: faults)
        journal?.message(dsTransID, from: .directoryServer, to: .threeDSServer, type: MessageType.rReq.rawValue, body: sent,
                         note: faults.isEmpty ? "relayed as received" : "as the scenario's faults on the RReq leg made it: " + faults.map(\.name).joined(separator: ", "),
                         isJSON: !faults.contains(.malformedJSON))
        journal?.update(dsTransID) { $0.transStatus = rreq.transStatus.rawValue }
        do {
            // Relayed unchanged, the RReq is read at the 3DS Server as the DS read it.
            let answer = try await peer.exchange(bytes: sent, written: faults.isEmpty ? request.written : nil,
                                                 url: transaction.threeDSServerURL) { body throws(InvalidMessage) in
                (body.bytes, try RRes(bytes: body.bytes, written: body.written, channel: transaction.channel).ids)
            }
            switch answer {
            case .message(let rres):
                journal?.message(dsTransID, from: .threeDSServer, to: .directoryServer, type: MessageType.rRes.rawValue, body: rres.0)
                if let codes = erroDue.codes {
                    journal?.check(dsTransID, .fail(.rreqErro, "an RRes answered the RReq the scenario spoilt (\(faults.map(\.name).joined(separator: ", "))): "
                                                    + "expected Erro \(codes.joined(separator: " or "))" + (erroDue.field.map { " naming \($0)" } ?? "")))
                } else if let unechoed = Self.unechoed(rres.1, of: rreq) {
                    // An RRes of another transaction cannot be relayed: 301 to the ACS and the 3DS Server (5.9.10).
                    journal?.check(dsTransID, .fail(.rresValid, unechoed.violations.map(\.reason).joined(separator: "; ")))
                    return await refuse(unechoed, of: dsTransID, transaction, about: "RRes")
                } else {
                    journal?.check(dsTransID, .pass(.rresValid))
                }
                journal?.message(dsTransID, from: .directoryServer, to: .accessControlServer, type: MessageType.rRes.rawValue, body: rres.0,
                                 note: "relayed as received")
                journal?.end(dsTransID, because: "RRes relayed")
                return .emv(bytes: rres.0, exchange: MessageExchange(answered: .rRes, ids: rres.1))
            case .erro(let erro):
                record(rreq.dsTransID, "relayed from the 3DS Server to the ACS: Erro \(erro.errorCode.rawValue) about the RReq")
                journal?.message(dsTransID, from: .threeDSServer, to: .directoryServer, erro.json)
                journal?.message(dsTransID, from: .directoryServer, to: .accessControlServer, erro.json, note: "relayed")
                journal?.check(dsTransID, faults.isEmpty
                    ? .fail(.rresValid, "Erro \(erro.errorCode.rawValue) (\(erro.errorDetail)) answered a valid RReq: expected an RRes")
                    : Self.erroCheck(erro, due: erroDue, about: .rReq, version: transaction.version))
                journal?.end(dsTransID, because: "Erro \(erro.errorCode.rawValue) from the 3DS Server about the RReq")
                return .emv(erro.json)
            }
        } catch {
            logger.warning("3DS Server gave no usable RRes", metadata: ["reason": "\(error)"])
            journal?.check(dsTransID, .fail(faults.isEmpty ? .rresValid : .rreqErro, (faults.isEmpty ? "no usable RRes: " : "no usable answer: ") + "\(error)"))
            journal?.end(dsTransID, because: "no usable RRes from the 3DS Server")
            switch error {
            case .invalid(_, let invalid): return await refuse(invalid, of: rreq.dsTransID, transaction, about: "RRes")
            // An Erro in error is never answered (EMVCo 3DS FAQ Q52): the ACS alone is told.
            case .invalidErro(_, let invalid): return await refuse(invalid, of: rreq.dsTransID, transaction, about: "Erro", tellingTheSender: false)
            default: break
            }
            var erro = ErroMessage(messageVersion: rreq.messageVersion.rawValue, errorCode: .systemConnectionFailure,
                                   errorComponent: .directoryServer, errorDetail: "threeDSServerURL", errorMessageType: MessageType.rReq.rawValue,
                                   threeDSServerTransID: rreq.threeDSServerTransID, acsTransID: rreq.acsTransID,
                                   dsTransID: rreq.dsTransID, sdkTransID: rreq.sdkTransID)
            erro.explain("the 3DS Server: \(error.summary)")
            record(rreq.dsTransID, "sent to the ACS: Erro 405 (the 3DS Server gave no RRes)")
            journal?.message(dsTransID, from: .directoryServer, to: .accessControlServer, erro.json)
            return .emv(erro.json)
        }
    }

    /// An RReq or RRes of a known transaction that the DS cannot relay: the Erro, in the
    /// transaction's version and with its ids, answers the ACS and goes to the 3DS Server.
    /// `tellingTheSender` false: the 3DS Server sent an Erro, which is never answered; the ACS alone gets the DS's.
    func refuse(_ invalid: InvalidMessage, of dsTransID: String, _ transaction: Transaction, about message: String,
                tellingTheSender: Bool = true) async -> HTTPResponse {
        var erro = InvalidMessage(violations: invalid.violations, messageType: message, claimedVersion: transaction.version.rawValue,
                                  ids: transaction.ids).erro(from: .directoryServer)
        erro.dsTransID = dsTransID
        journal?.message(dsTransID, from: .directoryServer, to: .accessControlServer, erro.json)
        guard tellingTheSender else {
            journal?.end(dsTransID, because: "an Erro in error from the 3DS Server about the RReq")
            record(dsTransID, "sent to the ACS: Erro \(erro.errorCode.rawValue) about the 3DS Server's Erro in error")
            return .emv(erro.json)
        }
        journal?.message(dsTransID, from: .directoryServer, to: .threeDSServer, erro.json)
        journal?.end(dsTransID, because: "Erro \(erro.errorCode.rawValue) about the \(message)")
        let failure = await peer.notify(erro, url: transaction.threeDSServerURL)
        record(dsTransID, "sent to the ACS and the 3DS Server: Erro \(erro.errorCode.rawValue) about the \(message)"
                   + (failure.map { " (not delivered to the 3DS Server: \($0))" } ?? ""))
        return .emv(erro.json)
    }
}
