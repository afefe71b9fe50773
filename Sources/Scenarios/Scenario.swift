public import EMV3DS
public import Faults
public import JSON

/// A named, scripted outcome and how a transaction selects it.
public struct Scenario: Sendable, Equatable {
    public var name: String
    /// The test card number that selects this scenario.
    public var pan: String?
    /// Other ways to select it, when no scenario names the PAN.
    public var trigger = Trigger()
    public var description: String
    public var outcome: Outcome
    /// What goes wrong on purpose, leg by leg.
    public var faults: [FaultInjection]
    /// What a correct client does about the faults.
    public var expectation: Expectation?
    /// The browser channel's 3DS Method for this scenario's card.
    public var threeDSMethod = ThreeDSMethodScript.standard
    /// Secure Payment Confirmation (2.3.1, browser): offered first, by an ARes S, when the requestor supports it and the
    /// card has a credential enrolled; `outcome` is the fallback when SPC cannot run or does not complete.
    public var spc: SPCScript?
    /// 2.3.1 members the ARes carries beside the outcome (``AResRules/outcomeFieldNames``): device binding and trust list
    /// statuses, the cardholder's and the other parties' information. Left out of older versions, which do not define them.
    public var outcomeFields: JSONValue?
    /// The time limit of the challenge the scenario begins, in seconds, when not the ACS's (`accessControlServer.challengeTimeout`):
    /// a load mix's draws carry its own, so that challenges a load generator leaves unanswered do not pile up.
    public var challengeTimeout: Double?
    /// The versions the scenario is a case of; nil: every version (a negative case of an element one version requires
    /// runs in that version only).
    public var versions: Set<MessageVersion>?
    /// The one channel the scenario plays in, when it is a case of one channel's message (a challenge ARes without its
    /// acsURL: the browser's); nil: the channels its faults allow.
    public var channel: DeviceChannel?

    public init(name: String, pan: String?, description: String, outcome: Outcome, faults: [FaultInjection] = [], expectation: Expectation? = nil) {
        self.name = name
        self.pan = pan
        self.description = description
        self.outcome = outcome
        self.faults = faults
        self.expectation = expectation
    }
}

extension Scenario {
    /// The channels the scenario plays in: its one channel where it has one; else faults on the SDK leg
    /// (acsSignedContent, the secure channel's CRes) have no browser to act on.
    public var channels: [DeviceChannel] {
        if let channel { return [channel] }
        return faults.contains { $0.leg == .sdk } ? [.app] : [.app, .browser]
    }

    /// The outcome of a browser AReq carrying `threeDSCompInd`: short of Y, another scenario's
    /// when this one names one (`unlessCompleted`: an issuer that could not fingerprint the browser).
    public func outcome(threeDSCompInd: String?, in catalog: ScenarioCatalog) -> Outcome {
        guard threeDSCompInd != ThreeDSCompInd.completed.rawValue, let other = threeDSMethod.unlessCompleted,
              let alternative = catalog.scenario(named: other) else { return outcome }
        return alternative.outcome
    }

    /// The outcome on `channel` when the 3DS Server does what it should with the 3DS Method.
    public func outcome(on channel: DeviceChannel, in catalog: ScenarioCatalog) -> Outcome {
        channel == .browser ? outcome(threeDSCompInd: threeDSMethod.expectedCompInd.rawValue, in: catalog) : outcome
    }
}

/// What a transaction is selected by, besides its exact PAN.
public struct Trigger: Sendable, Equatable {
    /// Card numbers from `lowest` to `highest`, compared as numbers of the same length.
    public var panRange: ClosedRange<UInt64>?
    /// `purchaseAmount` in minor units.
    public var amount: ClosedRange<UInt64>?
    /// `messageCategory`: "01" payment, "02" non-payment.
    public var messageCategory: String?

    public init(panRange: ClosedRange<UInt64>? = nil, amount: ClosedRange<UInt64>? = nil, messageCategory: String? = nil) {
        self.panRange = panRange
        self.amount = amount
        self.messageCategory = messageCategory
    }

    public var isEmpty: Bool { panRange == nil && amount == nil && messageCategory == nil }

    /// True when every condition given holds (an empty trigger matches nothing).
    public func matches(_ facts: TransactionFacts) -> Bool {
        guard !isEmpty else { return false }
        if let panRange, !(UInt64(facts.pan).map(panRange.contains) ?? false) { return false }
        if let amount, !(facts.amount.map(amount.contains) ?? false) { return false }
        if let messageCategory, facts.messageCategory != messageCategory { return false }
        return true
    }
}

