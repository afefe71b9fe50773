import EMV3DS
import EMVCrypto
import Faults
import JOSE
import Journal
import JSON
import Logging
import Messaging
import Net
import Scenarios
import Store

/// `POST /acs/challenge`: the app channel. Each CReq arrives as a JWE under the secure
/// channel's key; each answer is a CRes JWE in the same `enc`, or an Erro in plain JSON.
extension AccessControlServer {
    /// A CReq the ACS cannot process: the Erro to answer, and whether it ends the transaction.
    struct ChallengeRefusal: Error {
        let invalid: InvalidMessage
        /// The open transaction it ends, if the CReq named one.
        let ends: String?
        /// The check of the SDK it fails.
        let fails: ConformanceCheck?

        init(invalid: InvalidMessage, ends: String?, fails: ConformanceCheck? = nil) {
            self.invalid = invalid
            self.ends = ends
            self.fails = fails
        }

        init(_ field: String, _ code: ErrorCode, _ reason: String, about json: JSONValue? = nil, ends: String? = nil, fails: ConformanceCheck? = nil) {
            self.init(invalid: InvalidMessage(Violation(field: field, code: code, reason: reason), about: json), ends: ends, fails: fails)
        }
    }

    /// A CReq decrypted and checked against its transaction, not yet counted.
    private struct OpenedCReq {
        let creq: CReq
        let acsTransID: String
        let transaction: Transaction
        let channel: SecureChannel
        let encryption: ContentEncryptionAlgorithm
        /// The transaction's ids, echoed in an Erro.
        let known: JSONValue
        var dsTransID: String? { transaction.ids.dsTransID }
    }

    func challenge(_ request: HTTPRequest) async -> HTTPResponse {
        // An SDK posts its Erro as plain JSON, with either Content-Type: tell it by the body.
        if request.body.first(where: { !Self.isWhitespace($0) }) == UInt8(ascii: "{") {
            return await sdkErro(request.body)
        }
        do {
            return try await answer(request.body)
        } catch {
            logger.info("CReq refused", metadata: ["reason": "\(error.invalid)", "acsTransID": "\(error.ends ?? "-")"])
            let answer = HTTPResponse.erro(error.invalid, from: .acs)
            if let transaction = (error.ends ?? error.invalid.ids.acsTransID).flatMap(transactions.get) {
                let dsTransID = transaction.ids.dsTransID
                if let check = error.fails { journal?.check(dsTransID, .fail(check, error.invalid.description)) }
                journal?.message(dsTransID, from: .accessControlServer, to: .sdk, type: MessageType.erro.rawValue, body: answer.body)
            }
            if let acsTransID = error.ends {
                await end(acsTransID, because: "Erro \(error.invalid.code.rawValue) sent to the SDK", cancel: .erroToSDK,
                          erro: error.invalid.erro(from: .acs))
            }
            return answer
        }
    }

    private func answer(_ body: [UInt8]) async throws(ChallengeRefusal) -> HTTPResponse {
        let opened = try open(body)
        switch try decide(opened) {
        case .show(let screen):
            return try await send(.screen(screen), answering: opened)
        case .finish(let result):
            // The specification orders the RReq (and its RRes) before the final CRes.
            await report(opened.acsTransID, result)
            return try await send(.final(result.transStatus.inFinalCRes), answering: opened)
        }
    }

