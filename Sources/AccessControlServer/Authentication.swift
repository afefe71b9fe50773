import EMV3DS
import EMVCrypto
import EventLoops
import Faults
import JOSE
import Journal
import JSON
import Logging
import Messaging
import Net
import Scenarios
import Store

// The AReq: the scenario decides the outcome, the ARes says it, and a challenge begins.
extension AccessControlServer {

    func authenticate(_ request: HTTPRequest) async -> HTTPResponse {
        if let erro = request.erroMessage { return await received(erro) }
        let areq: AReq
        do { areq = try AReq(bytes: try request.emvMessageBody(), written: request.writtenJSON, rules: AReqRules.fromDirectoryServer) } catch {
            logger.info("AReq refused", metadata: ["reason": "\(error)"])
            return .erro(error, from: .acs)
        }
        // The DS's draw of a load mix, when it says one (a DS of this harness on another instance of a cluster).
        let given = request.headers[LoadMixDraw.header].flatMap(LoadMixDraw.init(headerValue:))
        // The team the DS passes on: its pins and its load mix apply (the DS read the 3DS Server's header or path).
        var facts = TransactionFacts(areq)
        facts.team = try? request.team()
        var scenario = await scenarios.scenario(for: facts, transaction: areq["dsTransID"], given: given)
        // Secure Payment Confirmation (2.3.1): the second AReq after an ARes S.
        let followUp = spcFollowUp(areq)
        if areq.deviceChannel == DeviceChannel.browser.rawValue {
            // The 3DS Method went with the first AReq and was graded there; the second carries its threeDSCompInd on.
            if followUp == nil {
                await fetchSharedMethodVisit(areq.threeDSServerTransID)
                journal?.check(areq["dsTransID"], threeDSCompIndCheck(areq, script: scenario.threeDSMethod))
                if let refusal = methodRefusals.get(areq.threeDSServerTransID) {
                    journal?.check(areq["dsTransID"], .fail(.threeDSMethodData, refusal))
                } else if let visit = methodVisits.get(areq.threeDSServerTransID) {
                    journal?.check(areq["dsTransID"], visit.formProblem.map { .fail(.threeDSMethodData, $0) } ?? .pass(.threeDSMethodData))
                }
            }
            // Under this scenario's name, whichever outcome threeDSCompInd gives it.
            scenario.outcome = scenario.outcome(threeDSCompInd: areq["threeDSCompInd"], in: scenarios.catalog)
        }
        let scheme = settings.schemes.scheme(for: areq.acctNumber)
        var transaction = Transaction(areq: areq, acsTransID: TransactionIdentifier.make(), scenario: scenario.name, scheme: scheme,
                                      resultsURL: areq["dsURL"] ?? settings.directoryServerURL ?? endpoints.url("/ds/rreq"), clock: settings.clock)
        transaction.faults = scenario.faults
        transaction.expectation = scenario.expectation
        transaction.warnings = areq.warnings.map { "AReq: " + $0 }
        var ares = ARes(messageVersion: areq.version, threeDSServerTransID: areq.threeDSServerTransID, acsTransID: transaction.ids.acsTransID ?? "",
                        dsTransID: areq["dsTransID"] ?? "", sdkTransID: areq.sdkTransID, acsReferenceNumber: settings.referenceNumber,
                        dsReferenceNumber: areq["dsReferenceNumber"] ?? "", transStatus: .unavailable)
        ares.acsOperatorID = settings.operatorID

        var plan = scenario.outcome.plan(for: areq.version, on: DeviceChannel(rawValue: areq.deviceChannel) ?? .app)
        // Decoupled Authentication Fallback (2.3.1): the 3RI AReq after an RReq D is authenticated decoupled; a challenge
        // that would fall back must have been allowed to.
        if let fallback = decoupledFallbackFollowUp(areq) {
            journal?.check(areq["dsTransID"], fallback.check)
            journal?.check(fallback.challenged, fallback.check)
            if let script = fallback.script { plan = .decoupled(script) }
        } else if let refusal = fallbackNotAllowed(plan, areq: areq) {
            journal?.check(areq["dsTransID"], refusal)
        }
        // A limited Split-SDK takes no static passcode (01) or knowledge-based (06) challenge (SB 279, authenticationMethod):
        // U with transStatusReason 03, unsupported device.
        if case .challenge(let script) = plan, areq.isLimitedSplitSDK,
           script.steps.contains(where: { SplitSDK.methodsNotForLimited.contains($0.screen.uiType.available(in: areq.version).authenticationMethod.rawValue) }) {
            plan = .final(.unavailable, reason: "03")
        }
        if case .challenge = plan, areq.deviceChannel == DeviceChannel.browser.rawValue, settings.browserPages == nil {
            plan = .final(.unavailable, reason: "07")  // a browser challenge needs the page templates
        }
        // Decoupled only when the requestor asked for it as the primary method (Y; in 2.3.1 also B, not F, which is for the
        // fallback alone): an absent threeDSRequestorDecReqInd means N. Then U with transStatusReason 23, "Decoupled
        // Authentication required by ACS but not requested by 3DS Requestor" (2.2.0 and later: the versions with decoupled).
        if case .decoupled = plan, !DecoupledRequest.allowsARes(version: areq.version, indicator: areq["threeDSRequestorDecReqInd"]) {
            plan = .final(.unavailable, reason: "23")
        }
        // Secure Payment Confirmation (2.3.1): what the second AReq decides, or an ARes S first.
        var spcOffer: SPCOffer?
        if let followUp {
            journal?.check(areq["dsTransID"], followUp.check)
            // On the first's entry too: in a cluster this AReq was passed on here, and its own entry is the DS's elsewhere.
            if let first = followUp.firstAcsTransID { journal?.check(transactions.get(first)?.ids.dsTransID, followUp.check) }
            switch followUp {
            case .verified(let offer): plan = .final(offer.script.transStatus, reason: nil)
            case .refused: plan = .final(.notAuthenticated, reason: "01")  // card authentication failed
            case .incomplete, .unknownPrior: break  // the scenario's outcome: SPC's fallback
            }
            if let first = followUp.firstAcsTransID {
                transactions.update(first) { transaction in
                    transaction.phase = .ended("its second AReq came (dsTransID \(areq["dsTransID"] ?? "-"))")
                    transaction.resultsDelivery = "none due: the second AReq brought the result"
                }
            }
        } else if let offer = offerSPC(areq, script: scenario.spc, ares: &ares) {
            spcOffer = offer
            plan = .final(.securePaymentConfirmation, reason: nil)  // the ARes S is filled: nothing to schedule
            transaction.authentication = .securePaymentConfirmation  // in its RReq, if the second AReq never comes
            transaction.phase = .spcOffered
        }
        do {
            if spcOffer == nil { try apply(plan, to: &ares, of: &transaction, areq: areq, faults: scenario.faults) }
        } catch {
            logger.info("AReq refused", metadata: ["reason": "\(error)"])
            return .erro(error, from: .acs)
        }
        if areq.version >= .v2_3_1, let fields = scenario.outcomeFields {
            // What the scenario says beside the outcome: 2.3.1's alone defines these members; its RReq says them again.
            ares.addOutcomeFields(fields)
            transaction.outcomeFields = fields
        }
        if areq.deviceChannel == DeviceChannel.app.rawValue {
            // Read only in the versions that carry it: it costs a decode and a parse.
            ares.setAppChannelFields(deviceInfoVersion: Self.deviceInfoVersion(areq["deviceInfo"]))
        }
        transaction.transStatus = ares.transStatus
        let acsTransID = ares.acsTransID
        if transaction.noCReqDue {
            // An SDK that rejects acsSignedContent ends there: the check passes unless a CReq comes.
            journal?.check(transaction.ids.dsTransID, .pass(.challengeEnd, "no CReq is due: the SDK must reject acsSignedContent (runtime error)"))
        }
        if case .challenge = plan, let minutes = areq["sdkMaxTimeout"].flatMap(Int.init) {
            transaction.sdkTimeout = SDKTimeout(minutes: minutes, challengeStart: settings.clock.instant(), wallStart: settings.clock.wallMilliseconds())
        }
        if case .challenge = plan {
            transaction.challengeTimeout = scenario.challengeTimeout
            transaction.drawnByLoadMix = areq["dsTransID"].flatMap(scenarios.draw(of:)).map { $0 != .none } ?? false
            transaction.loadMixTeam = facts.team
            transaction.challengeDeadline = settings.clock.wallMilliseconds() + Int64((scenario.challengeTimeout ?? settings.challengeTimeout) * 1000)
            transaction.threeDSCompInd = areq["threeDSCompInd"]
        }
        transactions.put(acsTransID, transaction)
        if let spcOffer {
            spcOffers.put(acsTransID, spcOffer)
            awaitSecondAReq(acsTransID)
        }
        schedule(plan, for: transaction)
        logger.debug("ARes", metadata: ["scenario": "\(scenario.name)", "transStatus": "\(ares.transStatus.rawValue)", "acsTransID": "\(acsTransID)"])
        return await FaultyAnswer.answer(ares.json, faults: scenario.faults.on(.accessControlServer), from: .acs)
    }