/// What scenarios are selected by, read from an AReq.
public struct TransactionFacts: Sendable {
    public var pan: String
    public var amount: UInt64?
    public var messageCategory: String?
    public var sdkTransID: String?
    /// Tagged for a test run (`X-Harness-Case`): its scenario is the card's, never a load mix's draw.
    public var inTestRun = false
    /// The team whose transaction it is (`X-Harness-Team`): only its own pins and load mix apply; nil, the shared ones.
    public var team: String?

    public init(pan: String, amount: UInt64? = nil, messageCategory: String? = nil, sdkTransID: String? = nil) {
        self.pan = pan
        self.amount = amount
        self.messageCategory = messageCategory
        self.sdkTransID = sdkTransID
    }
}

/// The scenarios in force, and which one a transaction gets.
public struct ScenarioCatalog: Sendable {
    public let scenarios: [Scenario]
    /// The negative cases generated from the field tables over `scenarios` (``NegativeScenarios``), each on a card of
    /// its own: outside `scenarios`, so that `simulate --all` and the default suites stay what the file says.
    public let negative: [Scenario]
    /// The scenario of a PAN no scenario names.
    public let fallback: Scenario
    private let byPAN: [String: Scenario]

    /// Fails when names or PANs repeat, or the fallback is not one of the scenarios.
    public init(scenarios: [Scenario], fallbackName: String) throws(ScenarioError) {
        var names = Set<String>()
        var byPAN: [String: Scenario] = [:]
        for scenario in scenarios {
            guard names.insert(scenario.name).inserted else { throw .duplicateName(scenario.name) }
            if let pan = scenario.pan {
                if let other = byPAN[pan] { throw .duplicatePAN(pan, scenario.name, other.name) }
                byPAN[pan] = scenario
            }
        }
        guard let fallback = scenarios.first(where: { $0.name == fallbackName }) else { throw .unknownFallback(fallbackName) }
        for scenario in scenarios {
            guard let other = scenario.threeDSMethod.unlessCompleted else { continue }
            guard let target = scenarios.first(where: { $0.name == other }) else { throw .unknownAlternative(scenario.name, other) }
            // One step only: the alternative is played as it is, not asked for its own.
            guard target.threeDSMethod.unlessCompleted == nil else { throw .chainedAlternative(scenario.name, other) }
        }
        self.scenarios = scenarios
        self.fallback = fallback
        negative = NegativeScenarios.all(from: scenarios).filter { byPAN[$0.pan ?? ""] == nil }
        for scenario in negative { if let pan = scenario.pan { byPAN[pan] = scenario } }
        self.byPAN = byPAN
    }

    /// The scenario for a transaction on `pan`.
    public func scenario(for pan: String) -> Scenario { byPAN[pan] ?? fallback }

    /// Whether a scenario names `pan` (the default scenario's own test card too).
    public func names(pan: String) -> Bool { byPAN[pan] != nil }

    /// The scenario called `name`, if there is one.
    public func scenario(named name: String) -> Scenario? {
        scenarios.first { $0.name == name } ?? (name.hasPrefix(NegativeScenarios.prefix) ? negative.first { $0.name == name } : nil)
    }

    /// The scenario of a transaction: the one naming its PAN, else the first (in file order)
    /// whose trigger matches, else the fallback.
    public func scenario(for facts: TransactionFacts) -> Scenario {
        byPAN[facts.pan] ?? scenarios.first { $0.trigger.matches(facts) } ?? fallback
    }
}

/// Why a set of scenarios cannot be used.
public enum ScenarioError: Error, Equatable, CustomStringConvertible {
    case duplicateName(String)
    case duplicatePAN(String, String, String)
    case unknownFallback(String)
    case unknownAlternative(String, String)
    case chainedAlternative(String, String)

    public var description: String {
        switch self {
        case .duplicateName(let name): "scenario \(name) is defined twice"
        case .duplicatePAN(let pan, let first, let second): "PAN \(pan) selects both \(second) and \(first)"
        case .unknownFallback(let name): "defaultScenario \(name) is not a defined scenario"
        case .unknownAlternative(let name, let other): "scenario \(name): threeDSMethod.unlessCompleted \(other) is not a defined scenario"
        case .chainedAlternative(let name, let other):
            "scenario \(name): threeDSMethod.unlessCompleted \(other) has an unlessCompleted of its own (one step only)"
        }
    }
}

/// What the ACS does about Secure Payment Confirmation for a card (docs/spc.md).
public struct SPCScript: Sendable, Equatable {
    /// The second ARes's status once the assertion verifies: Y or A.
    public var transStatus: TransStatus
    /// What the browser shows for the card (`spcTransData.displayName`).
    public var displayName: String?

    public init(transStatus: TransStatus = .authenticated, displayName: String? = nil) {
        self.transStatus = transStatus
        self.displayName = displayName
    }
}