    /// Reads the JWE, finds its transaction by `kid`, decrypts it with the channel key and
    /// checks the CReq against the transaction: version and ids.
    private func open(_ body: [UInt8]) throws(ChallengeRefusal) -> OpenedCReq {
        let text = String(decoding: body, as: UTF8.self)
        guard text.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 4 else {
            throw ChallengeRefusal("message", .messageNotRecognised, "is neither a CReq JWE nor an Erro")
        }
        let jwe: JWE
        do { jwe = try JWE(compact: text) } catch { throw ChallengeRefusal("CReq", .dataDecryptionFailure, "JWE unreadable: \(error)") }
        guard let kid = jwe.header.kid, let transaction = transactions.get(kid) else {
            throw ChallengeRefusal("kid", .transactionIDNotRecognised, "names no transaction of this ACS",
                                   about: .object([("acsTransID", .string(jwe.header.kid ?? ""))]))
        }
        let known = transaction.idsJSON
        let dsTransID = transaction.ids.dsTransID
        if let late = transaction.sdkTimeout?.check(creqAt: settings.clock.instant()) { journal?.check(dsTransID, late) }
        if transaction.noCReqDue {
            journal?.check(dsTransID, .fail(.challengeEnd, "the SDK sent a CReq after an answer it must stop at (an acsSignedContent or a CRes "
                                                          + "it must reject, an Erro from the ACS)"))
        }
        guard case .challenge(let state) = transaction.phase else {
            journal?.message(dsTransID, from: .sdk, to: .accessControlServer, type: MessageType.cReq.rawValue, body: body, note: "after the challenge ended",
                             isJSON: false)
            // An SDK sends nothing after the final CRes: graded, not only answered (after the ACS's own time limit, only answered).
            throw ChallengeRefusal("acsTransID", .transactionIDNotRecognised, Self.afterTheEnd(transaction), about: known,
                                   fails: transaction.creqAfterEndFails)
        }
        guard case .secureChannel(let channel) = state.medium else {
            throw ChallengeRefusal("acsTransID", .transactionIDNotRecognised, "is a browser challenge: its CReq goes to the acsURL as a form", about: known)
        }
        let plaintext: [UInt8]
        do { plaintext = try channel.open(text, direction: .sdkToACS).plaintext } catch {
            logger.debug("CReq decryption failed", metadata: ["reason": "\(error.logDescription)"])
            // Which input the SDK got wrong, where a derivation SDKs get wrong (or another challenge's channel) opens it.
            let mistake = state.keyInputs.flatMap { inputs in
                let others = recentChannels.others(than: kid)
                return inputs.mistake(opening: text, otherReferences: others.references, otherChannels: others.channels)
            }
            let diagnosis = mistake.map { "; it opens with \($0)" } ?? ""
            journal?.message(dsTransID, from: .sdk, to: .accessControlServer, type: MessageType.cReq.rawValue, body: body,
                             note: "not decrypted: \(error.logDescription)\(diagnosis)", isJSON: false)
            throw ChallengeRefusal("CReq", .dataDecryptionFailure, "cannot be decrypted with the channel key\(diagnosis)", about: known, ends: kid,
                                   fails: .creqDecrypts)
        }
        // A Split-SDK protects its CReqs with A128GCM only (SB 279 §6.2.4.1): another enc is Erro 310, and the RReq (§5.9.5).
        if transaction.splitSDK, jwe.contentEncryption != .a128gcm {
            journal?.message(dsTransID, from: .sdk, to: .accessControlServer, type: MessageType.cReq.rawValue, body: plaintext,
                             note: "decrypted by the ACS (\(jwe.contentEncryption.rawValue)), refused: a Split-SDK's", isJSON: true)
            throw ChallengeRefusal("CReq", .incorrectCryptographicAlgorithm,
                                   "a Split-SDK (sdkType 02) protects its CReq with A128GCM, not \(jwe.contentEncryption.rawValue)",
                                   about: known, ends: kid, fails: .creqDecrypts)
        }
        journal?.check(dsTransID, .pass(.creqDecrypts))
        func journalCReq(isJSON: Bool) {
            journal?.message(dsTransID, from: .sdk, to: .accessControlServer, type: MessageType.cReq.rawValue, body: plaintext,
                             note: "decrypted by the ACS (\(jwe.contentEncryption.rawValue))", isJSON: isJSON)
        }
        let creq: CReq
        do { creq = try CReq(bytes: plaintext) } catch {
            // Only a CReq that is not one is read again, to tell JSON from other bytes.
            journalCReq(isJSON: (try? JSONReader.parse(plaintext)) != nil)
            throw ChallengeRefusal(invalid: error.echoing(known), ends: kid, fails: .creqElements)
        }
        journalCReq(isJSON: true)
        // OOB App URL does not work for a Split-SDK/Browser: its CReqs say 02 (SB 279, oobAppURLInd).
        if transaction.splitSDKBrowser, creq.messageVersion >= .v2_3_1, creq.oobAppURLInd != "02" {
            throw ChallengeRefusal("oobAppURLInd", .formatInvalid, "is \(creq.oobAppURLInd ?? "absent"), not 02: a Split-SDK/Browser (splitSdkType.sdkVariant 02) cannot open an OOB app",
                                   about: known, ends: kid, fails: .creqElements)
        }
        journal?.check(dsTransID, .pass(.creqElements))
        guard creq.messageVersion == transaction.version else {
            throw ChallengeRefusal("messageVersion", .versionNotSupported,
                                   "\(creq.messageVersion.rawValue) differs from the transaction's \(transaction.version.rawValue)",
                                   about: known, ends: kid, fails: .creqIdentifiers)
        }
        let channelIDs = TransactionIDs(threeDSServerTransID: transaction.ids.threeDSServerTransID, acsTransID: transaction.ids.acsTransID,
                                        sdkTransID: transaction.ids.sdkTransID)
        if let field = channelIDs.mismatches(in: creq.ids).first {
            throw ChallengeRefusal(field, .transactionIDNotRecognised, "does not match the transaction", about: known, ends: kid,
                                   fails: .creqIdentifiers)
        }
        journal?.check(dsTransID, .pass(.creqIdentifiers))
        return OpenedCReq(creq: creq, acsTransID: kid, transaction: transaction, channel: channel,
                          encryption: jwe.contentEncryption, known: known)
    }

