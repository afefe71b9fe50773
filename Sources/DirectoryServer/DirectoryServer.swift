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
import Synchronization

/// What the DS answers for a PAN outside every card range.
public enum OutOfRangeAnswer: Sendable, Equatable {
    /// An ARes of its own with this status and reason (N/13 "cardholder not enrolled" by default).
    case ares(TransStatus, reason: String)
    /// An Erro 305 (transaction data not valid) naming `acctNumber`.
    case erro
}

public struct DirectoryServerSettings: Sendable {
    public var referenceNumber = "3DS_LOA_DIS_HARN_020200_00001"
    public var schemes: [PaymentScheme]
    public var outOfRange = OutOfRangeAnswer.ares(.notAuthenticated, reason: "13")
    /// The device-data keys of each scheme, by RID.
    public var keys: [String: DirectoryServerKeys]

    public init(schemes: [PaymentScheme], keys: [String: DirectoryServerKeys]) {
        self.schemes = schemes
        self.keys = keys
    }
}

/// The Directory Server role: checks AReqs, decrypts the SDK's device data, routes by card
/// range to the ACS and relays its answer; answers PReqs with its card ranges.
public final class DirectoryServer: Sendable {
    /// What the DS remembers of a transaction: where its parties are, what its RReq depends
    /// on, and the Erro messages that passed through it.
    struct Transaction: ArchivableRecord {
        var ids: TransactionIDs
        let version: MessageVersion
        let channel: DeviceChannel?
        let threeDSServerURL: String
        /// Where the transaction's ACS takes AReqs (and Erro); nil when the DS answered itself.
        let acsURL: String?
        /// What the RReq rules read of the ARes as relayed (`ResultsRules.aresContext`: its
        /// `acsDecConInd` and transStatus), not the whole message (its acsSignedContent alone is kilobytes).
        var aresContext: JSONValue?
        var erros: [String] = []
        var warnings: [String] = []
        /// Set when the transaction's RReq has been relayed.
        var resultsRelayed = false
        /// The Erro the 3DS Server owes about the DS's answer: required when the scenario's faults spoilt the ARes.
        var erroDue = ErroDue.forbidden
        /// The scenario's faults on the RReq the DS relays to the 3DS Server.
        var resultsFaults: [Fault] = []

        var archivedJSON: [UInt8] { JSONWriter.write(json) }

        /// Answered without a challenge, or its result relayed: no message is due.
        var isSettled: Bool {
            guard let status = aresContext?["transStatus"]?.stringValue else { return false }
            return resultsRelayed || TransStatus(rawValue: status)?.awaitsResult != true
        }

        var json: JSONValue {
            .object(omittingAbsent: [
                ("dsTransID", .string(ids.dsTransID)), ("threeDSServerTransID", .string(ids.threeDSServerTransID)),
                ("acsTransID", .string(ids.acsTransID)), ("sdkTransID", .string(ids.sdkTransID)),
                ("messageVersion", .string(version.rawValue)), ("deviceChannel", .string(channel?.rawValue)),
                ("transStatus", aresContext?["transStatus"]),
                ("erro", erros.isEmpty ? nil : .array(erros.map(JSONValue.string))),
                ("warnings", warnings.isEmpty ? nil : .array(warnings.map(JSONValue.string))),
                ("resume", resume),
            ])
        }
    }

    let settings: DirectoryServerSettings
    /// Where the DS finds a transaction's faults on its leg; nil when it plays no scenarios.
    let scenarios: ScenarioSource?
    let peer: EMVPeer
    let endpoints: LocalEndpoints
    let transactions: TransactionStore<Transaction>
    /// Transactions held now.
    public var transactionCount: Int { transactions.count }

    /// The store's name of this role's records.
    public static let role = "ds"

    /// A transaction this instance does not hold, taken up from its stored record when instances share the store:
    /// its instance died (a live one is passed its messages, docs/scale.md), and its RReq must still be relayed.
    func takeUp(_ dsTransID: String) async {
        guard sharedStore != nil,
              await transactions.takeUp(dsTransID, restore: { (try? JSONReader.parse($0).value).flatMap(Transaction.init(stored:)) }) != nil else { return }
        await journal?.takeUp(dsTransID)
        logger.info("transaction taken up from the store", metadata: ["dsTransID": "\(dsTransID)"])
    }

    /// True when this instance holds the transaction `dsTransID` in memory.
    public func holds(_ dsTransID: String) -> Bool { transactions.contains(dsTransID) }
    public var transactionsStored: Int { transactions.stored }
    /// The `dsTransID` of each `threeDSServerTransID` seen, to refuse one used again.
    let serverTransIDs: TransactionStore<String>
    /// The transaction of each of the newest SDK ephemeral keys seen (by their x coordinate): an SDK
    /// that reuses its key does so in its next transactions, so the newest 10,000 are enough.
    let ephemeralKeys = TransactionStore<EphemeralKeyUse>(capacity: 10_000)

