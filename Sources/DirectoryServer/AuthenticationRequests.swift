import EMV3DS
import EMVCrypto
import Faults
import Foundation
import JOSE
import Journal
import JSON
import Logging
import Messaging
import Net
import Scenarios
import Store

// The AReq: checked, its device data decrypted, routed by card range to the ACS, its ARes relayed back (or the DS's own answer).
extension DirectoryServer {
    func authenticate(_ request: HTTPRequest) async -> HTTPResponse {
        if let erro = request.erroMessage { return await forward(erro) }
        // The router refused a team name that is none before this route.
        let team = try? request.team()
        // Given before the AReq is read: the journal keeps a refused AReq too.
        let dsTransID = TransactionIdentifier.make()
        var areq: AReq
        do { areq = try AReq(bytes: try request.emvMessageBody(), written: request.writtenJSON, rules: AReqRules.fromThreeDSServer) } catch {
            logger.info("AReq refused", metadata: ["reason": "\(error)"])
            return await refused(request, dsTransID: dsTransID, error)
        }
        // As the 3DS Server sent it: the journal keeps the AReq relayed to the ACS as what the DS changed of it.
        let received = areq.json
        if !areq.warnings.isEmpty { logger.info("AReq warnings", metadata: ["warnings": "\(areq.warnings)"]) }
        // A 3DS Server makes a new threeDSServerTransID for every AReq; the DS refuses one it has seen.
        guard serverTransIDs.insert(areq.threeDSServerTransID, dsTransID) else {
            let reason = "was the id of an earlier AReq; a 3DS Server makes a new one for each"
            // The earlier transaction's case fails too: its AReq was sent again (a retry of a refused AReq, say).
            if let earlier = serverTransIDs.get(areq.threeDSServerTransID) {
                journal?.check(earlier, .fail(.areqElements, "threeDSServerTransID \(areq.threeDSServerTransID) was sent again in a later AReq (dsTransID \(dsTransID)): "
                                                + "an AReq, also one sent again after a refusal or a failure, has a new threeDSServerTransID"))
            }
            return await refused(request, dsTransID: dsTransID,
                           InvalidMessage(Violation(field: "threeDSServerTransID", code: .duplicate(in: areq.version), reason: reason), about: areq.json))
        }
        var facts = TransactionFacts(areq)
        facts.inTestRun = request.harnessCase != nil
        facts.team = team
        let scenario = await scenarios?.scenario(for: facts, transaction: dsTransID)
        var ids = areq.ids
        ids.dsTransID = dsTransID
        // The entry's first part is put together here and opened once: as an open, two messages and
        // four checks it was seven locked updates of a store the loops share.
        var entry = JournalEntry(dsTransID: dsTransID, ids: ids, pan: areq.acctNumber, version: areq.version.rawValue,
                                 channel: areq.deviceChannel, scenario: scenario?.name)
        entry.caseTag = request.harnessCase
        entry.add(from: .threeDSServer, to: .directoryServer, type: MessageType.aReq.rawValue, body: request.body)
        entry.record(.pass(.areqElements))
        entry.record(areq.warnings.isEmpty ? .pass(.areqUndefinedMembers)
                                           : CheckResult(.areqUndefinedMembers, .warning, areq.warnings.joined(separator: "; ")))
        if let purchaseDate = areq["purchaseDate"] {
            entry.record(Self.purchaseDateCheck(purchaseDate, now: settings.clock.date(), cardholderPresent: areq.deviceChannel != DeviceChannel.threeRI.rawValue))
        }
        for check in pendingPreparationChecks(of: areq["threeDSServerRefNumber"]) { entry.record(check) }
        entry.record(cardRangeCheck(areq, team: team))
        guard let scheme = settings.schemes.scheme(for: areq.acctNumber) else {
            await journal?.open(entry)
            return answered(dsTransID, outOfRange(areq, dsTransID: dsTransID))
        }
        if areq.deviceChannel == DeviceChannel.app.rawValue {
            entry.record(.pass(.sdkParameters))
            // A Split-SDK's server vouches for the transaction before anything else of it is read (SB 279 Req 390).
            if areq["sdkType"] == SplitSDK.sdkType {
                let check = splitSDKCheck(areq, scheme: scheme)
                entry.record(check)
                if check.verdict == .fail {
                    await journal?.open(entry)
                    var about = areq.json
                    about.set("dsTransID", .string(dsTransID))  // the Erro names the transaction the DS made of it
                    return answered(dsTransID, .erro(InvalidMessage(Violation(field: "sdkServerSignedContent", code: .signatureVerificationFailure,
                                                                              reason: check.detail ?? "does not verify"), about: about), from: .directoryServer))
                }
            }
            do {
                let (plaintext, information, header) = try deviceData(of: areq, scheme: scheme)
                entry.add(from: .sdk, to: .directoryServer, type: "device data", body: plaintext,
                          note: "sdkEncData, decrypted by the DS; passed to the ACS as deviceInfo")
                entry.record(.pass(.deviceDataDecrypts))
                let headerProblems = DeviceData.headerProblems(header)
                entry.record(headerProblems.isEmpty ? .pass(.deviceDataHeader, "alg \(header.alg), enc \(header.enc)")
                                                    : .fail(.deviceDataHeader, headerProblems.joined(separator: "; ")))
                entry.record(Self.deviceInformationCheck(information))
                entry.record(freshKeyCheck(areq, dsTransID: dsTransID))
                areq.set("deviceInfo", .string(Base64URL.encode(plaintext)))
            } catch {
                logger.info("sdkEncData not decrypted", metadata: ["reason": "\(error.reason)", "rid": "\(scheme.rid)"])
                entry.record(.fail(.deviceDataDecrypts, error.reason))
                await journal?.open(entry)
                return answered(dsTransID, .erro(InvalidMessage(Violation(field: "sdkEncData", code: .dataDecryptionFailure, reason: error.reason),
                                                                about: areq.json), from: .directoryServer))
            }
            areq.set("sdkEncData", nil)
        }
        await journal?.open(entry)
        areq.set("dsTransID", .string(dsTransID))
        areq.set("dsReferenceNumber", .string(settings.referenceNumber))
        areq.set("dsURL", .string(endpoints.url("/ds/rreq")))
        let acsURL = scheme.acsURL ?? endpoints.url(ACSPaths.aReq)
        let faults = scenario?.faults.on(.directoryServer) ?? []
        transactions.put(dsTransID, Transaction(ids: areq.ids, version: areq.version, channel: DeviceChannel(rawValue: areq.deviceChannel),
                                                threeDSServerURL: areq["threeDSServerURL"] ?? "", acsURL: acsURL,
                                                warnings: areq.warnings.map { "AReq: " + $0 }, erroDue: ErroDue(answerSpoiltBy: faults),
                                                resultsFaults: scenario?.faults.on(.results) ?? []))
        // The co-hosted ACS at this instance: an Erro forwarded later goes to `acsURL`, wherever the ACS's record lives then.
        let answer = await relay(areq, to: scheme.acsURL ?? endpoints.ownURL(ACSPaths.aReq), received: received, team: team)
        guard !faults.isEmpty, let json = try? JSONReader.parse(answer.body).value else { return answered(dsTransID, answer) }
        return answered(dsTransID, await FaultyAnswer.answer(json, faults: faults, from: .directoryServer),
                        note: "as the scenario's faults on the DS leg made it")
    }

