import EMV3DS
import EMVCrypto
public import EventLoops
import Foundation
public import JOSE
import JSON
public import Logging
public import Messaging
public import Net
public import Store
import Synchronization

public struct ThreeDSServerSettings: Sendable, Equatable, Encodable {
    public var referenceNumber = "3DS_LOA_SER_HARN_020200_00001"
    public var operatorID = "HARNESS-3DSS-OPERATOR"
    public var requestorID = "harness-requestor"
    public var requestorName = "Harness Test Merchant"
    public var requestorURL = "https://merchant.example"
    /// Where AReqs go; nil means the harness's own DS.
    public var directoryServerURL: String?
    /// How long to wait for the DS's ARes.
    public var directoryServerTimeoutMs: UInt64 = 30_000
    /// How long the DS's card ranges are cached before a PReq (with the last serialNum) refreshes them.
    public var cardRangeRefreshSeconds: Double = 3600
    /// Seconds after an ARes S within which the requestor's page posts SPC's result; then the 3DS Server sends the second
    /// AReq itself, with spcIncompInd 03 (SB 279 Req 454-455: 540 s, a minute before the ACS's own limit).
    public var spcResultTimeout: Double = 540
    /// Merchant defaults for payment AReqs, overridable per request.
    public var acquirerBIN = "400551"
    public var acquirerMerchantID = "harness-merchant-1"
    public var mcc = "5411"
    public var merchantCountryCode = "840"

    public init() {}
}

/// The 3DS Server role: turns the requestor app's call into an AReq, sends it to the DS,
/// answers the outcome, and receives the results of challenges (RReq).
public final class ThreeDSServer: Sendable {
    let settings: ThreeDSServerSettings
    let peer: EMVPeer
    let endpoints: LocalEndpoints
    public let transactions: TransactionStore<Transaction>
    /// The AReqs out whose ARes is not read yet: an RReq that comes first waits for it.
    let aresUnderWay = AResUnderWay()
    /// Browser transactions between `prepare` and their authentication; bounded. In the store too when
    /// instances share it: the one that prepared is the one its method notification and authentication go to.
    let preparedTransactions: TransactionStore<PreparedTransaction>
    /// The DS's card ranges as the last PRes left them, with its serial: a PReq at most every cardRangeRefreshSeconds.
    let cardRangeCache = Mutex<CardRangeCache?>(nil)
    /// The requests waiting for the card-range refresh under way (nil: none is), which they take the PRes of rather than
    /// send a PReq of their own.
    let cardRangeWaiters = Mutex<[CheckedContinuation<Result<[PreparedRange], HTTPError>?, Never>]?>(nil)
    /// What this instance shares with the others of its store, when they are several: a transaction whose instance died
    /// is taken up from its record.
    let sharing: any SharedWork
    /// What runs after the answer that began it: a decoupled fallback's 3RI AReq, SPC's second AReq at its time limit.
    let background: BackgroundWork
    let logger: Logger
    /// The DS id (RID) of the scheme a card number belongs to, as the 3DS Server is configured
    /// per Directory Server; nil when it knows none.
    let directoryServerID: @Sendable (String) -> String?
    /// The Directory Server of a DS id as the token style hands it to its SDK, with its RSA or
    /// EC key; nil when the 3DS Server has none for it.
    let tokenDirectoryServer: @Sendable (_ rid: String, _ key: TestPKI.KeyVariant) -> TokenStyleDirectoryServer?

    public init(settings: ThreeDSServerSettings, peer: EMVPeer, endpoints: LocalEndpoints, capacity: Int = StoreDefaults.maxTransactions,
                archive: (any TransactionArchive)? = nil, inMemory: Int? = nil, sharing: any SharedWork = SoleInstance(),
                background: BackgroundWork = BackgroundWork(), directoryServerID: @escaping @Sendable (String) -> String? = { _ in nil },
                tokenDirectoryServer: @escaping @Sendable (_ rid: String, _ key: TestPKI.KeyVariant) -> TokenStyleDirectoryServer? = { _, _ in nil },
                logger: Logger) {
        self.settings = settings
        self.directoryServerID = directoryServerID
        self.tokenDirectoryServer = tokenDirectoryServer
        self.peer = peer
        self.endpoints = endpoints
        self.sharing = sharing
        self.background = background
        transactions = TransactionStore(capacity: capacity, archive: archive, role: Self.role, memoryBound: inMemory)
        preparedTransactions = TransactionStore(capacity: PreparedTransaction.capacity, archive: sharing.isShared ? archive : nil,
                                                role: Self.preparedRole)
        self.logger = logger
    }

