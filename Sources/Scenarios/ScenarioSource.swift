public import EMV3DS
import Synchronization

/// The scenarios in force and the pins over them. The harness swaps the scenarios on reload
/// without stopping anything (a transaction keeps the scenario it started with).
///
/// The DS and the ACS both ask for a transaction's scenario; the first answer is kept per
/// `dsTransID`, so both see the same one and a pin is used once. The key is the id the DS
/// assigns, not one a client chooses: a client reusing its `threeDSServerTransID` must not get
/// the first transaction's outcome.
public final class ScenarioSource: Sendable {
    private let current: Mutex<ScenarioCatalog>
    public let pins = PinBoard()
    public let issuedCards = IssuedCards()
    /// A load test's mix of scenarios, when one is in force.
    public let loadMix = LoadMixBoard()
    private let chosen = Mutex(Remembered())
    private static let remembered = 10_000

    /// One scenario on the heap: the table's slots stay one pointer each (a scenario is a few
    /// hundred bytes inline, and a table keeps up to twice the slots it has entries).
    private final class Chosen: Sendable {
        let scenario: Scenario
        let draw: LoadMixDraw
        init(_ scenario: Scenario, draw: LoadMixDraw) {
            self.scenario = scenario
            self.draw = draw
        }
    }

    private struct Remembered {
        var byTransaction: [String: Chosen] = [:]
        var order: [String] = []
        var head = 0
    }

    public init(_ catalog: ScenarioCatalog) { current = Mutex(catalog) }

    public var catalog: ScenarioCatalog { current.withLock { $0 } }

    public func replace(with catalog: ScenarioCatalog) { current.withLock { $0 = catalog } }

    /// How a cluster counts a pin's uses: takes one of pin `id` in the store (true), none left (false), or the
    /// store cannot answer (nil). Nil here: one instance, whose board counts.
    public typealias SharedUse = @Sendable (_ id: String, _ dsTransID: String?) async -> Bool?
    private let sharedUse = Mutex<SharedUse?>(nil)

    /// From now on the store counts each pin's uses: a pin set on every instance of a cluster applies to its next
    /// `count` transactions wherever they land (docs/scale.md).
    public func shareCounts(_ use: @escaping SharedUse) { sharedUse.withLock { $0 = use } }

    /// The scenario of a transaction: a pin if one is set for it, else the catalog's choice. `given`: what the DS drew
    /// for it from a load mix (the ACS of a cluster, on another instance than the DS's), played rather than a draw of its own.
    public func scenario(for facts: TransactionFacts, transaction dsTransID: String? = nil, given: LoadMixDraw? = nil) async -> Scenario {
        guard let dsTransID else { return await choose(facts, transaction: nil, given: given).scenario }
        if let known = chosen.withLock({ $0.byTransaction[dsTransID]?.scenario }) { return known }
        let (scenario, draw) = await choose(facts, transaction: dsTransID, given: given)
        return chosen.withLock { memory in
            if let known = memory.byTransaction[dsTransID] { return known.scenario }  // another role chose meanwhile
            memory.byTransaction[dsTransID] = Chosen(scenario, draw: draw)
            memory.order.append(dsTransID)
            if memory.order.count - memory.head > Self.remembered {
                memory.byTransaction[memory.order[memory.head]] = nil
                memory.head += 1
                if memory.head > Self.remembered { memory.order.removeFirst(memory.head); memory.head = 0 }
            }
            return scenario
        }
    }

    /// What the load mix drew for the transaction `dsTransID` when its scenario was chosen here: what the DS passes on to
    /// the ACS (``LoadMixDraw/header``); nil for a transaction this instance has not chosen for.
    public func draw(of dsTransID: String) -> LoadMixDraw? { chosen.withLock { $0.byTransaction[dsTransID]?.draw } }

    /// In a cluster the DS and the ACS of one transaction may choose on two instances: the store gives them one use of a
    /// pin, and the DS its draw of a load mix (`given`).
    private func choose(_ facts: TransactionFacts, transaction dsTransID: String?, given: LoadMixDraw?) async -> (scenario: Scenario, draw: LoadMixDraw) {
        guard let use = sharedUse.withLock({ $0 }) else {
            if let pinned = pins.take(pan: facts.pan, sdkTransID: facts.sdkTransID, team: facts.team) { return (pinned, .none) }
            return drawn(facts, given: given)
        }
        // The store decides which use is whose; a pin used up elsewhere leaves this board too, and the next in line is asked.
        while let pin = pins.first(pan: facts.pan, sdkTransID: facts.sdkTransID, team: facts.team) {
            switch await use(pin.id, dsTransID) {
            case true?:
                pins.used(pin.id, exhausted: false)
                return (pin.scenario, .none)
            case false?:
                pins.used(pin.id, exhausted: true)
            case nil:
                return drawn(facts, given: given)  // the store cannot say: no pin rather than one used twice
            }
        }
        return drawn(facts, given: given)
    }

    /// The scenario without pins: a card issued to a run's case stands for the case's scenario; the
    /// load mix in force for the transaction's team (or for no team) draws the scenario of a card of its range (or of one no scenario names),
    /// unless `drawing` is false (a refused AReq's, named in the journal, plays nothing) or the
    /// transaction is tagged for a test run (a run's case is graded on its own scenario).
    public func unpinned(_ facts: TransactionFacts, drawing: Bool = true) -> Scenario {
        drawn(facts, given: drawing ? nil : LoadMixDraw.none).scenario
    }

    /// The scenario without pins, and what the load mix drew for it (`given`: the DS's draw, played and not counted again).
    private func drawn(_ facts: TransactionFacts, given: LoadMixDraw?) -> (scenario: Scenario, draw: LoadMixDraw) {
        let catalog = catalog
        if let issued = issuedCards.scenario(of: facts.pan).flatMap(catalog.scenario(named:)) { return (issued, .none) }
        let scripted = catalog.scenario(for: facts)
        guard !facts.inTestRun, let mixed = loadMix.scenario(pan: facts.pan, team: facts.team, scripted: scripted, catalog: catalog, given: given) else {
            return (scripted, .none)
        }
        return mixed
    }
}

extension TransactionFacts {
    /// The facts of an AReq.
    public init(_ areq: AReq) {
        self.init(pan: areq.acctNumber, amount: areq["purchaseAmount"].flatMap { UInt64($0) },
                  messageCategory: areq["messageCategory"], sdkTransID: areq.sdkTransID)
    }
}
