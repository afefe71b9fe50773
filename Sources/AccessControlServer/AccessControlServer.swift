public import EMV3DS
public import EMVCrypto
import Faults
import Foundation
import JOSE
import JSON
public import Logging
public import Messaging
public import Net
public import Journal
public import Scenarios
public import Store

public struct AccessControlServerSettings: Sendable {
    public var referenceNumber = "3DS_LOA_ACS_HARN_020200_00001"
    public var operatorID = "HARNESS-ACS-OPERATOR"
    public var schemes: [PaymentScheme]
    /// The `acsSignedContent` signer of each Directory Server profile, by RID.
    public var signers: [String: ACSSigningIdentity]
    /// The acsURL given to SDKs; nil means this harness's `/acs/challenge`, over HTTPS when it listens on HTTPS.
    public var challengeURL: String?
    /// Where RReqs go when the AReq carried no `dsURL`; nil means this harness's DS.
    public var directoryServerURL: String?
    /// Seconds a challenge may take, from the ARes to the final CRes, before it ends as timed out.
    public var challengeTimeout: Double = Self.defaultChallengeTimeout
    /// Ten minutes, unless configured (`accessControlServer.challengeTimeout`).
    public static let defaultChallengeTimeout: Double = 600
    /// The browser challenge's page templates; without them a browser challenge ends at once as U (reason 07).
    public var browserPages: BrowserChallengePages?
    /// The clock the SDK's challenge timeout (`challenge.sdk-timeout`) is measured with; tests give one that jumps.
    public var now: @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }

    public init(schemes: [PaymentScheme], signers: [String: ACSSigningIdentity] = [:]) {
        self.schemes = schemes
        self.signers = signers
    }
}

/// The Access Control Server role: decides each authentication from the scenarios, runs
/// challenges over the secure channel, and reports their results by RReq.
public final class AccessControlServer: Sendable {
    let settings: AccessControlServerSettings
    let scenarios: ScenarioSource
    let peer: EMVPeer
    let endpoints: LocalEndpoints
    public let transactions: TransactionStore<Transaction>
    /// Loads of the 3DS Method page, by threeDSServerTransID: what a browser AReq's threeDSCompInd is checked against.
    let methodVisits = TransactionStore<ThreeDSMethodVisit>(capacity: ThreeDSMethodVisit.capacity)
    /// Why the 3DS Method's form was refused, by the threeDSServerTransID it could still be read for:
    /// graded on that transaction when its AReq comes (`method.data`).
    let methodRefusals = TransactionStore<String>(capacity: ThreeDSMethodVisit.capacity)
    /// The WebAuthn credentials the issuer enrolled for Secure Payment Confirmation, and the ARes S awaiting their second AReq, by acsTransID.
    let spcEnrolments = SPCEnrolments()
    let spcChallenges = SPCEnrolmentChallenges()
    let spcOffers = TransactionStore<SPCOffer>(capacity: SPCOffer.capacity)
    /// Where the 3DS Method's visits go for the other instances when several share the store: the browser's
    /// method and its AReq may reach two of them. Nil for one instance.
    let sharedStore: (any TransactionArchive)?
    /// Where the ACS writes each CReq and CRes in plaintext and the checks of the SDK; nil when nobody reads them.
    let journal: Journal?
    let logger: Logger

    public init(settings: AccessControlServerSettings, scenarios: ScenarioSource, peer: EMVPeer, endpoints: LocalEndpoints,
                capacity: Int = StoreDefaults.maxTransactions, archive: (any TransactionArchive)? = nil, inMemory: Int? = nil, sharedStore: Bool = false,
                journal: Journal? = nil, logger: Logger) {
        self.journal = journal
        self.sharedStore = sharedStore ? archive : nil
        self.settings = settings
        self.scenarios = scenarios
        self.peer = peer
        self.endpoints = endpoints
        // A challenge evicted for room ends with its timer, not at its time limit.
        transactions = TransactionStore(capacity: capacity, archive: archive, role: Self.role, memoryBound: inMemory) { $0.stopTimer() }
        self.logger = logger
    }

    /// The store's name of this role's records.
    public static let role = "acs"

    /// True when this instance holds the transaction `acsTransID` in memory.
    public func holds(_ acsTransID: String) -> Bool { transactions.contains(acsTransID) }

