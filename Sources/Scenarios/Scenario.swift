import EMV3DS

/// A named, scripted outcome and how a transaction selects it.
public struct Scenario: Sendable, Equatable {
    public var name: String
    /// The test card number that selects this scenario.
    public var pan: String?
    public var description: String
    public var outcome: Outcome

    public init(name: String, pan: String?, description: String, outcome: Outcome) {
        self.name = name
        self.pan = pan
        self.description = description
        self.outcome = outcome
    }
}

/// The scenarios in force, and which one a transaction gets.
public struct ScenarioCatalog: Sendable {
    public let scenarios: [Scenario]
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
        self.scenarios = scenarios
        self.fallback = fallback
        self.byPAN = byPAN
    }

    /// The scenario for a transaction on `pan`.
    public func scenario(for pan: String) -> Scenario { byPAN[pan] ?? fallback }
}

/// Why a set of scenarios cannot be used.
public enum ScenarioError: Error, Equatable, CustomStringConvertible {
    case duplicateName(String)
    case duplicatePAN(String, String, String)
    case unknownFallback(String)

    public var description: String {
        switch self {
        case .duplicateName(let name): "scenario \(name) is defined twice"
        case .duplicatePAN(let pan, let first, let second): "PAN \(pan) selects both \(second) and \(first)"
        case .unknownFallback(let name): "defaultScenario \(name) is not a defined scenario"
        }
    }
}