    /// An AReq the DS cannot take, in the journal as far as it can be read: its card, version
    /// and ids, the failed check and the Erro.
    func refused(_ request: HTTPRequest, dsTransID: String, _ invalid: InvalidMessage) async -> HTTPResponse {
        let answer = HTTPResponse.erro(invalid, from: .directoryServer)
        guard let journal else { return answer }
        let body = request.body
        let parsed = request.bodyJSON
        let json = parsed ?? .null
        let pan = json["acctNumber"]?.stringValue
        var ids = TransactionIDs(json: json)
        ids.dsTransID = dsTransID
        var entry = JournalEntry(dsTransID: dsTransID, ids: ids, pan: pan, version: json["messageVersion"]?.stringValue,
                                 channel: json["deviceChannel"]?.stringValue,
                                 scenario: pan.map { scenarios?.unpinned(TransactionFacts(pan: $0), drawing: false).name } ?? nil)
        entry.caseTag = request.harnessCase
        entry.refused = MessageType.aReq.rawValue
        entry.add(from: .threeDSServer, to: .directoryServer, type: MessageType.aReq.rawValue, body: body, isJSON: parsed != nil)
        entry.record(.fail(.areqElements, invalid.description))
        // What the SDK made and the 3DS Server carried is the SDK's failure too (a run of either party sees its own).
        let sdkViolations = invalid.violations.filter { AReqRules.sdkParameters.contains($0.field) }
        if json["deviceChannel"]?.stringValue == DeviceChannel.app.rawValue, !sdkViolations.isEmpty {
            entry.record(.fail(.sdkParameters, sdkViolations.map(\.description).joined(separator: "; ")))
        }
        // Opened whole: a run that finds no case for it reads its failed checks as it opens.
        await journal.open(entry)
        return answered(dsTransID, answer)
    }