    /// The store's names of this role's records, and of its prepared browser transactions.
    public static let role = "3ds-server", preparedRole = "3ds-server-prepared"

    /// True when this instance holds the transaction (or prepared one) `threeDSServerTransID` in memory.
    public func holds(_ threeDSServerTransID: String) -> Bool {
        transactions.contains(threeDSServerTransID) || preparedTransactions.contains(threeDSServerTransID)
    }

    /// A transaction this instance does not hold, taken up from its stored record when instances share the store and a
    /// message is due for it (its RReq, a browser challenge's final CRes): its instance died (a live one is passed its
    /// messages, docs/scale.md), and the store names this instance its home (the cluster's routes took it from the gone one).
    func takeUp(_ id: String) async {
        guard await transactions.takeUp(id, through: sharing, restore: { (try? JSONReader.parse($0).value).flatMap(Transaction.init(stored:)) }) != nil
        else { return }
        logger.info("transaction taken up from the store", metadata: ["threeDSServerTransID": "\(id)"])
    }

    public func register(on router: inout Router) {
        // A browser authentication that names its prepared transaction goes on where it was prepared.
        router.post("/3ds-server/authenticate", tag: transaction(.jsonMember("threeDSServerTransID"), role: Self.preparedRole)) { request, _ async throws in
            try await self.authenticate(request)
        }
        router.post("/3ds-server/versions") { request, _ async throws in try await self.versions(request) }
        router.post("/3ds-server/prepare") { request, _ async throws in try await self.prepare(request) }
        router.post(Self.methodNotificationPath, tag: transaction(.formJSON(field: "threeDSMethodData", member: "threeDSServerTransID"), role: Self.preparedRole)) { request, _ in
            // Answered to the ACS's page in a hidden iframe: a reason in plain text, not the API's JSON.
            do throws(HTTPError) { return try self.methodNotified(request) } catch { return .text(error.message, status: error.status) }
        }
        router.post(Self.notificationPath, tag: transaction(.formJSON(field: "cres", member: "threeDSServerTransID"))) { request, _ in
            await self.challengeNotified(request)
        }
        // The page's SPC result goes on where the ARes S came (its ACS holds what the assertion must sign).
        router.post(Self.spcResultPath, tag: transaction(.pathParameter("id"))) { request, context async throws in try await self.spcResult(request, id: context.parameters["id"] ?? "") }
        EMVCoProfile(server: self).register(on: &router)
        TokenProfile(server: self).register(on: &router)
        router.record("/3ds-server/transactions/{id}", "transaction", transaction: transaction(.pathParameter("id"))) { await self.transactions.json($0) }
        router.emv("/3ds-server/rreq", receives: .rReq, transaction: transaction(.jsonMember("threeDSServerTransID"))) { request in await self.results(request) }
    }

    /// What a route's request names of this role's transactions (or of its prepared ones, which are not taken up from the
    /// store: only a transaction under way is), and where.
    func transaction(_ key: TransactionKey, role: String = ThreeDSServer.role) -> TransactionRoute {
        guard role == Self.role else { return TransactionRoute(role: role, key: key, holds: { [self] in holds($0) }) }
        return TransactionRoute(role: role, key: key, holds: { [self] in holds($0) }, takeUp: { [self] id in await takeUp(id) })
    }

    // MARK: Authentication

    func authenticate(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard request.headers.mediaType == "application/json" else {
            throw HTTPError(.unsupportedMediaType, "expected Content-Type application/json, got \(request.headers["Content-Type"] ?? "none")")
        }
        var input = try AuthenticationRequest(json: request.jsonBody())
        input.tags = try request.harnessTags()
        let (transaction, status) = if let preparedID = input.threeDSServerTransID {
            try await authenticate(input, prepared: preparedID)
        } else {
            try await authenticate(input)
        }
        return HTTPResponse(status: status, headers: .json, body: transaction.archivedJSON)
    }