    /// Why a CReq after the end is refused (Erro 301), and what fails `challenge.end`: how the challenge ended.
    static func afterTheEnd(_ transaction: Transaction) -> String {
        guard case .ended(let why) = transaction.phase else { return "the challenge has ended: no CReq is due" }
        return "the challenge has ended (\(why)): no CReq is due after it"
    }

    /// Claims the counter and takes the decision at once, so a replayed or concurrent CReq cannot pass.
    private func decide(_ opened: OpenedCReq) throws(ChallengeRefusal) -> ChallengeSession.Decision {
        let (creq, kid, known) = (opened.creq, opened.acsTransID, opened.known)
        var oobContinuation: CheckResult?
        // A final CRes the SDK must refuse: its end is judged by the Erro that follows it (or its absence, at the case's deadline).
        let refusalDueIfFinal = ErroDue(answerSpoiltBy: opened.transaction.faults.on(.sdk, round: creq.counter)).codes != nil
        var finalRefusalDue = false
        let step: Result<ChallengeSession.Decision, ChallengeRefusal>? = transactions.update(kid) { transaction in
            guard case .challenge(var state) = transaction.phase else {
                return .failure(ChallengeRefusal("acsTransID", .transactionIDNotRecognised, Self.afterTheEnd(transaction), about: known,
                                                 fails: transaction.creqAfterEndFails))
            }
            guard creq.counter == state.nextCounter else {
                return .failure(ChallengeRefusal("sdkCounterStoA", .dataDecryptionFailure,
                                                 "is \(CReq.counterText(creq.counter)), expected \(CReq.counterText(state.nextCounter))",
                                                 about: known, ends: kid, fails: .creqCounter))
            }
            state.nextCounter += 1
            oobContinuation = state.session.oobContinuation(of: creq.action, isFirst: creq.counter == 0)
            let decision = state.session.handle(creq)
            transaction.phase = .challenge(state)
            if case .finish(let result) = decision {
                transaction.leaveChallenge(for: .ended(result.cancel.map { "challenge cancelled (\($0.rawValue))" } ?? "challenge completed"))
                finalRefusalDue = result.cancel == nil && refusalDueIfFinal
                transaction.finalCResRefusalDue = finalRefusalDue
            }
            return .success(decision)
        }
        guard let step else {
            throw ChallengeRefusal("acsTransID", .transactionIDNotRecognised, "names no transaction of this ACS", about: known)
        }
        let decision = try step.get()
        journal?.check(opened.dsTransID, .pass(.creqCounter))
        if let oobContinuation { journal?.check(opened.dsTransID, oobContinuation) }
        if case .finish(let result) = decision {
            let ending: ChallengeEnding = result.cancel.map { .cancelledBySDK($0.rawValue) } ?? .completed(result.transStatus.rawValue)
            if !finalRefusalDue { journalChallengeEnd(opened.transaction, ending) }
        }
        return decision
    }

