import EMV3DS
public import Foundation
public import JSON
import Faults
import Scenarios

/// One scenario in one version and channel: what to do (the PAN, the answers) and what it
/// must end in, and the transactions that were attached to it.
public struct RunCase: Sendable, Equatable {
    /// "scenario/2.2.0/app".
    public let id: String
    public let scenario: String
    public let version: String
    public let channel: Suite.Channel
    /// The scenario's card: a transaction on it attaches to the first waiting case of the scenario.
    public let pan: String
    /// The card issued to this case: a transaction on it attaches to this case and no other (nil
    /// for a scenario that scripts the 3DS Method, whose method URL is its own card's range).
    public internal(set) var card: String?
    public let answers: [String]
    /// "frictionless", "challenge" or "decoupled": the scenario's flow in this version.
    public let flow: String
    public let transStatus: String
    /// The Erro a correct SDK sends, when the scenario's fault calls for one in this version.
    public let sdkErro: String?
    /// The Erro codes a correct 3DS Server sends the DS about the ARes the scenario's faults spoil (any one of them).
    public let threeDSServerErro: [String]?
    /// The Erro codes a correct 3DS Server answers the RReq the scenario's faults spoil with (any one of them).
    public let resultsErro: [String]?
    /// A PRes case: its transaction is the PRes to a PReq its faults were armed for, graded by the 3DS Server's Erro.
    public let preparation: Bool
    /// The Erro codes a correct 3DS Server posts about the PRes of a PRes case (any one of them); nil when none is due.
    public let preparationErro: [String]?
    /// A decoupled authentication whose RReq the ACS sends after its delay: the case is not done without its RRes.
    public let awaitsResults: Bool
    /// The challenge falls back to decoupled authentication (2.3.1) when the cardholder answers: a 3RI AReq is due after it.
    public let decoupledFallback: Bool
    /// How a correct SDK reports the challenge (completed, cancelled, protocolError, timedOut, runtimeError).
    public let sdkReport: String?
    /// What a correct party does, in words.
    public let expectation: String?
    /// The `dsTransID` of each transaction attached, in order, over every attempt.
    public var transactions: [String] = []
    /// Where the attempt that is graded begins in ``transactions``: a retry moves it to the end.
    public var attemptStart = 0
    /// 1, plus one per retry.
    public var attempt = 1
    /// When the newest transaction was attached: the case's deadline runs from it.
    public var lastAttachedAt: Date?
    /// Transactions of this attempt not attached because it had ``maxTransactionsPerAttempt`` already.
    public var overflow = 0

    /// One attempt takes at most this many transactions (explicitly tagged ones can keep
    /// coming): a case's record, rewritten at every attachment, stays small.
    public static let maxTransactionsPerAttempt = 20

    /// The transactions of the attempt that is graded.
    public var graded: ArraySlice<String> { transactions[min(attemptStart, transactions.count)...] }

    /// Whether the scenario fallback may still attach a transaction: it takes one per attempt.
    public var awaitsFirstTransaction: Bool { graded.isEmpty }

    /// Attaches a transaction to the current attempt; false when the attempt is full.
    mutating func attach(_ dsTransID: String, at now: Date) -> Bool {
        guard graded.count < Self.maxTransactionsPerAttempt else {
            overflow += 1
            return false
        }
        transactions.append(dsTransID)
        lastAttachedAt = now
        return true
    }

    /// Starts a new attempt: what was attached so far is kept but no longer graded.
    mutating func retry() {
        attemptStart = transactions.count
        attempt += 1
        lastAttachedAt = nil
        overflow = 0
    }