    /// Sends the AReq for `input` to the DS and keeps the transaction; the HTTP status says
    /// whether the DS's answer was usable (200) or not (502). Throws (400) for input that would
    /// make an invalid AReq. The requestor API and every integration profile go through here.
    func authenticate(_ input: AuthenticationRequest) async throws(HTTPError) -> (Transaction, HTTPStatus) {
        var browserOptions: Transaction.BrowserOptions?
        if case .browser(let browser) = input.channel {
            browserOptions = .init(challengeWindowSize: browser.challengeWindowSize,
                                   returnTo: browser.returnURL.map { ReturnRedirect(returnURL: $0, idParameter: browser.returnIdParameter) })
        }
        return try await send(buildAReq(input), browserOptions: browserOptions, tags: input.tags)
    }

    /// Sends `areq` to the DS and keeps the transaction (see `authenticate`); a second AReq after an ARes S comes here too.
    /// `fallbackOf`: the transaction whose decoupled fallback this 3RI AReq performs.
    func send(_ areq: AReq, browserOptions: Transaction.BrowserOptions?, tags: HarnessTags,
              fallbackOf: String? = nil) async throws(HTTPError) -> (Transaction, HTTPStatus) {
        let violations = areq.violations(of: AReqRules.fromThreeDSServer)
        guard violations.isEmpty else {
            throw HTTPError(.badRequest, "the AReq would be invalid: " + violations.map(\.description).joined(separator: "; "))
        }
        aresUnderWay.begin(areq.threeDSServerTransID)
        defer { aresUnderWay.end(areq.threeDSServerTransID) }  // after `finish` has kept the transaction
        var transaction = Transaction(areq: areq)
        transaction.browserOptions = browserOptions
        transaction.tags = tags
        transaction.fallbackOf = fallbackOf
        // Written once: what goes to the DS is what the trail keeps.
        let sent = WrittenJSON(areq.json)
        transaction.record(.sent, bytes: sent.bytes)
        let url = settings.directoryServerURL ?? endpoints.ownURL("/ds/areq")
        do {
            let headers = tags.headers
            let answer = try await peer.exchange(sent, url: url, headers: headers) { body throws(InvalidMessage) in
                let envelope = try MessageEnvelope.read(body.bytes, written: body.written, rules: AResRules.rules, request: areq.json)
                return (ARes(validated: envelope), envelope, body.bytes)
            }
            switch answer {
            case .message(let (ares, envelope, bytes)):
                transaction.record(.received, bytes: bytes)
                transaction.warnings += envelope.warnings.map { "ARes: " + $0 }
                if let unechoed = areq.unechoed(in: envelope.json) ?? areq.answerNotAllowed(envelope.json) {
                    // An ARes that is not this transaction's is no usable answer: as an invalid one.
                    await refuse(areq.erro(about: [unechoed], answered: TransactionIDs(json: envelope.json), from: .threeDSServer), violations: [unechoed],
                                 of: &transaction, url: url)
                    return (finish(transaction), .badGateway)
                }
                transaction.apply(ares)
                if transaction.state == .spc { awaitSPCResult(transaction.threeDSServerTransID) }
            case .erro(let erro):
                transaction.record(.received, erro.json)
                transaction.fail(erro)
            }
        } catch {
            logger.warning("no usable answer from the DS", metadata: ["reason": "\(error)"])
            if case .invalid(_, let invalid) = error {
                var erro = invalid.erro(from: .threeDSServer)
                erro.messageVersion = areq.version.rawValue  // the transaction's, whatever the ARes claimed
                await refuse(erro, violations: invalid.violations, of: &transaction, url: url)
            } else {
                transaction.fail("DS: \(error.summary)")
            }
            return (finish(transaction), .badGateway)
        }
        return (finish(transaction), .ok)
    }

    private func finish(_ transaction: Transaction) -> Transaction {
        transactions.put(transaction.threeDSServerTransID, transaction)
        return transaction
    }