    /// The DS's card ranges with the changes made to them, by serial number (PReq `serialNum`).
    let cardRanges: CardRangeLog
    /// What the DS remembers of each 3DS Server's PReqs, by `threeDSServerRefNumber`.
    let preparations = TransactionStore<Preparation>(capacity: 10_000)
    /// The `threeDSServerRefNumber` of each PReq answered, by its `threeDSServerTransID`: an Erro about a PRes names no more.
    let preparationSenders = TransactionStore<String>(capacity: 10_000)
    /// Faults the next PRes answers take (`POST /admin/ds/pres-faults`): a PReq carries no card to pick a scenario by.
    let presFaults = Mutex<PResFaults?>(nil)
    /// What a 3DS Server's PReqs are judged against: those since the scope began. A test run begins one, since a 3DS
    /// Server may rightly start it without a card-range cache (restarted, or a pipeline's first job on a shared harness)
    /// and ask for every range, at once.
    let preparationScope = Atomic<Int>(0)

    /// Forgets what each 3DS Server was given by PReq, for judging: its next PReq may ask for every range, at any time.
    public func beginPreparationScope() {
        preparationScope.add(1, ordering: .relaxed)
    }

    /// A 3DS Server's last PReq, and the checks of its PReqs, graded on its next AReq (a run's cases are AReqs).
    struct Preparation: Sendable {
        var lastAt: Date
        /// The serial its last PRes gave; nil after an Erro 307, when every range must be asked for again.
        var serial: String?
        var pending: [CheckResult] = []
        /// The Erro due about the DS's last answer to a PReq whose faults were armed, until the 3DS Server's Erro or next AReq.
        var owed: OwedErro?
        /// The ``preparationScope`` it was given in: one of an earlier scope is none the 3DS Server is held to.
        var scope: Int = 0
    }

    /// What a 3DS Server owes about an answer to its PReq that the armed faults made.
    struct OwedErro: Sendable {
        let threeDSServerTransID: String
        let due: ErroDue
        let version: MessageVersion
        let faults: String
    }

    /// The armed PRes faults: the next `remaining` PReqs (of one 3DS Server, when named) are answered with them.
    struct PResFaults: Sendable {
        let faults: [Fault]
        var remaining: Int
        let threeDSServerRefNumber: String?
        /// Where the store counts their uses over the instances of a cluster (the arming change's id); nil for one instance.
        let sharedCount: String?
    }

    /// Where an ephemeral key was first seen.
    struct EphemeralKeyUse: Sendable {
        let sdkTransID: String
        let dsTransID: String
    }
    /// Where the DS writes each transaction's messages (both legs, the device data decrypted) and
    /// the checks of the AReq and RRes; nil when nobody reads them.
    let journal: Journal?
    let logger: Logger
    /// The store other instances share, when they do: a transaction whose instance died is taken up from its record.
    let sharedStore: (any TransactionArchive)?

    public init(settings: DirectoryServerSettings, scenarios: ScenarioSource? = nil, peer: EMVPeer, endpoints: LocalEndpoints,
                capacity: Int = StoreDefaults.maxTransactions, archive: (any TransactionArchive)? = nil, inMemory: Int? = nil, sharedStore: Bool = false,
                cardRangeEpoch: String? = nil, journal: Journal? = nil, logger: Logger) {
        // A cluster's instances share one epoch: a serial one gave, another knows (their changes reach them all, in order).
        cardRanges = cardRangeEpoch.map { CardRangeLog(epoch: $0) } ?? CardRangeLog()
        self.journal = journal
        self.sharedStore = sharedStore ? archive : nil
        self.settings = settings
        self.scenarios = scenarios
        self.peer = peer
        self.endpoints = endpoints
        transactions = TransactionStore(capacity: capacity, archive: archive, role: Self.role, memoryBound: inMemory)
        serverTransIDs = TransactionStore(capacity: capacity)
        self.logger = logger
    }

    /// The JSON of the newest records `include` accepts (memory, then the store): `GET /admin/ds/transactions`.
    public func newestRecords(limit: Int, where include: ([UInt8]) -> Bool) async -> [[UInt8]] {
        await transactions.newestJSON(limit: limit, where: include)
    }

    public func register(on router: inout Router) {
        router.emv("/ds/areq", receives: .aReq) { request async in await self.authenticate(request) }
        router.emv("/ds/preq", receives: .pReq) { request async in await self.prepare(request) }
        router.get("/admin/ds/card-ranges") { _, _ in self.cardRangeListing() }
        router.get("/admin/ds/pres-faults") { _, _ in self.presFaultListing() }
        router.post("/admin/ds/pres-faults") { request, _ in try self.armPResFaults(request) }
        router.post("/admin/ds/card-ranges") { request, _ in try self.changeCardRange(request) }
        router.emv("/ds/rreq", receives: .rReq) { request async in await self.results(request) }
        router.record("/admin/ds/transactions/{id}", "DS transaction") { await self.transactions.json($0) }
    }

    // MARK: AReq