    init(scenario: Scenario, version: MessageVersion, channel: Suite.Channel, catalog: ScenarioCatalog) {
        id = "\(scenario.name)/\(version.rawValue)/\(channel.rawValue)"
        self.scenario = scenario.name
        self.version = version.rawValue
        self.channel = channel
        pan = scenario.pan ?? ""
        let deviceChannel = DeviceChannel(rawValue: channel.deviceChannel) ?? .app
        let outcome = scenario.outcome(on: deviceChannel, in: catalog)
        if case .challenge(let script) = outcome { answers = script.passingAnswers(in: version) } else { answers = [] }
        let plan = outcome.plan(for: version, on: deviceChannel)
        flow = plan.flow
        transStatus = outcome.expectedResult(for: version, on: deviceChannel).rawValue
        // A fault on the challenge never acts where the version (or channel) answers without one.
        sdkErro = flow == "challenge" ? scenario.expectation?.sdkErro?.rawValue : nil
        sdkReport = flow == "challenge" ? scenario.expectation?.sdk?.rawValue : nil
        threeDSServerErro = ErroDue(answerSpoiltBy: scenario.faults.on(.directoryServer)).codes
        // Only a challenge or a decoupled authentication ends in an RReq.
        resultsErro = flow == "frictionless" ? nil : ErroDue(answerSpoiltBy: scenario.faults.on(.results)).codes
        let presFaults = scenario.faults.on(.preparation)
        preparation = !presFaults.isEmpty
        preparationErro = preparation ? ErroDue(answerSpoiltBy: presFaults).codes : nil
        if case .decoupled(let script) = plan { awaitsResults = script.delay != nil } else { awaitsResults = false }
        if case .challenge(let script) = plan, version >= .v2_3_1, script.cardholder == .answers {
            decoupledFallback = script.decoupledFallback?.afterSuccess == true
        } else {
            decoupledFallback = false
        }
        expectation = scenario.expectation?.text
    }

    public var json: JSONValue {
        .object(omittingAbsent: [
            ("id", .string(id)), ("scenario", .string(scenario)), ("messageVersion", .string(version)), ("channel", .string(channel.rawValue)),
            ("pan", .string(pan)), ("card", .string(card)), ("answers", answers.isEmpty ? nil : .array(answers.map(JSONValue.string))),
            ("flow", .string(flow)), ("transStatus", .string(transStatus)), ("sdkErro", .string(sdkErro)),
            ("threeDSServerErro", threeDSServerErro.map { .array($0.map(JSONValue.string)) }),
            ("resultsErro", resultsErro.map { .array($0.map(JSONValue.string)) }), ("awaitsResults", awaitsResults ? .bool(true) : nil),
            ("preparation", preparation ? .bool(true) : nil), ("preparationErro", preparationErro.map { .array($0.map(JSONValue.string)) }),
            ("decoupledFallback", decoupledFallback ? .bool(true) : nil),
            ("sdkReport", .string(sdkReport)), ("expectation", .string(expectation)), ("transactions", .array(transactions.map(JSONValue.string))),
            ("attempt", attempt > 1 ? .number(String(attempt)) : nil), ("attemptStart", attemptStart > 0 ? .number(String(attemptStart)) : nil),
            ("lastAttachedAtMs", lastAttachedAt.map { .number(String(Int64($0.timeIntervalSince1970 * 1000))) }),
            ("overflow", overflow > 0 ? .number(String(overflow)) : nil),
        ])
    }

    init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let scenario = json["scenario"]?.stringValue, let version = json["messageVersion"]?.stringValue,
              let channel = json["channel"]?.stringValue.flatMap(Suite.Channel.init(rawValue:)), let pan = json["pan"]?.stringValue,
              let flow = json["flow"]?.stringValue, let transStatus = json["transStatus"]?.stringValue else { return nil }
        self.id = id
        self.scenario = scenario
        self.version = version
        self.channel = channel
        self.pan = pan
        card = json["card"]?.stringValue
        if case .array(let items)? = json["answers"] { answers = items.compactMap(\.stringValue) } else { answers = [] }
        self.flow = flow
        self.transStatus = transStatus
        sdkErro = json["sdkErro"]?.stringValue
        sdkReport = json["sdkReport"]?.stringValue
        threeDSServerErro = json["threeDSServerErro"]?.arrayValue?.compactMap(\.stringValue)
        resultsErro = json["resultsErro"]?.arrayValue?.compactMap(\.stringValue)
        awaitsResults = json["awaitsResults"] == .bool(true)
        preparation = json["preparation"] == .bool(true)
        preparationErro = json["preparationErro"]?.arrayValue?.compactMap(\.stringValue)
        decoupledFallback = json["decoupledFallback"] == .bool(true)
        expectation = json["expectation"]?.stringValue
        if case .array(let items)? = json["transactions"] { transactions = items.compactMap(\.stringValue) }
        attempt = json["attempt"]?.numberText.flatMap { Int($0) } ?? 1
        attemptStart = json["attemptStart"]?.numberText.flatMap { Int($0) } ?? 0
        lastAttachedAt = json["lastAttachedAtMs"]?.numberText.flatMap(Double.init).map { Date(timeIntervalSince1970: $0 / 1000) }
        overflow = json["overflow"]?.numberText.flatMap { Int($0) } ?? 0
    }
}