    /// Puts the plan's outcome in the ARes: a final status, a challenge to open, or a decoupled wait.
    func apply(_ plan: Outcome.Plan, to ares: inout ARes, of transaction: inout Transaction, areq: AReq,
                       faults: [FaultInjection]) throws(InvalidMessage) {
        switch plan {
        case .final(let status, let reason):
            ares.transStatus = status
            ares.transStatusReason = reason
            if status.carriesAuthenticationValue {
                ares.authenticationValue = TransactionIdentifier.authenticationValue()
                ares.eci = transaction.eci(for: status)
            }
        case .challenge(let script):
            try startChallenge(script, areq: areq, ares: &ares, transaction: &transaction,
                               signatureFault: faults.on(.sdk).first(where: \.isOnSignedContent))
        case .decoupled(let script):
            ares.transStatus = .decoupled
            ares.acsDecConInd = "Y"
            ares.acsChallengeMandated = "Y"
            ares.setAuthentication(.decoupled)
            transaction.authentication = .decoupled
            ares.cardholderInfo = script.cardholderInfo ?? "Approve the payment in your banking app."
            transaction.phase = .decoupled
        }
    }

    /// What happens later: a challenge's time limit, or the decoupled authentication's result after its delay.
    func schedule(_ plan: Outcome.Plan, for transaction: Transaction) {
        let acsTransID = transaction.ids.acsTransID ?? ""
        switch plan {
        case .challenge:
            // With instances sharing the store, the time limit is a job too: another instance ends the challenge if this one dies.
            if let deadline = transaction.challengeDeadline { sharing.schedule(Self.expiryJob(acsTransID, due: deadline)) }
            startTimer(acsTransID, after: transaction.challengeTimeout ?? settings.challengeTimeout)
        case .decoupled(let script):
            guard let delay = script.delay else { return }
            let result = ChallengeResult(transStatus: script.status, reason: script.reason, interactions: 0)
            // With instances sharing the store, the result is a job too: another instance sends it if this one dies first.
            let job = Self.resultJob(transaction, result, due: settings.clock.wallMilliseconds() + Int64(delay * 1000))
            sharing.schedule(job)
            background.run { [self] in
                // Cancelled at shutdown: the job stays in the store for another instance, if any.
                guard (try? await Task.sleep(for: .seconds(delay))) != nil else { return }
                guard await sharing.claim(job) else {
                    // This instance was late, and another sent the result: recorded here, not sent twice.
                    return await finish(acsTransID, with: result, sentElsewhere: true)
                }
                await finish(acsTransID, with: result)
                await sharing.finish(job.id)
            }
        case .final:
            break
        }
    }

