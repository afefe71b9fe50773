import AccessControlServer
import EMV3DS
import JSON
import Messaging
import Net
import Scenarios

/// `/admin/...`: what the harness is set up to do.
struct AdminRoutes {
    let scenarios: ScenarioSource

    func register(on router: inout Router) {
        router.get("/admin/scenarios") { _, _ in
            let catalog = scenarios.catalog
            return .emv(.object([
                ("defaultScenario", .string(catalog.fallback.name)),
                ("scenarios", .array(catalog.scenarios.map(Self.json))),
            ]))
        }
    }

    static func json(_ scenario: Scenario) -> JSONValue {
        // The outcome per version: a status a version does not know is answered differently.
        let expected = MessageVersion.allCases.map { version -> (String, JSONValue?) in
            let plan = scenario.outcome.plan(for: version)
            let flow: String
            var reason: String?
            switch plan {
            case .final(_, let finalReason):
                flow = "frictionless"
                reason = finalReason
            case .challenge: flow = "challenge"
            case .decoupled: flow = "decoupled"
            }
            return (version.rawValue, .object(omittingAbsent: [("flow", .string(flow)),
                                                              ("transStatus", .string(scenario.outcome.expectedResult(for: version).rawValue)),
                                                              ("transStatusReason", .string(reason))]))
        }
        var answers: JSONValue?
        if case .challenge(let script) = scenario.outcome { answers = .array(script.passingAnswers.map(JSONValue.string)) }
        return .object(omittingAbsent: [
            ("name", .string(scenario.name)),
            ("pan", .string(scenario.pan)),
            ("description", .string(scenario.description)),
            ("answers", answers),
            ("expected", .object(omittingAbsent: expected)),
        ])
    }
}