    /// An open challenge this instance does not hold, taken up from its stored record when instances share the store: its
    /// instance died (a live one is passed its messages, docs/scale.md): the store names this instance its home (the
    /// cluster's routes took it from the gone one), or names `previous`, which is gone. True when this one holds it now.
    /// `startingTimer`: false for the run of its time limit's job, which ends it at once.
    @discardableResult
    func takeUp(_ acsTransID: String, startingTimer: Bool = true, from previous: String? = nil) async -> Bool {
        guard sharedStore != nil else { return transactions.contains(acsTransID) }
        // Only an open challenge (its record keeps what it needs under `resume`) goes on elsewhere.
        let restore = { [self] (bytes: [UInt8]) -> Transaction? in
            guard let record = try? JSONReader.parse(bytes).value, record["resume"] != nil else { return nil }
            let transaction = Transaction(stored: record, catalog: scenarios.catalog, schemes: settings.schemes, now: settings.now())
            if transaction == nil {
                logger.warning("an open challenge cannot be taken up: its scenario no longer scripts it", metadata: [
                    "acsTransID": "\(acsTransID)", "scenario": "\(record["scenario"]?.stringValue ?? "-")"])
            }
            return transaction
        }
        guard let transaction = await transactions.takeUp(acsTransID, previousHome: previous, restore: restore) else { return transactions.contains(acsTransID) }
        // Its journal entry too: the CReqs and the RReq from here are recorded with those before.
        await journal?.takeUp(transaction.ids.dsTransID)
        logger.info("open challenge taken up from the store", metadata: ["acsTransID": "\(acsTransID)"])
        if startingTimer {
            let remaining = Double((transaction.challengeDeadline ?? SQLiteArchive.wallClock()) - SQLiteArchive.wallClock()) / 1000
            startTimer(acsTransID, after: remaining)
        }
        return true
    }

    public func register(on router: inout Router) {
        router.emv(ACSPaths.aReq, receives: .aReq) { request async in await self.authenticate(request) }
        router.emv("/acs/challenge", receives: .cReq) { request async in await self.challenge(request) }
        registerBrowserChallenge(on: &router)
        registerThreeDSMethod(on: &router)
        registerSecurePaymentConfirmation(on: &router)
        router.record("/admin/acs/transactions/{id}", "ACS transaction") { await self.transactions.json($0) }
    }

    // MARK: AReq