    /// The CRes answering the CReq, spoilt as the scenario's faults on the SDK leg say, sealed in the CReq's `enc`.
    private func send(_ content: CRes.Content, answering opened: OpenedCReq) async throws(ChallengeRefusal) -> HTTPResponse {
        let creq = opened.creq
        // acsSignedContent's faults are the ARes's: none of them spoils a CRes.
        let faults = opened.transaction.faults.on(.sdk, round: creq.counter).filter { !$0.isOnSignedContent }
        if faults.contains(where: { $0.erroInstead != nil }) { return await erroInstead(of: content, answering: opened, faults: faults) }
        let (message, cresBytes) = faults.write(CRes(answering: creq, content: content).json,
                                                previousCounter: creq.counter > 0 ? CReq.counterText(creq.counter - 1) : nil)
        let sealed: String
        do {
            sealed = try FaultyCRes.seal(cresBytes, channel: opened.channel, encryption: opened.encryption, kid: opened.acsTransID,
                                         faults: faults.compactMap(\.cresEncryptionFault))
        } catch {
            throw ChallengeRefusal("CRes", .transientSystemFailure, "cannot be encrypted: \(error)", about: opened.known, ends: opened.acsTransID)
        }
        var response = HTTPResponse(headers: ["Content-Type": "application/jose; charset=UTF-8"], body: Array(sealed.utf8))
        response.annotation = MessageExchange(answer: message)
        let spoilt = faults.isEmpty ? "" : "; spoilt by the scenario: " + faults.map(\.name).joined(separator: ", ")
        journal?.message(opened.dsTransID, from: .accessControlServer, to: .sdk, type: MessageType.cRes.rawValue, body: cresBytes,
                         note: "plaintext, encrypted to the SDK (\(opened.encryption.rawValue))" + spoilt,
                         isJSON: faults.isEmpty || (try? JSONReader.parse(cresBytes)) != nil)
        recordAnswerSent(opened, spoilt: !faults.isEmpty)
        return await FaultyAnswer.transport(response, faults: faults, about: message, from: .acs)
    }

    /// Records when the answer to the CReq went (the SDK's time limit counts from it) and, where the scenario's faults
    /// spoilt it so that a correct SDK stops (a runtime error, or an Erro in place of the CRes that it answers with none),
    /// that no CReq is due after it.
    private func recordAnswerSent(_ opened: OpenedCReq, spoilt: Bool) {
        let expectation = opened.transaction.expectation
        let stopsSDK = spoilt && (expectation?.sdk == .runtimeError || (expectation?.sdk == .protocolError && expectation?.sdkErro == nil))
        transactions.update(opened.acsTransID) { transaction in
            transaction.lastCResAt = settings.clock.instant()
            if stopsSDK { transaction.noCReqDue = true }
        }
        if stopsSDK {
            journal?.check(opened.dsTransID, .pass(.challengeEnd, "no CReq is due after this answer: a correct SDK stops with a \(expectation?.sdk?.rawValue ?? "runtime error")"))
        }
    }

