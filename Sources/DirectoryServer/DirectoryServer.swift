import EMV3DS
public import Journal
import JSON
public import Logging
public import Messaging
public import Net
public import Scenarios
public import Store
import Synchronization

/// The Directory Server role: checks AReqs, decrypts the SDK's device data, routes by card
/// range to the ACS and relays its answer; answers PReqs with its card ranges.
public final class DirectoryServer: Sendable {
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
        guard await transactions.takeUp(dsTransID, through: sharing, restore: { (try? JSONReader.parse($0).value).flatMap(Transaction.init(stored:)) }) != nil
        else { return }
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

    /// The DS's card ranges with the changes made to them, by serial number (PReq `serialNum`), in each team's scope.
    let cardRanges: TeamCardRanges
    /// What the DS remembers of each 3DS Server's PReqs, by `threeDSServerRefNumber`.
    let preparations = TransactionStore<Preparation>(capacity: 10_000)
    /// The `threeDSServerRefNumber` of each PReq answered, by its `threeDSServerTransID`: an Erro about a PRes names no more.
    let preparationSenders = TransactionStore<String>(capacity: 10_000)
    /// The PRes the armed faults spoilt, by their PReq's `threeDSServerTransID`: where a 3DS Server's Erro about one is graded.
    let spoiltPreparations: TransactionStore<SpoiltPreparation>
    /// The store a spoilt PRes's record is written to before the PRes goes, in a cluster; nil for one instance.
    let sharedArchive: (any TransactionArchive)?
    /// Faults the next PRes answers take (`POST /admin/ds/pres-faults`): a PReq carries no card to pick a scenario by.
    let presFaults = Mutex<[String?: PResFaults]>([:])
    /// What a 3DS Server's PReqs are judged against: those since the scope began. A test run begins one, since a 3DS
    /// Server may rightly start it without a card-range cache (restarted, or a pipeline's first job on a shared harness)
    /// and ask for every range, at once.
    let preparationScope = Atomic<Int>(0)

    /// Where the DS writes each transaction's messages (both legs, the device data decrypted) and
    /// the checks of the AReq and RRes; nil when nobody reads them.
    let journal: Journal?
    let logger: Logger
    /// What this instance shares with the others of its store, when they are several: a transaction whose instance died is
    /// taken up from its record, and armed PRes faults are counted once over all.
    let sharing: any SharedWork

    public init(settings: DirectoryServerSettings, scenarios: ScenarioSource? = nil, peer: EMVPeer, endpoints: LocalEndpoints,
                capacity: Int = StoreDefaults.maxTransactions, archive: (any TransactionArchive)? = nil, inMemory: Int? = nil,
                sharing: any SharedWork = SoleInstance(), cardRangeEpoch: String? = nil, journal: Journal? = nil, logger: Logger) {
        // A cluster's instances share one epoch: a serial one gave, another knows (their changes reach them all, in order).
        cardRanges = TeamCardRanges(epoch: cardRangeEpoch)
        sharedArchive = sharing.isShared ? archive : nil
        spoiltPreparations = TransactionStore(capacity: 10_000, archive: sharedArchive, role: SpoiltPreparation.role)
        self.journal = journal
        self.sharing = sharing
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
        // A 3DS Server's Erro about an ARes names its transaction, graded where it is (an AReq carries no dsTransID).
        router.emv("/ds/areq", receives: .aReq, transaction: transaction(.jsonMember("dsTransID"))) { request async in await self.authenticate(request) }
        // A 3DS Server's Erro about a spoilt PRes names its PReq, graded where the PRes was answered.
        let spoilt = TransactionRoute(role: SpoiltPreparation.role, key: .erroMember("threeDSServerTransID"),
                                      holds: { [spoiltPreparations] in spoiltPreparations.contains($0) })
        router.emv("/ds/preq", receives: .pReq, transaction: spoilt) { request async in await self.prepare(request) }
        router.get("/admin/ds/card-ranges") { request, _ in try self.cardRangeListing(request) }
        router.get("/admin/ds/pres-faults") { request, _ in try self.presFaultListing(request) }
        router.post("/admin/ds/pres-faults") { request, _ in try self.armPResFaults(request) }
        router.post("/admin/ds/card-ranges") { request, _ in try self.changeCardRange(request) }
        router.emv("/ds/rreq", receives: .rReq, transaction: transaction(.jsonMember("dsTransID"))) { request async in await self.results(request) }
        router.record("/admin/ds/transactions/{id}", "DS transaction", transaction: transaction(.pathParameter("id"))) { await self.transactions.json($0) }
    }

    /// What a route's request names of this role's transactions, and where.
    func transaction(_ key: TransactionKey) -> TransactionRoute {
        TransactionRoute(role: Self.role, key: key, holds: { [self] in holds($0) }, takeUp: { [self] in await takeUp($0) })
    }

}