    /// Fills an ARes C. The app's: a fresh ephemeral key, the secure channel it makes with the
    /// SDK's key, and `acsSignedContent` signed for the transaction's Directory Server profile.
    /// The browser's: the acsURL its pages are at.
    func startChallenge(_ script: ChallengeScript, areq: AReq, ares: inout ARes, transaction: inout Transaction,
                        signatureFault: Fault?) throws(InvalidMessage) {
        func refuse(_ field: String, _ code: ErrorCode, _ reason: String) -> InvalidMessage {
            InvalidMessage(Violation(field: field, code: code, reason: reason), about: areq.json)
        }
        let fallbackAllowed = DecoupledFallback.isAllowed(version: areq.version, indicator: areq["threeDSRequestorDecReqInd"])
        if areq.deviceChannel == DeviceChannel.browser.rawValue {
            guard let notificationURL = areq["notificationURL"] else { throw refuse("notificationURL", .requiredElementMissing, "is required") }
            let session = ChallengeSession(script: script, version: areq.version, fallbackAllowed: fallbackAllowed)
            transaction.phase = .challenge(ChallengeState(medium: .browser(BrowserChallenge(notificationURL: notificationURL)), session: session))
            ares.transStatus = .challenge
            ares.acsChallengeMandated = "Y"
            ares.acsURL = endpoints.url(Self.browserChallengePath)
            ares.setAuthentication(session.firstUIType.authenticationMethod)
            transaction.authentication = session.firstUIType.authenticationMethod
            return
        }
        // The ACS's ephemeral key is made for this agreement and let go: the channel's key is all a CReq needs.
        let agreement: EphemeralAgreement
        guard let sdkKeyJSON = areq.json["sdkEphemPubKey"] else { throw refuse("sdkEphemPubKey", .formatInvalid, "is not a usable P-256 public key") }
        do { agreement = try EphemeralAgreement(with: try JWK(emvJWK: sdkKeyJSON)) } catch {
            // OpenSSL failing the ACS's own key is the ACS's failure, not the AReq's.
            if case .crypto = error { throw refuse("acsEphemPubKey", .permanentSystemFailure, "the ACS could not make its key: \(error)") }
            throw refuse("sdkEphemPubKey", .formatInvalid, "is not a usable P-256 public key")
        }
        guard let sdkReferenceNumber = areq.sdkReferenceNumber else { throw refuse("sdkReferenceNumber", .requiredElementMissing, "is required") }
        guard let signer = transaction.scheme.flatMap({ settings.signers[$0.rid] }) ?? settings.signers.values.first else {
            throw refuse("acctNumber", .permanentSystemFailure, "the ACS has no signing certificate")
        }
        let session = ChallengeSession(script: script, version: areq.version, fallbackAllowed: fallbackAllowed)
        let acsURL = settings.challengeURL ?? endpoints.secureURL("/acs/challenge")
        let keyInputs = ChannelKeyInputs(sharedSecret: agreement.sharedSecret, sdkReferenceNumber: sdkReferenceNumber)
        let channel = keyInputs.channel
        do {
            if let signatureFault {
                transaction.noCReqDue = signatureFault.signedContentRefusedBySDK
                let payload = AcsSignedContent.payload(acsURL: acsURL, acsEphemeralKey: agreement.publicKey, sdkEphemPubKey: sdkKeyJSON)
                ares.acsSignedContent = try FaultySignedContent.sign(signatureFault, payload: payload, identity: signer)
            } else {
                ares.acsSignedContent = try AcsSignedContent.sign(acsURL: acsURL, acsEphemeralKey: agreement.publicKey,
                                                                  sdkEphemPubKey: sdkKeyJSON, identity: signer)
            }
            transaction.phase = .challenge(ChallengeState(medium: .secureChannel(channel), session: session, keyInputs: keyInputs))
            recentChannels.add(.init(acsTransID: transaction.ids.acsTransID ?? "", sdkReferenceNumber: sdkReferenceNumber, channel: channel))
        } catch {
            // The ACS's own key or chain failed it: its failure, not the AReq's.
            throw refuse("acsSignedContent", .permanentSystemFailure, "the ACS could not sign it: \(error)")
        }
        ares.transStatus = .challenge
        ares.acsChallengeMandated = "Y"
        ares.setAuthentication(session.firstUIType.authenticationMethod)
        transaction.authentication = session.firstUIType.authenticationMethod
        ares.acsRenderingType = AResRules.rules.buildMember("acsRenderingType", [
            ("acsInterface", .string(session.firstUIType.isHTML ? "02" : "01")),
            ("acsUiTemplate", .string(session.firstUIType.rawValue)),
            ("deviceUserInterfaceMode", .string("01")),  // portrait
        ], version: areq.version)
        transaction.renderingType = ares.acsRenderingType
    }