    /// The Erro the scenario sends in place of the CRes, spoilt by the leg's content faults, as `application/json`: a correct
    /// SDK stops (protocolError) and answers nothing, also when the Erro is in error (EMVCo FAQ Q52). The ACS that sent it
    /// has ended the challenge, if still open: as for a CReq it refuses, the RReq (`challengeCancel` 10 from 2.3.1, 06
    /// before) goes first, where the 3DS Server would otherwise wait out the challenge's time limit for a timeout that never
    /// was; also where the Erro is cut or under another Content-Type, which the SDK still reads and stops at. Unless the
    /// answer never reaches the SDK as a body in its wait (silence, a cut connection, an HTTP error, a delay past 10 s): the
    /// challenge then ends as the SDK ends it, or at the limit.
    private func erroInstead(of content: CRes.Content, answering opened: OpenedCReq, faults: [Fault]) async -> HTTPResponse {
        let response = await FaultyAnswer.answer(CRes(answering: opened.creq, content: content).json, faults: faults, from: .acs)
        let sent = try? JSONReader.parse(response.body).value
        journal?.message(opened.dsTransID, from: .accessControlServer, to: .sdk, type: MessageType.erro.rawValue, body: response.body,
                         note: "in place of the CRes; spoilt by the scenario: " + faults.map(\.name).joined(separator: ", "), isJSON: sent != nil)
        recordAnswerSent(opened, spoilt: true)
        let erro = sent.flatMap { try? ErroMessage(json: $0) }
        guard !faults.contains(where: \.keepsTheAnswerFromTheSDK) else { return response }
        let code = erro?.errorCode.rawValue ?? "in error"
        await end(opened.acsTransID, because: "Erro \(code) sent to the SDK in place of the CRes", cancel: .erroToSDK, erro: erro,
                  ending: .erroInsteadOfCRes(code))
        return response
    }

    /// An SDK's Erro about a CRes: the challenge ends (transaction error, or the SDK's
    /// timeout for 402). The SDK does not wait for an answer; it gets an empty 200.
    private func sdkErro(_ body: [UInt8]) async -> HTTPResponse {
        guard let json = try? JSONReader.parse(body).value, let erro = try? ErroMessage(json: json) else {
            let invalid = InvalidMessage(Violation(field: "message", code: .messageNotRecognised, reason: "is JSON but not an Erro; a CReq must be a JWE"),
                                         about: try? JSONReader.parse(body).value)
            return .erro(invalid, from: .acs)
        }
        logger.info("Erro from the SDK", metadata: ["errorCode": "\(erro.errorCode.rawValue)", "acsTransID": "\(erro.acsTransID ?? "-")"])
        if let acsTransID = erro.acsTransID {
            let transaction = transactions.update(acsTransID) { transaction -> Transaction in
                transaction.sdkErroReceived = erro.errorCode
                return transaction
            }
            // Erro 402 once sdkMaxTimeout has run out is the SDK's challenge timeout, not an Erro about a CRes.
            let atTimeout = erro.errorCode == .transactionTimedOut ? transaction?.sdkTimeout?.check(erro402At: settings.clock.instant()) : nil
            if let transaction { journalSDKErro(erro, body: body, of: transaction, atTimeout: atTimeout) }
            if let transaction, transaction.finalCResRefusalDue {
                // The final CRes went, and the SDK refused it: the end the scenario expects.
                journalChallengeEnd(transaction, .erroFromSDK(erro.errorCode.rawValue))
            }
            await end(acsTransID, because: "Erro \(erro.errorCode.rawValue) from the SDK: \(erro.errorDescription)",
                      cancel: erro.errorCode == .transactionTimedOut ? .timedOutAtSDK : .erroFromSDK, erro: erro, atSDKTimeout: atTimeout != nil)
        }
        return .taken(erro)
    }

    /// Ends an open challenge after an error, and reports it; from 2.3.1 an RReq about an
    /// Erro carries it as `challengeErrorReporting`.
    /// `ending`: how the checks of the SDK read it, where the cancel code does not say.
    func end(_ acsTransID: String, because reason: String, cancel: ChallengeCancel, erro: ErroMessage? = nil, atSDKTimeout: Bool = false,
             ending: ChallengeEnding? = nil) async {
        let ended: (interactions: Int, transaction: Transaction)? = transactions.update(acsTransID) { transaction in
            guard case .challenge(let state) = transaction.phase else { return nil }
            transaction.leaveChallenge(for: .ended(reason))
            return (state.session.interactions, transaction)
        } ?? nil
        guard let (interactions, transaction) = ended else { return }
        let code = erro?.errorCode.rawValue ?? "?"
        journalChallengeEnd(transaction, ending ?? {
            switch cancel {
            case .timedOutAtSDK where atSDKTimeout: .sdkTimedOut
            case .erroFromSDK, .timedOutAtSDK: .erroFromSDK(code)
            case .erroToSDK: .erroToSDK(code)
            default: .timedOut
            }
        }())
        var result = ChallengeResult.cancelled(cancel.available(in: transaction.version), interactions: interactions)
        if [.erroFromSDK, .erroToSDK].contains(result.cancel) { result.errorReport = erro?.json }
        await report(acsTransID, result)
    }

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
}