    /// The answer to the 3DS Server, in the journal; a final one (an Erro, an ARes neither C nor D) ends the entry.
    func answered(_ dsTransID: String, _ answer: HTTPResponse, note: String? = nil) -> HTTPResponse {
        guard let journal else { return answer }
        // What the answer is: its exchange says, unless a fault made it (then it is read).
        let exchange = answer.messageExchange?.answered.map { (type: $0.rawValue, status: answer.messageExchange?.transStatus) }
            ?? (try? JSONReader.parse(answer.body).value).map { (type: $0["messageType"]?.stringValue ?? "answer", status: $0["transStatus"]?.stringValue) }
        let type = exchange?.type ?? "answer"
        let status = exchange?.status
        journal.update(dsTransID) { entry in
            entry.add(from: .directoryServer, to: .threeDSServer, type: type, body: answer.body,
                      note: note ?? (exchange == nil ? "HTTP \(answer.status.code), not JSON" : nil), isJSON: exchange != nil)
            if status.flatMap(TransStatus.init(rawValue:))?.awaitsResult != true {
                entry.end(transStatus: status, because: status.map { "ARes \($0)" } ?? "\(type) to the 3DS Server")
            } else {
                entry.transStatus = status
            }
        }
        return answer
    }

    /// `areq.sdk-server-signed-content`: the Split-SDK server's JWS verifies under the scheme's DS CA and names this AReq's
    /// SDK and transaction.
    func splitSDKCheck(_ areq: AReq, scheme: PaymentScheme) -> CheckResult {
        guard let root = settings.keys[scheme.rid]?.caRoot else {
            return .fail(.sdkServerSignedContent, "the DS has no DS CA root for \(scheme.rid) to verify it with")
        }
        do {
            let content = try SDKServerSignedContent(verifying: areq["sdkServerSignedContent"] ?? "", with: CertificateVerifier(trustAnchors: [root]))
            if let mismatch = content.mismatch(sdkReferenceNumber: areq.sdkReferenceNumber, sdkTransID: areq.sdkTransID) {
                return .fail(.sdkServerSignedContent, mismatch)
            }
            return .pass(.sdkServerSignedContent, "signed by \(content.signer.subject) for splitSdkServerID \(content.splitSdkServerID)")
        } catch {
            return .fail(.sdkServerSignedContent, error.reason)
        }
    }

    /// The device data the SDK encrypted (JSON), decrypted with the scheme's DS key, and as read.
    func deviceData(of areq: AReq, scheme: PaymentScheme) throws(DeviceDataError) -> ([UInt8], JSONValue, JWEHeader) {
        guard let keys = settings.keys[scheme.rid] else { throw DeviceDataError(reason: "no DS keys for \(scheme.rid)") }
        let (plaintext, header) = try DeviceData.open(areq["sdkEncData"] ?? "", keys: keys, directoryServerID: scheme.rid)
        guard let json = try? JSONReader.parse(plaintext).value, json.objectMembers != nil else {
            throw DeviceDataError(reason: "sdkEncData decrypts to something other than a JSON object")
        }
        return (plaintext, json, header)
    }

    /// `areq.sdk-ephem-key`: an ephemeral key not seen with another `sdkTransID` (a 3DS Server that sends
    /// the same SDK transaction again, after an HTTP failure say, rightly sends its key again).
    func freshKeyCheck(_ areq: AReq, dsTransID: String) -> CheckResult {
        guard let x = areq.json["sdkEphemPubKey"]?["x"]?.stringValue else { return .pass(.freshEphemeralKey) }
        let sdkTransID = areq.sdkTransID ?? ""
        guard ephemeralKeys.insert(x, EphemeralKeyUse(sdkTransID: sdkTransID, dsTransID: dsTransID)) else {
            let earlier = ephemeralKeys.get(x)
            guard earlier?.sdkTransID != sdkTransID else { return .pass(.freshEphemeralKey, "the same SDK transaction sent again") }
            return .fail(.freshEphemeralKey, "sdkEphemPubKey is the key of the earlier SDK transaction \(earlier?.sdkTransID ?? "?") "
                                             + "(dsTransID \(earlier?.dsTransID ?? "?")): an SDK makes a new key pair for every transaction")
        }
        return .pass(.freshEphemeralKey)
    }

