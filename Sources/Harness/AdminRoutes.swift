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
            let result = scenario.outcome.frictionlessResult(for: version)
            return (version.rawValue, .object(omittingAbsent: [("transStatus", .string(result.status.rawValue)),
                                                              ("transStatusReason", .string(result.reason))]))
        }
        return .object(omittingAbsent: [
            ("name", .string(scenario.name)),
            ("pan", .string(scenario.pan)),
            ("description", .string(scenario.description)),
            ("expected", .object(omittingAbsent: expected)),
        ])
    }
}
