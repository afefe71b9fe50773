import EMV3DS
public import EventLoops
public import Journal
import JSON
public import Logging
public import Messaging
public import Net
public import Scenarios
public import Store

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
    let spcChallenges: SPCEnrolmentChallenges
    let spcOffers = TransactionStore<SPCOffer>(capacity: SPCOffer.capacity)
    /// The channels of the latest app challenges: the one a CReq was sealed with when it was not its own challenge's.
    let recentChannels = RecentChannels()
    /// What this instance shares with the others of its store, when they are several: open challenges taken up, and the
    /// jobs due later (a decoupled result, a challenge's time limit) that one of them does.
    let sharing: any SharedWork
    /// Where the 3DS Method's visits go for the other instances when several share the store: the browser's
    /// method and its AReq may reach two of them. Nil for one instance.
    let sharedRecords: (any TransactionArchive)?
    /// What runs after the answer that began it: time limits reached, decoupled results after their delay.
    let background: BackgroundWork
    /// Where the ACS writes each CReq and CRes in plaintext and the checks of the SDK; nil when nobody reads them.
    let journal: Journal?
    let logger: Logger

    public init(settings: AccessControlServerSettings, scenarios: ScenarioSource, peer: EMVPeer, endpoints: LocalEndpoints,
                capacity: Int = StoreDefaults.maxTransactions, archive: (any TransactionArchive)? = nil, inMemory: Int? = nil,
                sharing: any SharedWork = SoleInstance(), background: BackgroundWork = BackgroundWork(), journal: Journal? = nil, logger: Logger) {
        self.journal = journal
        self.sharing = sharing
        self.background = background
        sharedRecords = sharing.isShared ? archive : nil
        self.settings = settings
        spcChallenges = SPCEnrolmentChallenges(clock: settings.clock)
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
        guard sharing.isShared else { return transactions.contains(acsTransID) }
        // Only an open challenge (its record keeps what it needs under `resume`) goes on elsewhere.
        let restore = { [self] (bytes: [UInt8]) -> Transaction? in
            guard let record = try? JSONReader.parse(bytes).value, record["resume"] != nil else { return nil }
            let transaction = Transaction(stored: record, catalog: scenarios.catalog, schemes: settings.schemes, clock: settings.clock)
            if transaction == nil {
                logger.warning("an open challenge cannot be taken up: its scenario no longer scripts it", metadata: [
                    "acsTransID": "\(acsTransID)", "scenario": "\(record["scenario"]?.stringValue ?? "-")"])
            }
            return transaction
        }
        guard let transaction = await transactions.takeUp(acsTransID, through: sharing, previousHome: previous, restore: restore) else { return transactions.contains(acsTransID) }
        // Its journal entry too: the CReqs and the RReq from here are recorded with those before.
        await journal?.takeUp(transaction.ids.dsTransID)
        logger.info("open challenge taken up from the store", metadata: ["acsTransID": "\(acsTransID)"])
        if startingTimer {
            let now = settings.clock.wallMilliseconds()
            let remaining = Double((transaction.challengeDeadline ?? now) - now) / 1000
            startTimer(acsTransID, after: remaining)
        }
        return true
    }

    public func register(on router: inout Router) {
        // An Erro from the DS about an ARes names its transaction; an AReq that follows an earlier one up belongs where that
        // one is (any other AReq, which carries no acsTransID, stays where it came).
        router.emv(ACSPaths.aReq, receives: .aReq, transaction: transaction(.first([.jsonMember("acsTransID"), .followedUpTransaction]))) { request async in
            await self.authenticate(request)
        }
        // A CReq names its challenge in the JWE's kid; an SDK's Erro is plain JSON with its acsTransID.
        router.emv("/acs/challenge", receives: .cReq, transaction: transaction(.first([.jweKeyID, .jsonMember("acsTransID")]))) { request async in
            await self.challenge(request)
        }
        registerBrowserChallenge(on: &router)
        registerThreeDSMethod(on: &router)
        registerSecurePaymentConfirmation(on: &router)
        router.record("/admin/acs/transactions/{id}", "ACS transaction", transaction: transaction(.pathParameter("id"))) { await self.transactions.json($0) }
    }

    /// What a route's request names of this role's transactions, and where.
    func transaction(_ key: TransactionKey) -> TransactionRoute {
        TransactionRoute(role: Self.role, key: key, holds: { [self] in holds($0) }, takeUp: { [self] in await takeUp($0) })
    }

}