    /// An invalid ARes ends the transaction, and the 3DS Server tells the DS with an Erro
    /// (Core specification 5.9.4: the 3DS Server answers an ARes it cannot process with an Error Message).
    private func refuse(_ erro: ErroMessage, violations: [Violation], of transaction: inout Transaction, url: String) async {
        var erro = erro
        // The Erro names the transaction by every id the 3DS Server knows, not only what the ARes carried.
        erro.threeDSServerTransID = transaction.threeDSServerTransID
        erro.dsTransID = erro.dsTransID ?? transaction.ids.dsTransID
        erro.sdkTransID = transaction.ids.sdkTransID
        transaction.violations = violations.map(\.description)
        transaction.fail("invalid ARes: " + transaction.violations.joined(separator: "; "))
        transaction.record(.sent, erro.json)
        transaction.erroSent = erro
        if let failure = await peer.notify(erro, url: url) {
            transaction.error = (transaction.error ?? "") + "; the Erro did not reach the DS: \(failure)"
        }
    }

    /// The AReq for the requestor's call, built through the 3DS Server leg's table: fields the
    /// version does not define (`sdkType` before 2.3.1) are left out.
    func buildAReq(_ input: AuthenticationRequest) -> AReq {
        let version = input.messageVersion
        let payment = input.messageCategory == MessageCategory.payment.rawValue
        var members: [(String, JSONValue)] = [
            ("messageType", .string(MessageType.aReq.rawValue)),
            ("messageVersion", .string(version.rawValue)),
            ("messageCategory", .string(input.messageCategory)),
            ("deviceChannel", .string(input.channel.deviceChannel.rawValue)),
            ("threeDSServerTransID", .string(input.threeDSServerTransID ?? TransactionIdentifier.make())),
            ("threeDSServerRefNumber", .string(settings.referenceNumber)),
            ("threeDSServerOperatorID", .string(settings.operatorID)),
            ("threeDSServerURL", .string(endpoints.url("/3ds-server/rreq"))),
            ("threeDSRequestorID", .string(settings.requestorID)),
            ("threeDSRequestorName", .string(settings.requestorName)),
            ("threeDSRequestorURL", .string(settings.requestorURL)),
            ("threeDSRequestorAuthenticationInd", .string("01")),
            // The requestor accepts decoupled authentication, so an ARes D is valid (2.2.0+); in 2.3.1 also as a
            // fallback after a challenge (B: primary or fallback, DecoupledFallback).
            ("threeDSRequestorDecReqInd", .string(version >= .v2_3_1 ? "B" : "Y")),
            ("threeDSRequestorDecMaxTime", .string("00010")),
            ("acctNumber", .string(input.acctNumber)),
            ("acquirerCountryCode", .string(settings.merchantCountryCode)),
            ("acquirerCountryCodeSource", .string("01")),  // set by the 3DS Server
        ]
        // The channel's own part; what the page sent of the browser is given below, as the purchase is.
        var given = input.passThrough
        switch input.channel {
        case .app(let sdk):
            let uiTypes = ACSUIType.allCases.filter { $0.since <= version }.map { JSONValue.string($0.rawValue) }
            members += [
                ("sdkAppID", .string(sdk.sdkAppID)),
                ("sdkTransID", .string(sdk.sdkTransID)),
                ("sdkReferenceNumber", .string(sdk.sdkReferenceNumber)),
                ("sdkEphemPubKey", sdk.sdkEphemPubKey),
                ("sdkEncData", .string(sdk.sdkEncData)),
                ("sdkMaxTimeout", .string("05")),
                ("sdkType", .string("01")),  // a default SDK, native
                ("defaultSdkType", .object([("sdkVariant", .string("01"))])),
                ("deviceRenderOptions", .object([("sdkInterface", .string("03")), ("sdkUiType", .array(uiTypes))])),
            ]
        case .browser(let browser):
            members += [
                ("notificationURL", .string(endpoints.url(Self.notificationPath))),
                ("threeDSCompInd", .string(browser.threeDSCompInd ?? ThreeDSCompInd.unavailable.rawValue)),
            ]
            given += browser.fields
        case .threeRI:
            // No cardholder: nothing to authenticate them by, no one to approve a decoupled request.
            let cardholderOnly: Set<String> = ["threeDSRequestorAuthenticationInd", "threeDSRequestorDecReqInd", "threeDSRequestorDecMaxTime"]
            members.removeAll { cardholderOnly.contains($0.0) }
        }
        if !payment, given.contains(where: { $0.key == "purchaseAmount" }) {
            // A recurring, instalment or charging non-payment authentication carries the purchase too.
            members += [("purchaseExponent", .string("2")), ("purchaseDate", .string(UTCTime.purchaseDate(Date())))]
        }
        if payment {
            let merchant: [(String, JSONValue)] = [
                ("acquirerBIN", .string(settings.acquirerBIN)), ("acquirerMerchantID", .string(settings.acquirerMerchantID)),
                ("mcc", .string(settings.mcc)), ("merchantCountryCode", .string(settings.merchantCountryCode)),
                ("merchantName", .string(settings.requestorName)), ("purchaseExponent", .string("2")),
                ("purchaseDate", .string(UTCTime.purchaseDate(Date()))),
            ]
            members += merchant
        }
        // The requestor's own values replace the defaults before the table filters by version.
        for (key, value) in given {
            if let index = members.firstIndex(where: { $0.0 == key }) { members[index].1 = value } else { members.append((key, value)) }
        }
        if input.passThrough.contains(where: { $0.key == "sdkType" }), !input.passThrough.contains(where: { $0.key == "defaultSdkType" }) {
            members.removeAll { $0.0 == "defaultSdkType" }  // the app chose its SDK type; the default's variant is not its
        }
        return AReq(json: AReqRules.fromThreeDSServer.build(members.map { ($0.0, $0.1) }, version: version), version: version)
    }