    func authenticate(_ request: HTTPRequest) async -> HTTPResponse {
        if let erro = request.erroMessage { return received(erro) }
        let areq: AReq
        do { areq = try AReq(bytes: try request.emvMessageBody(), written: request.writtenJSON, rules: AReqRules.fromDirectoryServer) } catch {
            logger.info("AReq refused", metadata: ["reason": "\(error)"])
            return .erro(error, from: .acs)
        }
        var scenario = await scenarios.scenario(for: TransactionFacts(areq), transaction: areq["dsTransID"])
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
                                      resultsURL: areq["dsURL"] ?? settings.directoryServerURL ?? endpoints.url("/ds/rreq"))
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
            transaction.sdkTimeout = SDKTimeout(minutes: minutes, challengeStart: settings.now(), wallStart: SQLiteArchive.wallClock())
        }
        if case .challenge = plan {
            transaction.challengeDeadline = SQLiteArchive.wallClock() + Int64(settings.challengeTimeout * 1000)
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
    private func apply(_ plan: Outcome.Plan, to ares: inout ARes, of transaction: inout Transaction, areq: AReq,
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
                               signatureFault: faults.on(.sdk).compactMap(\.signedContentFault).first)
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
    private func schedule(_ plan: Outcome.Plan, for transaction: Transaction) {
        let acsTransID = transaction.ids.acsTransID ?? ""
        switch plan {
        case .challenge:
            // With instances sharing the store, the time limit is a job too: another instance ends the challenge if this one dies.
            if let sharedStore, let deadline = transaction.challengeDeadline {
                sharedStore.schedule(ScheduledJob(id: Self.expiryJobID(acsTransID), kind: Self.expiryJobKind, due: deadline, payload: []))
            }
            startTimer(acsTransID, after: settings.challengeTimeout)
        case .decoupled(let script):
            guard let delay = script.delay else { return }
            let result = ChallengeResult(transStatus: script.status, reason: script.reason, interactions: 0)
            // With instances sharing the store, the result is a job too: another instance sends it if this one dies first.
            let job = sharedStore.map { store in
                let job = Self.resultJob(transaction, result, due: SQLiteArchive.wallClock() + Int64(delay * 1000))
                store.schedule(job)
                return job
            }
            Task { [self] in
                try? await Task.sleep(for: .seconds(delay))
                guard let job, let sharedStore else { return await finish(acsTransID, with: result) }
                guard await sharedStore.claimJob(id: job.id) else {
                    // This instance was late, and another sent the result: recorded here, not sent twice.
                    return await finish(acsTransID, with: result, sentElsewhere: true)
                }
                await finish(acsTransID, with: result)
                await sharedStore.finishJob(id: job.id)
            }
        case .final:
            break
        }
    }

    /// The job kind of a decoupled result another instance may send.
    public static let resultJobKind = "acs.rreq"
    /// The job kind of a challenge's time limit, which another instance may reach.
    public static let expiryJobKind = "acs.expire"
    static func expiryJobID(_ acsTransID: String) -> String { "\(expiryJobKind):\(acsTransID)" }

    /// The RReq of `result` as a job: everything an instance that does not hold the transaction needs to send it.
    static func resultJob(_ transaction: Transaction, _ result: ChallengeResult, due: Int64) -> ScheduledJob {
        var ended = transaction
        ended.result = result
        ended.transStatus = result.transStatus
        let payload = JSONValue.object([("rreq", ended.rreq(for: result).json), ("resultsURL", .string(transaction.resultsURL))])
        return ScheduledJob(id: "\(resultJobKind):\(transaction.ids.acsTransID ?? "")", kind: resultJobKind, due: due, payload: JSONWriter.write(payload))
    }

    /// Runs a job of this ACS that another instance scheduled and never ran (it died): sends the decoupled result it holds,
    /// or ends a challenge at its time limit. False when the job is not this instance's to run yet: the challenge's home is
    /// alive (`isLive`: announced lately), or another instance took the challenge up meanwhile; it is claimed again later.
    public func runOrphaned(_ job: ScheduledJob, isLive: @Sendable (String) async -> Bool = { _ in false }) async -> Bool {
        if job.kind == Self.expiryJobKind {
            let acsTransID = String(job.id.dropFirst(Self.expiryJobKind.count + 1))
            guard let sharedStore, !holds(acsTransID) else { return false }  // held here: this instance's timer ends it
            // Ended meanwhile (its record settled): nothing to do.
            guard let stored = await sharedStore.record(role: Self.role, id: acsTransID),
                  (try? JSONReader.parse(stored.json).value)?["resume"] != nil else { return true }
            // Its home's timer ends it while the home lives; a gone home's challenge is taken up here and ends at once.
            let home = await sharedStore.home(role: Self.role, id: acsTransID)
            if let home, await isLive(home), !(await sharedStore.claimHome(role: Self.role, id: acsTransID, from: nil)) { return false }
            guard await takeUp(acsTransID, startingTimer: false, from: home) else { return false }
            await expire(acsTransID)
            return true
        }
        guard job.kind == Self.resultJobKind, let payload = try? JSONReader.parse(job.payload).value,
              let rreq = payload["rreq"], let url = payload["resultsURL"]?.stringValue else {
            logger.error("a job this ACS cannot run", metadata: ["id": "\(job.id)", "kind": "\(job.kind)"])
            return true
        }
        let delivery: String
        do {
            switch try await deliver(rreq, to: url) {
            case .message(let rres): delivery = "RRes resultsStatus \(rres.resultsStatus.rawValue)"
            case .erro(let erro): delivery = "Erro \(erro.errorCode.rawValue): \(erro.errorDescription)"
            }
        } catch {
            delivery = "no RRes: \(error)"
        }
        logger.info("RReq of a transaction whose instance is gone sent", metadata: [
            "acsTransID": "\(rreq["acsTransID"]?.stringValue ?? "-")", "delivery": "\(delivery)", "job": "\(job.id)"])
        return true
    }

    /// The path of this harness's DS that takes RReqs: what `dsURL` names when the DS is a co-hosted role.
    static let directoryServerResultsPath = "/ds/rreq"

    /// Sends an RReq to `url` and reads the RRes. In a cluster, an RReq for this harness's own DS at another instance that
    /// cannot be reached (the instance that began the transaction died, and no balancer stands before the instances)
    /// goes to this instance's DS instead, which passes it on to the DS transaction's home or takes it up from the store.
    private func deliver(_ rreq: JSONValue, to url: String) async throws(PeerFailure) -> PeerAnswer<RRes> {
        let read: (ReceivedBody) throws(InvalidMessage) -> RRes = { body throws(InvalidMessage) in try RRes(bytes: body.bytes, written: body.written) }
        do {
            return try await peer.exchange(rreq, url: url, read: read)
        } catch {
            let own = endpoints.url(Self.directoryServerResultsPath)
            guard sharedStore != nil, case .unreachable(_, .connectFailed) = error, url != own,
                  URL(string: url)?.path == Self.directoryServerResultsPath else { throw error }
            logger.info("RReq sent to this instance's DS: the DS at dsURL cannot be reached", metadata: ["dsURL": "\(url)", "reason": "\(error)"])
            return try await peer.exchange(rreq, url: own, read: read)
        }
    }

    /// An Erro from the DS about this ACS's ARes (its own, or the 3DS Server's passed on):
    /// recorded on the transaction. Erro messages are not answered with a message.
    func received(_ erro: ErroMessage) -> HTTPResponse {
        logger.info("Erro from the DS", metadata: ["errorCode": "\(erro.errorCode.rawValue)", "acsTransID": "\(erro.acsTransID ?? "-")"])
        if let acsTransID = erro.acsTransID {
            transactions.update(acsTransID) { $0.erroReceived.append("Erro \(erro.errorCode.rawValue) from component \(erro.errorComponent.rawValue) about \(erro.errorMessageType ?? "a message"): \(erro.errorDetail)") }
        }
        return .taken(erro)
    }

    /// Fills an ARes C. The app's: a fresh ephemeral key, the secure channel it makes with the
    /// SDK's key, and `acsSignedContent` signed for the transaction's Directory Server profile.
    /// The browser's: the acsURL its pages are at.
    func startChallenge(_ script: ChallengeScript, areq: AReq, ares: inout ARes, transaction: inout Transaction,
                        signatureFault: SignedContentFault?) throws(InvalidMessage) {
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
        let channel = SecureChannel(sharedSecret: agreement.sharedSecret, sdkReferenceNumber: sdkReferenceNumber)
        do {
            if let signatureFault {
                transaction.noCReqDue = true
                let payload = AcsSignedContent.payload(acsURL: acsURL, acsEphemeralKey: agreement.publicKey, sdkEphemPubKey: sdkKeyJSON)
                ares.acsSignedContent = try FaultySignedContent.sign(signatureFault, payload: payload, identity: signer)
            } else {
                ares.acsSignedContent = try AcsSignedContent.sign(acsURL: acsURL, acsEphemeralKey: agreement.publicKey,
                                                                  sdkEphemPubKey: sdkKeyJSON, identity: signer)
            }
            transaction.phase = .challenge(ChallengeState(medium: .secureChannel(channel), session: session))
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

    /// Starts the time limit of a challenge just stored, `seconds` from now. With instances sharing the store the limit is
    /// also a job: the instance that claims it ends the challenge (here, unless another instance took the challenge up).
    func startTimer(_ acsTransID: String, after seconds: Double) {
        // On the caller's loop when it runs on one (the loop that answers the ARes): started there, and cancelled there
        // when the final CReq comes on the same loop, with no thread woken. A challenge taken up from the store off a loop
        // gets a loop of the group.
        let timer = OneShotTimer(after: seconds, on: peer.client.nextLoop()) { [self] in
            Task { await challengeTimeLimitReached(acsTransID) }
        }
        transactions.update(acsTransID) { transaction in
            guard case .challenge(var state) = transaction.phase else { return timer.cancel() }
            state.timer = timer
            transaction.phase = .challenge(state)
        }
    }

    /// A challenge's time limit came: it ends here, or, with instances sharing the store, where the store says.
    private func challengeTimeLimitReached(_ acsTransID: String) async {
        guard let sharedStore else { return await expire(acsTransID) }
        let jobID = Self.expiryJobID(acsTransID)
        // Held under a lease while this instance ends it, so that no other instance runs it meanwhile.
        _ = await sharedStore.claimJob(id: jobID)
        // The instance the store names as the challenge's home reports its end; one another instance took it from only records it.
        guard await sharedStore.claimHome(role: Self.role, id: acsTransID, from: nil) else {
            return await expire(acsTransID, reportedElsewhere: true)
        }
        await expire(acsTransID)
        await sharedStore.finishJob(id: jobID)
    }

    /// How a challenge the ACS's time limit ended is recorded: a CReq after it is not the SDK's fault.
    static let timedOutReason = "timed out"

    /// Ends a challenge still open at its time limit. `reportedElsewhere`: another instance of the cluster claimed the limit's
    /// job (this one was too late), and reports it.
    func expire(_ acsTransID: String, reportedElsewhere: Bool = false) async {
        let expired: (cancel: ChallengeCancel, transaction: Transaction)? = transactions.update(acsTransID) { transaction in
            guard case .challenge(let state) = transaction.phase else { return nil }
            let cancel: ChallengeCancel = state.nextCounter == 0 ? .firstCReqNotReceived : .timedOutAtACS
            transaction.leaveChallenge(for: .ended(Self.timedOutReason + " after \(settings.challengeTimeout) s"))
            if reportedElsewhere { transaction.resultsDelivery = "sent by another instance of the cluster" }
            return (cancel, transaction)
        } ?? nil
        guard let (cancel, transaction) = expired, !reportedElsewhere else { return }
        logger.info("challenge timed out", metadata: ["acsTransID": "\(acsTransID)"])
        journalChallengeEnd(transaction, .timedOut)
        await report(acsTransID, .cancelled(cancel))
    }

    // MARK: Results

    /// Ends a decoupled authentication with its result: sends it, or records it as another instance of the cluster sent it.
    func finish(_ acsTransID: String, with result: ChallengeResult, sentElsewhere: Bool = false) async {
        let open = transactions.update(acsTransID) { transaction -> Bool in
            guard case .decoupled = transaction.phase else { return false }
            transaction.phase = .ended("decoupled authentication completed")
            if sentElsewhere {
                transaction.result = result
                transaction.transStatus = result.transStatus
                transaction.resultsDelivery = "sent by another instance of the cluster"
            }
            return true
        }
        if open == true, !sentElsewhere { await report(acsTransID, result) }
    }

    /// Sends the RReq of an ended transaction through the DS and records the RRes.
    func report(_ acsTransID: String, _ result: ChallengeResult) async {
        guard let transaction = transactions.update(acsTransID, { transaction -> Transaction in
            transaction.result = result
            transaction.transStatus = result.transStatus
            return transaction
        }) else { return }
        let fallingBack = result.transStatus == .decoupled
        if fallingBack {
            // Before the RReq: the 3DS Server may send its 3RI AReq before the RRes is back here.
            transactions.update(acsTransID) { $0.fallbackRReqAt = SQLiteArchive.wallClock() }
        }
        if let sharedStore, transaction.authentication != .decoupled {
            // The challenge's time limit is not due any more (a job left behind finds the record settled and does nothing).
            Task { await sharedStore.finishJob(id: Self.expiryJobID(acsTransID)) }
        }
        let rreq = transaction.rreq(for: result)
        let delivery: String
        do {
            switch try await deliver(rreq.json, to: transaction.resultsURL) {
            case .message(let rres):
                delivery = "RRes resultsStatus \(rres.resultsStatus.rawValue)"
                if fallingBack { journal?.check(transaction.ids.dsTransID, Self.fallbackResultsCheck(rres.resultsStatus)) }
            case .erro(let erro):
                delivery = "Erro \(erro.errorCode.rawValue): \(erro.errorDescription)"
                if fallingBack {
                    journal?.check(transaction.ids.dsTransID, .fail(.rresDecoupledFallback, "the RReq D was answered with Erro \(erro.errorCode.rawValue) (\(erro.errorDetail)), not an RRes with resultsStatus 04"))
                }
            }
        } catch {
            delivery = "no RRes: \(error)"
            if fallingBack { journal?.check(transaction.ids.dsTransID, .fail(.rresDecoupledFallback, "the RReq D got no RRes: \(error)")) }
            logger.warning("RReq not delivered", metadata: ["acsTransID": "\(acsTransID)", "reason": "\(error)"])
        }
        transactions.update(acsTransID) { $0.resultsDelivery = delivery }
        // The DS ends the entry as it relays the RRes; this ends one whose RReq never got that far.
        journal?.end(transaction.ids.dsTransID, transStatus: result.transStatus.rawValue, because: "RReq sent: \(delivery)")
    }
}