    /// `received`: the AReq as the 3DS Server sent it (the journal keeps what the DS changed of it); `team`: the 3DS
    /// Server's, passed on so that an ACS on another instance applies that team's pins.
    func relay(_ areq: AReq, to acsURL: String, received: JSONValue, team: String?) async -> HTTPResponse {
        let dsTransID = areq["dsTransID"] ?? ""
        let sent = WrittenJSON(areq.json)
        journal?.relayed(dsTransID, from: .directoryServer, to: .accessControlServer, type: MessageType.aReq.rawValue, of: .threeDSServer,
                         original: received, relayed: areq.json, body: sent.bytes)
        let answer: PeerAnswer<(envelope: MessageEnvelope, bytes: [UInt8])>
        do {
            // What this DS drew from a load mix goes with the AReq: an ACS on another instance plays that draw, not one of its own.
            var headers = HTTPHeaders()
            if let draw = scenarios?.draw(of: dsTransID) { headers.add(LoadMixDraw.header, draw.headerValue) }
            if let team { headers.add(HarnessTeam.header, team) }
            answer = try await peer.exchange(sent, url: acsURL, headers: headers) { body throws(InvalidMessage) in
                (try MessageEnvelope.read(body.bytes, written: body.written, rules: AResRules.rules, request: areq.json), body.bytes)
            }
        } catch {
            logger.warning("ACS gave no usable ARes", metadata: ["reason": "\(error)"])
            let erro = Self.erro(about: error, areq: areq)
            if case .invalid(_, let invalid) = error {
                await tellACS(areq.erro(about: invalid.violations, answered: invalid.ids, from: .directoryServer), dsTransID: dsTransID, url: acsURL)
            }
            record(dsTransID, "sent to the 3DS Server: Erro \(erro.errorCode.rawValue) about the ARes")
            return .emv(erro.json)
        }
        switch answer {
        case .erro(let erro):
            record(dsTransID, "relayed from the ACS: Erro \(erro.errorCode.rawValue)")
            journal?.message(dsTransID, from: .accessControlServer, to: .directoryServer, erro.json)
            return .emv(erro.json)
        case .message(let ares):
            journal?.message(dsTransID, from: .accessControlServer, to: .directoryServer, type: MessageType.aRes.rawValue, body: ares.bytes)
            if let unechoed = areq.unechoed(in: ares.envelope.json) ?? areq.answerNotAllowed(ares.envelope.json) {
                let erro = areq.erro(about: [unechoed], answered: TransactionIDs(json: ares.envelope.json), from: .directoryServer)
                await tellACS(erro, dsTransID: dsTransID, url: acsURL)
                record(dsTransID, "sent to the 3DS Server: Erro \(erro.errorCode.rawValue) about the ARes")
                return .emv(erro.json)
            }
            transactions.update(dsTransID) { transaction in
                transaction.aresContext = ResultsRules.aresContext(ares.envelope.json)
                transaction.ids.acsTransID = ares.envelope.json["acsTransID"]?.stringValue
                transaction.warnings += ares.envelope.warnings.map { "ARes: " + $0 }
            }
            // Relayed as the ACS wrote it, once checked (with the value read, for a 3DS Server of this process).
            return .emv(WrittenJSON(ares.envelope.json, readFrom: ares.bytes))
        }
    }

    /// The DS answers an ARes it cannot relay with an Erro to the ACS as well as to the 3DS Server (5.9.3).
    func tellACS(_ erro: ErroMessage, dsTransID: String, url: String) async {
        var erro = erro
        erro.dsTransID = dsTransID
        journal?.message(dsTransID, from: .directoryServer, to: .accessControlServer, erro.json)
        let failure = await peer.notify(erro, url: url)
        record(dsTransID, "sent to the ACS: Erro \(erro.errorCode.rawValue) about the ARes" + (failure.map { " (not delivered: \($0))" } ?? ""))
    }