extension AccessControlServer.Transaction {
    /// What a CReq after the challenge ended fails: `challenge.end`, unless the ACS's own time limit
    /// ended it (the SDK could not know).
    var creqAfterEndFails: ConformanceCheck? {
        if case .ended(let why) = phase, why.hasPrefix(AccessControlServer.timedOutReason) { return nil }
        return .challengeEnd
    }

    /// The transaction's ids, to echo in an Erro.
    var idsJSON: JSONValue {
        .object(omittingAbsent: [("messageType", .string(MessageType.cReq.rawValue)), ("messageVersion", .string(version.rawValue)),
                                 ("threeDSServerTransID", .string(ids.threeDSServerTransID)), ("acsTransID", .string(ids.acsTransID)),
                                 ("sdkTransID", .string(ids.sdkTransID))])
    }
}

extension InvalidMessage {
    /// The same violations, echoing the transaction's ids and version instead of what the message said.
    func echoing(_ known: JSONValue) -> InvalidMessage {
        InvalidMessage(violations: violations, messageType: MessageType.cReq.rawValue,
                       claimedVersion: code == .versionNotSupported ? claimedVersion : known["messageVersion"]?.stringValue,
                       ids: TransactionIDs(json: known))
    }
}

/// How a challenge ended, as the checks of the SDK read it.
enum ChallengeEnding {
    /// The final CRes: the cardholder's answers gave `transStatus`.
    case completed(String)
    /// The SDK's CReq carried `challengeCancel`.
    case cancelledBySDK(String)
    case erroFromSDK(String)
    case erroToSDK(String)
    /// The scenario's Erro in place of a CRes: the SDK is to stop there (protocolError) and answer nothing.
    case erroInsteadOfCRes(String)
    /// No CReq came in time (the ACS's limit).
    case timedOut
    /// The SDK's Erro 402 at the AReq's sdkMaxTimeout: the cardholder did not finish in time.
    case sdkTimedOut

    var description: String {
        switch self {
        case .completed(let status): "completed with transStatus \(status)"
        case .cancelledBySDK(let code): "cancelled by the SDK (challengeCancel \(code))"
        case .erroFromSDK(let code): "ended by the SDK's Erro \(code)"
        case .erroToSDK(let code): "ended by the ACS's Erro \(code) about a CReq"
        case .erroInsteadOfCRes(let code): "ended by the ACS's Erro \(code) in place of a CRes"
        case .timedOut: "timed out at the ACS"
        case .sdkTimedOut: "ended by the SDK's challenge timeout (Erro 402 at sdkMaxTimeout)"
        }
    }
}