    // MARK: Results

    /// An RReq through the DS: the final outcome of a challenge. Answered with an RRes, or an
    /// Erro when it breaks its table, names no transaction awaiting a result, or not with
    /// every id it should; both are recorded on the transaction it names. An Erro from the DS
    /// (about an RRes it could not relay) is recorded too, and gets an empty 200.
    func results(_ request: HTTPRequest) async -> HTTPResponse {
        if let erro = request.erroMessage {
            if let id = erro.threeDSServerTransID {
                transactions.update(id) { transaction in
                    transaction.record(.received, erro.json)
                    transaction.erroReceived.append(erro)
                }
            }
            return .taken(erro)
        }
        let body: [UInt8]
        do { body = try request.emvMessageBody() } catch { return .erro(error, from: .threeDSServer) }
        // The transaction decides the rules that depend on it (channel, decoupled ARes).
        let written = request.writtenJSON
        let received = request.bodyJSON
        let named = received?["threeDSServerTransID"]?.stringValue
        if let named {
            await aresUnderWay.wait(for: named)  // an RReq relayed before the ARes reached this 3DS Server
        }
        let known = named.flatMap { transactions.get($0) }
        let outcome: Result<(RRes, Transaction), InvalidMessage>
        do {
            let rreq = try RReq(bytes: body, written: written, channel: known?.channel, ares: known?.aresReadByResults)
            outcome = transactions.update(rreq.threeDSServerTransID) { transaction in
                transaction.record(.received, bytes: body)
                transaction.warnings += rreq.warnings.map { "RReq: " + $0 }
                if let refusal = transaction.refusal(of: rreq) { return .failure(refusal) }
                // An RReq D (2.3.1, accepted above only where the AReq allowed it): the decoupled authentication follows.
                let rres = RRes(answering: rreq, resultsStatus: rreq.transStatus == .decoupled ? .decoupledLater : .received)
                transaction.apply(rreq)
                transaction.record(.sent, rres.json)
                return .success((rres, transaction))
            } ?? .failure(InvalidMessage(Violation(field: "threeDSServerTransID", code: .transactionIDNotRecognised,
                                                   reason: "names no transaction of this 3DS Server"), about: rreq.json))
        } catch {
            if let named, known != nil { transactions.update(named) { $0.record(.received, received ?? .null) } }
            outcome = .failure(error)
        }
        switch outcome {
        case .success(let (rres, transaction)):
            if transaction.state == .decoupledFallback {
                background.run { await self.followUpFallback(transaction.threeDSServerTransID) }
            } else if let first = transaction.fallbackOf {
                await takeUp(first)
                transactions.update(first) { $0.endFallback(with: transaction) }
            }
            return .emv(rres.json)
        case .failure(let refusal):
            logger.info("RReq refused", metadata: ["reason": "\(refusal)"])
            var erro = refusal.erro(from: .threeDSServer)
            if let known { erro.messageVersion = known.messageVersion.rawValue }
            if let named, known != nil {
                transactions.update(named) { transaction in
                    transaction.record(.sent, erro.json)
                    transaction.erroSent = erro
                }
            }
            return .emv(erro.json)
        }
    }
}