    /// An Erro from the 3DS Server (about an ARes it could not process), passed on to the
    /// transaction's ACS. Erro messages are not answered with a message: an empty 200.
    func forward(_ erro: ErroMessage) async -> HTTPResponse {
        let taken = HTTPResponse.taken(erro)
        // Named by its dsTransID, or by the threeDSServerTransID when the ARes could not be read for one (malformed JSON).
        let named = erro.dsTransID ?? erro.threeDSServerTransID.flatMap { serverTransIDs.get($0) }
        guard let dsTransID = named, let transaction = transactions.get(dsTransID) else {
            logger.info("Erro from a 3DS Server names no transaction of this DS", metadata: ["errorCode": "\(erro.errorCode.rawValue)"])
            return taken
        }
        record(dsTransID, "received from the 3DS Server: Erro \(erro.errorCode.rawValue) (\(erro.errorDetail))")
        journal?.message(dsTransID, from: .threeDSServer, to: .directoryServer, erro.json)
        journal?.check(dsTransID, Self.erroCheck(erro, due: transaction.erroDue, about: .aRes, version: transaction.version))
        journal?.end(dsTransID, because: "Erro \(erro.errorCode.rawValue) from the 3DS Server")
        guard let acsURL = transaction.acsURL else { return taken }  // the DS answered this AReq itself
        var forwarded = erro
        forwarded.acsTransID = forwarded.acsTransID ?? transaction.ids.acsTransID
        journal?.message(dsTransID, from: .directoryServer, to: .accessControlServer, forwarded.json)
        let failure = await peer.notify(forwarded, url: acsURL)
        record(dsTransID, "forwarded to the ACS: Erro \(erro.errorCode.rawValue)" + (failure.map { " (not delivered: \($0))" } ?? ""))
        return taken
    }

    func record(_ dsTransID: String, _ event: String) {
        transactions.update(dsTransID) { $0.erros.append(event) }
    }

    /// The Erro the DS sends the 3DS Server when the ACS failed it.
    static func erro(about failure: PeerFailure, areq: AReq) -> ErroMessage {
        var ids = areq.ids
        let code: ErrorCode
        let detail: String
        switch failure {
        case .unreachable, .httpStatus:
            (code, detail) = (.systemConnectionFailure, "ACS")
        case .invalid(_, let invalid), .invalidErro(_, let invalid):
            (code, detail) = (invalid.code, invalid.errorDetail(elementPrefix: invalid.messageType == MessageType.erro.rawValue ? "Erro." : "ARes."))
            ids.acsTransID = invalid.ids.acsTransID
        }
        var erro = ErroMessage(messageVersion: areq.version.rawValue, errorCode: code, errorComponent: .directoryServer, errorDetail: detail,
                               errorMessageType: MessageType.aRes.rawValue, threeDSServerTransID: ids.threeDSServerTransID,
                               acsTransID: ids.acsTransID, dsTransID: areq["dsTransID"], sdkTransID: ids.sdkTransID)
        erro.explain("the ACS: \(failure.summary)")
        return erro
    }

    func outOfRange(_ areq: AReq, dsTransID: String) -> HTTPResponse {
        switch settings.outOfRange {
        case .erro:
            let reason = "is in no card range of this DS"
            return .erro(InvalidMessage(Violation(field: "acctNumber", code: .transactionDataNotValid, reason: reason), about: areq.json),
                         from: .directoryServer)
        case .ares(let status, let reason):
            var ares = ARes(messageVersion: areq.version, threeDSServerTransID: areq.threeDSServerTransID,
                            acsTransID: TransactionIdentifier.make(), dsTransID: dsTransID,
                            sdkTransID: areq.sdkTransID, acsReferenceNumber: settings.referenceNumber,
                            dsReferenceNumber: settings.referenceNumber, transStatus: status)
            ares.transStatusReason = status.carriesReason ? reason : nil
            // No ACS saw the device data: the DS answers for the version it read, the first.
            if areq.deviceChannel == DeviceChannel.app.rawValue { ares.setAppChannelFields(deviceInfoVersion: "1.0") }
            // Kept like any transaction, so an Erro about this ARes finds it (no ACS to pass it to).
            transactions.put(ares.dsTransID, Transaction(ids: areq.ids, version: areq.version, channel: DeviceChannel(rawValue: areq.deviceChannel),
                                                         threeDSServerURL: areq["threeDSServerURL"] ?? "", acsURL: nil, aresContext: ResultsRules.aresContext(ares.json)))
            return .emv(ares.json)
        }
    }

    /// Where an ephemeral key was first seen.
    struct EphemeralKeyUse: Sendable {
        let sdkTransID: String
        let dsTransID: String
    }
}