    /// `deviceInfoRecognisedVersion`: the `DV` of the device information the DS forwarded, which
    /// the ACS reads whatever its version ("1.0" when it carried none it could read).
    static func deviceInfoVersion(_ deviceInfo: String?) -> String {
        guard let deviceInfo, let bytes = try? Base64URL.decode(deviceInfo, part: "deviceInfo"),
              let version = (try? JSONReader.parse(bytes).value)?["DV"]?.stringValue, version.count >= 3 else { return "1.0" }
        return String(version.prefix(10))
    }

    /// An Erro from the DS about this ACS's ARes (its own, or the 3DS Server's passed on):
    /// recorded on the transaction. The ARes did not reach the 3DS Server or was refused there, so the transaction is over
    /// for it: a challenge or decoupled authentication the ARes began ends here, and no RReq reports it later.
    /// Erro messages are not answered with a message.
    func received(_ erro: ErroMessage) async -> HTTPResponse {
        logger.info("Erro from the DS", metadata: ["errorCode": "\(erro.errorCode.rawValue)", "acsTransID": "\(erro.acsTransID ?? "-")"])
        guard let acsTransID = erro.acsTransID else { return .taken(erro) }
        let ended = transactions.update(acsTransID) { transaction -> Bool in
            transaction.erroReceived.append("Erro \(erro.errorCode.rawValue) from component \(erro.errorComponent.rawValue) about \(erro.errorMessageType ?? "a message"): \(erro.errorDetail)")
            switch transaction.phase {
            case .challenge, .decoupled:
                transaction.leaveChallenge(for: .ended("Erro \(erro.errorCode.rawValue) about the ARes from the DS"))
                return true
            default:
                return false
            }
        } ?? false
        // With instances sharing the store, the time limit's job goes too (a job left behind finds the record settled).
        if ended, sharing.isShared { await sharing.finish(Self.expiryJobID(acsTransID)) }
        return .taken(erro)
    }
}