    func authenticate(_ request: HTTPRequest) async -> HTTPResponse {
        if let erro = request.erroMessage { return await forward(erro) }
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
            entry.record(Self.purchaseDateCheck(purchaseDate, now: Date(), cardholderPresent: areq.deviceChannel != DeviceChannel.threeRI.rawValue))
        }
        for check in pendingPreparationChecks(of: areq["threeDSServerRefNumber"]) { entry.record(check) }
        entry.record(cardRangeCheck(areq))
        guard let scheme = settings.schemes.scheme(for: areq.acctNumber) else {
            await journal?.open(entry)
            return answered(dsTransID, outOfRange(areq, dsTransID: dsTransID))
        }
        if areq.deviceChannel == "01" {
            entry.record(.pass(.sdkParameters))
            // A Split-SDK's server vouches for the transaction before anything else of it is read (SB 279 Req 390).
            if areq["sdkType"] == "02" {
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
        let answer = await relay(areq, to: acsURL, received: received)
        guard !faults.isEmpty, let json = try? JSONReader.parse(answer.body).value else { return answered(dsTransID, answer) }
        return answered(dsTransID, await FaultyAnswer.answer(json, faults: faults, from: .directoryServer),
                        note: "as the scenario's faults on the DS leg made it")
    }

    /// An AReq the DS cannot take, in the journal as far as it can be read: its card, version
    /// and ids, the failed check and the Erro.
    private func refused(_ request: HTTPRequest, dsTransID: String, _ invalid: InvalidMessage) async -> HTTPResponse {
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
    private func answered(_ dsTransID: String, _ answer: HTTPResponse, note: String? = nil) -> HTTPResponse {
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
    private func deviceData(of areq: AReq, scheme: PaymentScheme) throws(DeviceDataError) -> ([UInt8], JSONValue, JWEHeader) {
        guard let keys = settings.keys[scheme.rid] else { throw DeviceDataError(reason: "no DS keys for \(scheme.rid)") }
        let (plaintext, header) = try DeviceData.open(areq["sdkEncData"] ?? "", keys: keys, directoryServerID: scheme.rid)
        guard let json = try? JSONReader.parse(plaintext).value, json.objectMembers != nil else {
            throw DeviceDataError(reason: "sdkEncData decrypts to something other than a JSON object")
        }
        return (plaintext, json, header)
    }

    /// How far ahead of the DS's clock a purchaseDate may be: the two clocks' difference.
    static let purchaseDateAheadAllowance = 300
    /// How far behind it a cardholder-present purchaseDate may be before it is a warning: the cardholder is at the
    /// checkout as the AReq goes, so an hour or more behind is most likely local time west of Greenwich, which the DS
    /// cannot prove (an order placed earlier and paid now is possible).
    static let purchaseDateBehindAllowance = 3600

    /// `areq.purchase-date`: a purchase is not in the future; a purchaseDate ahead of UTC is local
    /// time east of Greenwich. Five minutes of clock difference are allowed. In an app or browser AReq
    /// (the cardholder present) an hour or more behind is a warning.
    static func purchaseDateCheck(_ text: String, now: Date, cardholderPresent: Bool = true) -> CheckResult {
        guard let date = UTCTime.date(purchaseDate: text) else { return .pass(.purchaseDate) }  // its format is areq.elements'
        let ahead = Int(date.timeIntervalSince(now))
        if cardholderPresent, -ahead >= purchaseDateBehindAllowance {
            let behind = -ahead
            return CheckResult(.purchaseDate, .warning, "purchaseDate \(text) is \(behind / 3600) h \(behind % 3600 / 60) min behind the DS's UTC clock "
                               + "(\(UTCTime.purchaseDate(now))) in an AReq with the cardholder present: local time west of Greenwich written as UTC?")
        }
        guard ahead > purchaseDateAheadAllowance else { return .pass(.purchaseDate) }
        return .fail(.purchaseDate, "purchaseDate \(text) is \(ahead / 3600) h \(ahead % 3600 / 60) min ahead of the DS's UTC clock "
                                     + "(\(UTCTime.purchaseDate(now))): the 3DS Server wrote its local time")
    }

    /// `areq.device-info`: the device data's layout, as the SDK specification gives it.
    static func deviceInformationCheck(_ json: JSONValue) -> CheckResult {
        let (failures, warnings) = DeviceInformation.problems(in: json)
        if !failures.isEmpty { return .fail(.deviceInformation, (failures + warnings).joined(separator: "; ")) }
        return warnings.isEmpty ? .pass(.deviceInformation) : CheckResult(.deviceInformation, .warning, warnings.joined(separator: "; "))
    }

    /// `areq.sdk-ephem-key`: an ephemeral key not seen with another `sdkTransID` (a 3DS Server that sends
    /// the same SDK transaction again, after an HTTP failure say, rightly sends its key again).
    private func freshKeyCheck(_ areq: AReq, dsTransID: String) -> CheckResult {
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

    /// `received`: the AReq as the 3DS Server sent it (the journal keeps what the DS changed of it).
    private func relay(_ areq: AReq, to acsURL: String, received: JSONValue) async -> HTTPResponse {
        let dsTransID = areq["dsTransID"] ?? ""
        let sent = WrittenJSON(areq.json)
        journal?.relayed(dsTransID, from: .directoryServer, to: .accessControlServer, type: MessageType.aReq.rawValue, of: .threeDSServer,
                         original: received, relayed: areq.json, body: sent.bytes)
        let answer: PeerAnswer<(envelope: MessageEnvelope, bytes: [UInt8])>
        do {
            answer = try await peer.exchange(sent, url: acsURL) { body throws(InvalidMessage) in
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
    private func tellACS(_ erro: ErroMessage, dsTransID: String, url: String) async {
        var erro = erro
        erro.dsTransID = dsTransID
        journal?.message(dsTransID, from: .directoryServer, to: .accessControlServer, erro.json)
        let failure = await peer.notify(erro, url: url)
        record(dsTransID, "sent to the ACS: Erro \(erro.errorCode.rawValue) about the ARes" + (failure.map { " (not delivered: \($0))" } ?? ""))
    }

    /// An Erro from the 3DS Server (about an ARes it could not process), passed on to the
    /// transaction's ACS. Erro messages are not answered with a message: an empty 200.
    private func forward(_ erro: ErroMessage) async -> HTTPResponse {
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

    /// The 3DS Server's Erro about what the DS sent it (its answer, an ARes or a PRes; or an RReq), against what that message called for.
    static func erroCheck(_ erro: ErroMessage, due: ErroDue, about message: MessageType, version: MessageVersion) -> CheckResult {
        let check: ConformanceCheck = switch message {
        case .rReq: .rreqErro
        case .pRes: .presErro
        default: .aresErro
        }
        let seen = "Erro \(erro.errorCode.rawValue) (errorComponent \(erro.errorComponent.rawValue), errorMessageType \(erro.errorMessageType ?? "none"), "
            + "errorDetail \"\(erro.errorDetail)\")"
        switch due {
        case .forbidden:
            return .fail(check, "\(seen) received, but the DS's \(message.rawValue) was valid or an Erro: nothing was due (an Erro is never answered with an Erro)")
        case .ungraded:
            return .pass(check, "\(seen) received about an answer that never arrived whole; allowed, not required")
        case .required(let codes, let field):
            var problems: [String] = []
            if !codes.contains(erro.errorCode) { problems.append("errorCode \(erro.errorCode.rawValue), expected \(codes.map(\.rawValue).joined(separator: " or "))") }
            if erro.errorComponent != .threeDSServer { problems.append("errorComponent \(erro.errorComponent.rawValue), expected S (the 3DS Server)") }
            // A message not read as one (101) may leave its type unnamed; one that was read is named.
            let typeKnown = codes != [.messageNotRecognised]
            if erro.errorMessageType.map({ $0 != message.rawValue }) ?? typeKnown {
                problems.append("errorMessageType \(erro.errorMessageType ?? "absent"), expected \(message.rawValue)")
            }
            if erro.messageVersion != version.rawValue { problems.append("messageVersion \(erro.messageVersion), expected the AReq's \(version.rawValue)") }
            if let problem = ErrorDetail.problem(erro.errorDetail, code: erro.errorCode, field: field, extensionID: Fault.criticalExtensionID) {
                problems.append(problem)
            }
            return problems.isEmpty ? .pass(check, "\(seen) received") : .fail(check, "\(seen) received: " + problems.joined(separator: "; "))
        }
    }

    private func record(_ dsTransID: String, _ event: String) {
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
        case .invalid(_, let invalid):
            (code, detail) = (invalid.code, invalid.errorDetail(elementPrefix: "ARes."))
            ids.acsTransID = invalid.ids.acsTransID
        }
        var erro = ErroMessage(messageVersion: areq.version.rawValue, errorCode: code, errorComponent: .directoryServer, errorDetail: detail,
                               errorMessageType: MessageType.aRes.rawValue, threeDSServerTransID: ids.threeDSServerTransID,
                               acsTransID: ids.acsTransID, dsTransID: areq["dsTransID"], sdkTransID: ids.sdkTransID)
        erro.explain("the ACS: \(failure.summary)")
        return erro
    }

    private func outOfRange(_ areq: AReq, dsTransID: String) -> HTTPResponse {
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

    // MARK: PReq

    /// Answers a PReq: without `serialNum` every range, with one the changes since it (`actionInd` A, M, D
    /// in order; none when nothing changed), with one this DS never gave Erro 307; always the current serial.
    /// The armed PRes faults spoil the answer; an Erro the 3DS Server posts here about it is graded (`pres.erro`).
    func prepare(_ request: HTTPRequest) async -> HTTPResponse {
        if let erro = request.erroMessage { return preparationErro(erro) }
        let preq: PReq
        do { preq = try PReq(bytes: try request.emvMessageBody(), written: request.writtenJSON) } catch {
            return await refusedPreparation(request, error)
        }
        let now = Date()
        let serial = cardRanges.serial
        let scope = preparationScope.load(ordering: .relaxed)
        let earlier = preparations.get(preq.threeDSServerRefNumber).flatMap { $0.scope == scope ? $0 : nil }
        let checks = Self.preparationChecks(preq, earlier: earlier, currentSerial: serial, now: now)
        let ranges = preq.serialNum.map(cardRanges.changes(since:)) ?? cardRanges.current(base: configuredRanges())
        let answer: JSONValue
        if let ranges {
            answer = PRes(messageVersion: preq.messageVersion, threeDSServerTransID: preq.threeDSServerTransID,
                          dsTransID: TransactionIdentifier.make(), serialNum: serial, cardRangeData: ranges).json
        } else {
            let reason = "is not a serial this DS gave (its serials start anew when it starts): send the PReq without serialNum for every range"
            answer = InvalidMessage(Violation(field: "serialNum", code: .serialNumberNotValid, reason: reason), about: preq.json)
                .erro(from: .directoryServer).json
        }
        let faults = await takePResFaults(for: preq.threeDSServerRefNumber)
        let owed = faults.isEmpty ? nil : OwedErro(threeDSServerTransID: preq.threeDSServerTransID, due: ErroDue(answerSpoiltBy: faults),
                                                   version: preq.messageVersion,
                                                   faults: faults.map(\.name).joined(separator: ", "))
        preparationSenders.put(preq.threeDSServerTransID, preq.threeDSServerRefNumber)
        // A PRes the faults spoilt or held back is none the 3DS Server could keep: its next PReq is judged against the one before.
        let given = faults.isEmpty ? (at: now, serial: ranges == nil ? nil : serial) : (at: earlier?.lastAt ?? now, serial: earlier?.serial)
        // The newest checks are kept: a 3DS Server that sends no AReq keeps no more than ten.
        preparations.put(preq.threeDSServerRefNumber, Preparation(lastAt: given.at, serial: given.serial,
                                                                  pending: Array(((earlier?.pending ?? []) + checks).suffix(10)), owed: owed, scope: scope))
        guard !faults.isEmpty else { return .emv(answer) }
        logger.info("PRes spoilt by the armed faults", metadata: ["faults": "\(owed?.faults ?? "")", "threeDSServerTransID": "\(preq.threeDSServerTransID)"])
        return await FaultyAnswer.answer(answer, faults: faults, from: .directoryServer)
    }

    /// A PReq the DS cannot take: the Erro, and a journal entry of its own (no transaction follows from it) that fails
    /// `preq.elements`, so that a test run of the 3DS Server shows why it sent no AReq.
    private func refusedPreparation(_ request: HTTPRequest, _ invalid: InvalidMessage) async -> HTTPResponse {
        let answer = HTTPResponse.erro(invalid, from: .directoryServer)
        guard let journal else { return answer }
        let json = request.bodyJSON
        let id = TransactionIdentifier.make()
        var entry = JournalEntry(dsTransID: id, ids: json.map(TransactionIDs.init(json:)) ?? TransactionIDs(), pan: nil,
                                 version: json?["messageVersion"]?.stringValue, channel: nil, scenario: nil)
        entry.caseTag = request.harnessCase
        entry.refused = MessageType.pReq.rawValue
        entry.add(from: .threeDSServer, to: .directoryServer, type: MessageType.pReq.rawValue, body: request.body, isJSON: json != nil)
        entry.record(.fail(.preparationElements, invalid.description))
        entry.add(from: .directoryServer, to: .threeDSServer, type: MessageType.erro.rawValue, body: answer.body)
        entry.end(transStatus: nil, because: "Erro \(invalid.erro(from: .directoryServer).errorCode.rawValue) to the PReq")
        await journal.open(entry)
        return answer
    }

    /// An Erro from a 3DS Server about the DS's answer to its PReq, graded against what that answer called for
    /// (`pres.erro`, on the 3DS Server's next AReq). Erro messages are not answered with a message.
    private func preparationErro(_ erro: ErroMessage) -> HTTPResponse {
        let taken = HTTPResponse.taken(erro)
        guard let id = erro.threeDSServerTransID, let sender = preparationSenders.get(id) else {
            logger.info("Erro from a 3DS Server names no PReq of this DS", metadata: ["errorCode": "\(erro.errorCode.rawValue)"])
            return taken
        }
        preparations.update(sender) { preparation in
            let due = preparation.owed.flatMap { $0.threeDSServerTransID == id ? $0 : nil }
            // A PRes the faults left alone was valid: nothing was due.
            let check = Self.erroCheck(erro, due: due?.due ?? .forbidden, about: .pRes, version: due?.version ?? .v2_2_0)
            if due != nil { preparation.owed = nil }
            preparation.pending = Array((preparation.pending + [check]).suffix(10))
        }
        return taken
    }

    /// The configured ranges, each scenario card with a 3DS Method of its own cut out.
    private func configuredRanges() -> [CardRangeData] {
        settings.schemes.flatMap { scheme in
            scheme.cardRanges.flatMap { cardRangeData($0, methodURL: scheme.acsURL == nil ? endpoints.url(ACSPaths.threeDSMethod) : nil) }
        }
    }

    /// How long a 3DS Server keeps its cached ranges at least: the specification asks for a PReq at most once an hour.
    static let preparationInterval: TimeInterval = 3600

    /// `preq.serial-number` and `preq.frequency` of a PReq, against the 3DS Server's PReq before it.
    static func preparationChecks(_ preq: PReq, earlier: Preparation?, currentSerial: String, now: Date) -> [CheckResult] {
        guard let earlier, let given = earlier.serial else { return [.pass(.preparationSerial), .pass(.preparationFrequency)] }
        let serialCheck: CheckResult = preq.serialNum == nil
            ? .fail(.preparationSerial, "a PReq without serialNum, though this DS's last PRes to the 3DS Server gave serial \(given): "
                                        + "it asked for every range again instead of what changed")
            : .pass(.preparationSerial)
        let since = Int(now.timeIntervalSince(earlier.lastAt))
        // A change of the ranges since its last PRes (a tester's, through /admin/ds/card-ranges) excuses an early PReq.
        let frequencyCheck: CheckResult = since < Int(preparationInterval) && given == currentSerial
            ? .fail(.preparationFrequency, "a PReq \(since) s after the 3DS Server's previous one, with no card-range change since: "
                                           + "a PReq at most once an hour and at least once every 24 hours, not one per transaction")
            : .pass(.preparationFrequency)
        return [serialCheck, frequencyCheck]
    }

    /// The checks of the 3DS Server's PReqs since its last AReq, taken once; an Erro still owed about a spoilt PRes fails `pres.erro`.
    private func pendingPreparationChecks(of threeDSServerRefNumber: String?) -> [CheckResult] {
        guard let threeDSServerRefNumber else { return [] }
        let scope = preparationScope.load(ordering: .relaxed)
        return preparations.update(threeDSServerRefNumber) { preparation in
            defer { preparation.pending = []; preparation.owed = nil }
            guard preparation.scope == scope else { return [] }
            guard let owed = preparation.owed, let codes = owed.due.codes else { return preparation.pending }
            let naming = owed.due.field.map { ", errorDetail naming \($0)" } ?? ""
            return preparation.pending + [.fail(.presErro, "no Erro came about the PRes the DS spoilt (\(owed.faults)) for the PReq \(owed.threeDSServerTransID) "
                                                         + "before this AReq: an Erro \(codes.joined(separator: " or "))\(naming) was due, posted to the DS's PReq URL")]
        } ?? []
    }

    // MARK: PRes faults

    /// The armed faults for the next PReq of `threeDSServerRefNumber`, taken once; none when none are armed for it. In a
    /// cluster each instance has them armed, and the store gives each of the `count` uses to one PReq, wherever it lands.
    private func takePResFaults(for threeDSServerRefNumber: String) async -> [Fault] {
        if let armed = presFaults.withLock({ $0 }), let id = armed.sharedCount, let cluster = sharedStore as? any ClusterStore {
            guard armed.threeDSServerRefNumber.map({ $0 == threeDSServerRefNumber }) ?? true else { return [] }
            // Unknown to the store (nil): none rather than a use counted twice.
            let taken = await cluster.use(id, for: nil)
            presFaults.withLock { current in
                guard var mine = current, mine.sharedCount == id else { return }
                mine.remaining -= 1
                current = taken == true && mine.remaining > 0 ? mine : nil
            }
            return taken == true ? armed.faults : []
        }
        return presFaults.withLock { armed in
            guard var current = armed, current.threeDSServerRefNumber.map({ $0 == threeDSServerRefNumber }) ?? true else { return [] }
            current.remaining -= 1
            armed = current.remaining > 0 ? current : nil
            return current.faults
        }
    }

    /// `POST /admin/ds/pres-faults` with `{"faults": [{"fault": "missing-field", "value": "dsTransID"}], "count": 1,
    /// "threeDSServerRefNumber": "…"}`: the next `count` PReqs (of that 3DS Server, when named) are answered with
    /// these faults, written as a scenario's; `count` 0 disarms. The faults a DS answer takes: content, timing, transport.
    private func armPResFaults(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        guard request.body.count <= 4096 else { throw HTTPError(.payloadTooLarge, "armed PRes faults are at most 4096 bytes") }
        let json = try request.jsonBody()
        let count = json["count"].map { $0.numberText.flatMap { Int($0) } } ?? 1
        guard let count, (0...1000).contains(count) else { throw HTTPError(.badRequest, "count must be 0 (disarm) to 1000 PReqs") }
        var faults: [Fault] = []
        for (index, entry) in (json["faults"]?.arrayValue ?? []).enumerated() {
            guard let name = entry["fault"]?.stringValue else { throw HTTPError(.badRequest, "faults[\(index)].fault is required: a fault name as in scenario files") }
            let fault: Fault
            do { fault = try Fault(name: name, value: entry["value"]?.stringValue) } catch {
                throw HTTPError(.badRequest, "faults[\(index)]: \(error)")
            }
            // A PRes is the DS's answer to the 3DS Server, as an ARes is: the faults of that leg.
            guard fault.legs.contains(.directoryServer) else {
                throw HTTPError(.badRequest, "faults[\(index)]: \(fault.name) is not a fault of a DS answer (it belongs to the \(fault.legs.map(\.rawValue).sorted().joined(separator: ", ")) leg)")
            }
            faults.append(fault)
        }
        guard count == 0 || !faults.isEmpty else { throw HTTPError(.badRequest, "faults must name at least one fault (or count 0 to disarm)") }
        let refNumber = json["threeDSServerRefNumber"]?.stringValue
        // In a cluster, one count for every instance: under the arming change's id, as a pin's.
        let sharedCount = (sharedStore as? any ClusterStore).flatMap { cluster in
            request.headers[RecordedChange.idHeader].map { id in
                if count > 0 { cluster.startCount(id: id, remaining: count, expires: SQLiteArchive.wallClock() + Self.presFaultsLifetimeMilliseconds) }
                return id
            }
        }
        presFaults.withLock {
            $0 = count == 0 ? nil : PResFaults(faults: faults, remaining: count, threeDSServerRefNumber: refNumber, sharedCount: sharedCount)
        }
        logger.info("PRes faults armed", metadata: ["faults": "\(faults.map(\.name))", "count": "\(count)"])
        return .emv(presFaultJSON(), status: count == 0 ? .ok : .created)
    }

    /// How long the store counts armed PRes faults' uses in a cluster: as long as a pin lives at most.
    static let presFaultsLifetimeMilliseconds = Int64(PinBoard.maxLifetime.components.seconds) * 1000

    /// `GET /admin/ds/pres-faults`: what the next PReqs will be answered with (in a cluster, as this instance saw them used).
    private func presFaultListing() -> HTTPResponse { .emv(presFaultJSON()) }

    private func presFaultJSON() -> JSONValue {
        let armed = presFaults.withLock { $0 }
        return .object(omittingAbsent: [
            ("faults", .array((armed?.faults ?? []).map { .string($0.name) })), ("remaining", .number(String(armed?.remaining ?? 0))),
            ("threeDSServerRefNumber", .string(armed?.threeDSServerRefNumber)),
        ])
    }

    /// `areq.card-range`: the card is in a range the DS's PRes holds now, in a version that range offers.
    /// Only a change of the ranges can fail it: the configured ranges offer every version.
    private func cardRangeCheck(_ areq: AReq) -> CheckResult {
        guard cardRanges.hasChanges else { return .pass(.areqCardRange) }
        let pan = areq.acctNumber
        let serial = cardRanges.serial
        let configured = configuredRanges()
        guard let range = cardRanges.current(base: configured).first(where: { $0.contains(pan: pan) }) else {
            guard configured.contains(where: { $0.contains(pan: pan) }) else { return .pass(.areqCardRange) }  // never enrolled: outOfRange answers
            return .fail(.areqCardRange, "no card range of the DS holds \(CardNumber.masked(pan)) since a change (serial \(serial)): "
                                         + "a 3DS Server sends no AReq for a card its ranges do not hold")
        }
        guard let versions = range.versions, versions.contains(areq.version) else {
            let offered = range.versions.map { "\($0.lowerBound.rawValue) to \($0.upperBound.rawValue)" } ?? "no version"
            return .fail(.areqCardRange, "messageVersion \(areq.version.rawValue) is not offered by the card's range \(range.startRange)-\(range.endRange) "
                                         + "(\(offered), serial \(serial))")
        }
        return .pass(.areqCardRange)
    }

    /// `GET /admin/ds/card-ranges`: the ranges as a full PRes gives them now, with the serial.
    private func cardRangeListing() -> HTTPResponse {
        .emv(.object([("serialNum", .string(cardRanges.serial)),
                      ("cardRangeData", .array(cardRanges.current(base: configuredRanges()).map { $0.json(version: .v2_2_0) }))]))
    }

    /// `POST /admin/ds/card-ranges`: a change the next PReqs get (`actionInd` A adds a range within a scheme
    /// that overlaps none, M modifies and D deletes a range the listing gives, by its exact bounds).
    private func changeCardRange(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        guard request.body.count <= 4096 else { throw HTTPError(.payloadTooLarge, "a card-range change is at most 4096 bytes") }
        let json = try request.jsonBody()
        guard let action = json["actionInd"]?.stringValue, ["A", "M", "D"].contains(action) else {
            throw HTTPError(.badRequest, "actionInd must be A (add), M (modify) or D (delete)")
        }
        guard let start = json["startRange"]?.stringValue, let end = json["endRange"]?.stringValue, start.count == end.count,
              (13...19).contains(start.count), (start + end).allSatisfy({ ("0"..."9").contains($0) }), start <= end else {
            throw HTTPError(.badRequest, "startRange and endRange must be card numbers of one length (13-19 digits), startRange first")
        }
        func version(_ key: String, _ fallback: MessageVersion) throws(HTTPError) -> MessageVersion {
            guard let text = json[key]?.stringValue else { return fallback }
            guard let version = MessageVersion(rawValue: text) else {
                throw HTTPError(.badRequest, "\(key) must be one of \(MessageVersion.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return version
        }
        let current = cardRanges.current(base: configuredRanges())
        let existing = current.first { $0.startRange == start && $0.endRange == end }
        var range = existing ?? CardRangeData(startRange: start, endRange: end, versions: MessageVersion.v2_1_0...MessageVersion.latest)
        range.acsStartProtocolVersion = try version("acsStartProtocolVersion", range.acsStartProtocolVersion)
        range.acsEndProtocolVersion = try version("acsEndProtocolVersion", range.acsEndProtocolVersion)
        guard range.acsStartProtocolVersion <= range.acsEndProtocolVersion else {
            throw HTTPError(.badRequest, "acsStartProtocolVersion must not be after acsEndProtocolVersion")
        }
        if json["threeDSMethodURL"] != nil { range.threeDSMethodURL = json["threeDSMethodURL"]?.stringValue }
        range.actionInd = action
        switch action {
        case "A":
            guard settings.schemes.scheme(for: start) != nil, settings.schemes.scheme(for: end) != nil else {
                throw HTTPError(.badRequest, "the range must lie within a configured scheme's card ranges, for the DS to route its AReqs")
            }
            if let overlap = current.first(where: { $0.startRange <= end && start <= $0.endRange && $0.startRange.count == start.count }) {
                throw HTTPError(.conflict, "the range overlaps \(overlap.startRange)-\(overlap.endRange): delete or modify that one")
            }
        default:
            guard existing != nil else {
                throw HTTPError(.notFound, "no card range \(start)-\(end): GET /admin/ds/card-ranges lists them by their exact bounds")
            }
        }
        let serial = cardRanges.record(range)
        logger.info("card range changed", metadata: ["actionInd": "\(action)", "range": "\(start)-\(end)", "serialNum": "\(serial)"])
        return .emv(.object([("serialNum", .string(serial)), ("cardRangeData", range.json(version: .v2_2_0))]), status: .created)
    }

    /// A configured range as PRes card ranges, each with the harness ACS's 3DS Method URL
    /// (`methodURL`; none for an ACS elsewhere). A scenario whose card has its own 3DS Method
    /// gets a range of its own, cut out of the scheme's so that no two ranges overlap: its
    /// page's behaviour, or no method URL at all.
    private func cardRangeData(_ range: CardRange, methodURL: String?) -> [CardRangeData] {
        let versions = MessageVersion.v2_1_0...MessageVersion.latest
        let bounds = range.panBounds
        func data(_ start: UInt64, _ end: UInt64, methodURL: String?) -> CardRangeData {
            var data = CardRangeData(startRange: Self.digits(start, bounds.start.count), endRange: Self.digits(end, bounds.start.count), versions: versions)
            data.threeDSMethodURL = methodURL
            return data
        }
        guard let low = UInt64(bounds.start), let high = UInt64(bounds.end) else { return [] }
        guard let methodURL else { return [data(low, high, methodURL: nil)] }
        // The card numbers as the range's bounds compare them (cut or padded to their length).
        let scripted: [(card: UInt64, scenario: Scenario)] = (scenarios?.catalog.scenarios ?? []).compactMap { scenario in
            guard scenario.threeDSMethod != .standard, let pan = scenario.pan, range.contains(pan: pan) else { return nil }
            return UInt64(CardNumber.aligned(pan, toLength: bounds.start.count)).map { ($0, scenario) }
        }.sorted { $0.card < $1.card }
        var ranges: [CardRangeData] = []
        var next = low
        for (card, scenario) in scripted where card >= next {
            if card > next { ranges.append(data(next, card - 1, methodURL: methodURL)) }
            let own = scenario.threeDSMethod.hasURL ? methodURL + "?scenario=" + FormEncoding.encode(scenario.name) : nil
            ranges.append(data(card, card, methodURL: own))
            next = card + 1
        }
        if next <= high { ranges.append(data(next, high, methodURL: methodURL)) }
        return ranges
    }

    private static func digits(_ number: UInt64, _ count: Int) -> String {
        let text = String(number)
        return String(repeating: "0", count: max(0, count - text.count)) + text
    }

    // MARK: RReq

    /// Relays the ACS's RReq to the 3DS Server of the transaction, as received, and its RRes
    /// back. An RReq or RRes the DS cannot relay is answered with an Erro to the ACS, and the
    /// same Erro goes to the 3DS Server (5.9.8, 5.9.10); the 3DS Server's own Erro is relayed.
    func results(_ request: HTTPRequest) async -> HTTPResponse {
        let body: [UInt8]
        do { body = try request.emvMessageBody() } catch { return .erro(error, from: .directoryServer) }
        let written = request.writtenJSON
        let named = request.bodyJSON?["dsTransID"]?.stringValue
        if let named { await takeUp(named) }
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
            if case .invalid(_, let invalid) = error { return await refuse(invalid, of: rreq.dsTransID, transaction, about: "RRes") }
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

    /// The ids of `rres` that are not those of the RReq it answers, as 301 violations; nil when it echoes all three.
    private static func unechoed(_ rres: TransactionIDs, of rreq: RReq) -> InvalidMessage? {
        let violations = [("threeDSServerTransID", rres.threeDSServerTransID, rreq.threeDSServerTransID),
                          ("acsTransID", rres.acsTransID, rreq.acsTransID),
                          ("dsTransID", rres.dsTransID, rreq.dsTransID)].filter { $0.1 != $0.2 }.map { field, sent, wanted in
            Violation(field: field, code: .transactionIDNotRecognised, reason: "\(field) \(sent ?? "absent") is not the RReq's \(wanted)")
        }
        return violations.isEmpty ? nil : InvalidMessage(violations: violations, messageType: MessageType.rRes.rawValue, claimedVersion: nil, ids: rres)
    }

    /// An RReq or RRes of a known transaction that the DS cannot relay: the Erro, in the
    /// transaction's version and with its ids, answers the ACS and goes to the 3DS Server.
    private func refuse(_ invalid: InvalidMessage, of dsTransID: String, _ transaction: Transaction, about message: String) async -> HTTPResponse {
        var erro = InvalidMessage(violations: invalid.violations, messageType: message, claimedVersion: transaction.version.rawValue,
                                  ids: transaction.ids).erro(from: .directoryServer)
        erro.dsTransID = dsTransID
        journal?.message(dsTransID, from: .directoryServer, to: .accessControlServer, erro.json)
        journal?.message(dsTransID, from: .directoryServer, to: .threeDSServer, erro.json)
        journal?.end(dsTransID, because: "Erro \(erro.errorCode.rawValue) about the \(message)")
        let failure = await peer.notify(erro, url: transaction.threeDSServerURL)
        record(dsTransID, "sent to the ACS and the 3DS Server: Erro \(erro.errorCode.rawValue) about the \(message)"
                   + (failure.map { " (not delivered to the 3DS Server: \($0))" } ?? ""))
        return .emv(erro.json)
    }
}