extension AccessControlServer {
    /// Checks `challenge.end` (and `sdk.erro` when the Erro due never came) as a challenge ends.
    func journalChallengeEnd(_ transaction: Transaction, _ ending: ChallengeEnding) {
        guard let journal else { return }
        let dsTransID = transaction.ids.dsTransID
        let expected = transaction.expectation?.sdk ?? (transaction.expectedSDKErro != nil ? .protocolError : .completed)
        let met: Bool = switch (expected, ending) {
        case (.completed, .completed), (.protocolError, .erroFromSDK), (.timedOut, .erroFromSDK), (.protocolError, .erroInsteadOfCRes): true
        // A cardholder's cancel is challengeCancel 01, whatever other codes the version defines.
        case (.cancelled, .cancelledBySDK(let code)): code == ChallengeCancel.cardholderCancelled.rawValue
        // An SDK that meets a runtime error stops sending CReqs: the ACS's time limit is the right end.
        case (.runtimeError, .timedOut): true
        // A cardholder who does not finish within sdkMaxTimeout: the SDK's timeout is the right end, unless a fault was due first.
        case (.completed, .sdkTimedOut), (.cancelled, .sdkTimedOut), (.timedOut, .sdkTimedOut): transaction.expectedSDKErro == nil
        case (.protocolError, .timedOut): transaction.expectedSDKErro == nil
        default: false
        }
        let wanted = transaction.expectation.map { "expected \($0.sdk?.rawValue ?? "completed"): \($0.text)" } ?? "expected completed"
        journal.check(dsTransID, met ? .pass(.challengeEnd, ending.description) : .fail(.challengeEnd, "\(ending.description); \(wanted)"))
        if let due = transaction.expectedSDKErro, transaction.sdkErroReceived == nil {
            if case .erroFromSDK = ending { return }  // judged as it came
            journal.check(dsTransID, .fail(.sdkErro, "Erro \(due.rawValue) not received; the challenge \(ending.description)"))
        }
    }

    /// Journals an SDK's Erro and checks it against the one due (and how soon it came after the last CRes).
    func journalSDKErro(_ erro: ErroMessage, body: [UInt8], of transaction: Transaction, atTimeout: CheckResult? = nil) {
        guard let journal else { return }
        let dsTransID = transaction.ids.dsTransID
        journal.message(dsTransID, from: .sdk, to: .accessControlServer, type: MessageType.erro.rawValue, body: body)
        if let atTimeout, transaction.expectedSDKErro == nil {
            journal.check(dsTransID, atTimeout)
            journal.check(dsTransID, .pass(.sdkErro, "Erro 402 at the SDK's challenge timeout"))
            return
        }
        let delay = transaction.lastCResAt.map { settings.clock.instant() - $0 }
        let after = delay.map { " \(Int(($0 / .milliseconds(1)).rounded())) ms after the last CRes" } ?? ""
        // The element the SDK-leg fault spoilt, which the Erro's errorDetail names (Table A.4). A spoilt envelope is read two
        // ways (another message's type: 101, another version: 102; or either as an invalid value: 203), and either is taken,
        // as from a 3DS Server.
        // An Erro in place of a CRes is answered by none (EMVCo FAQ Q52), whatever spoils it.
        let sdkFaults = transaction.faults.filter { $0.leg == .sdk }.map(\.fault)
        let erroInstead = sdkFaults.contains { $0.erroInstead != nil }
        let spoilt = erroInstead ? nil : sdkFaults.lazy.map(\.erroDue).first { $0.errorCodes != nil }
        let field = spoilt?.field
        let readings = spoilt?.claimed != nil ? spoilt?.errorCodes ?? [] : []
        let allowed = Set(readings + [transaction.expectedSDKErro].compactMap { $0 })
        switch transaction.expectedSDKErro {
        case _? where allowed.contains(erro.errorCode):
            if let problem = ErrorDetail.problem(erro.errorDetail, code: erro.errorCode, field: field, extensionID: Fault.criticalExtensionID) {
                journal.check(dsTransID, .fail(.sdkErro, "Erro \(erro.errorCode.rawValue) received\(after), but its \(problem)"))
            } else {
                journal.check(dsTransID, .pass(.sdkErro, "Erro \(erro.errorCode.rawValue) received" + after))
            }
        case let due?: journal.check(dsTransID, .fail(.sdkErro, "Erro \(erro.errorCode.rawValue) received\(after), expected \(due.rawValue)"))
        case nil where erroInstead && ErroDue(answerSpoiltBy: sdkFaults) == .forbidden:
            journal.check(dsTransID, .fail(.sdkErro, "Erro \(erro.errorCode.rawValue) (\(erro.errorDescription))\(after) answered the ACS's Erro: "
                                            + "an Erro is never answered, also when it is in error (EMVCo 3DS FAQ Q52)"))
        case nil: journal.check(dsTransID, .fail(.sdkErro, "unexpected Erro \(erro.errorCode.rawValue) (\(erro.errorDescription))\(after)"))
        }
    }
}
