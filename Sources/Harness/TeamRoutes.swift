import AccessControlServer
import DirectoryServer
import JSON
import Messaging
import Net
import Scenarios

/// `DELETE /admin/team`: what a pipeline does at its end on a shared harness. Everything its team set is undone: its pins
/// removed, its load mix ended (with the challenges it drew), its armed PRes faults disarmed, its card-range changes
/// dropped, its load-mix series taken out of `/metrics`. Other teams' are untouched.
struct TeamRoutes {
    let scenarios: ScenarioSource
    let loadMix: LoadMixRoutes
    let directoryServer: DirectoryServer
    let metrics: HarnessMetrics

    static let path = "/admin/team"

    func register(on router: inout Router) {
        router.delete(Self.path) { request, _ in
            guard let team = try request.team() else {
                throw HTTPError(.badRequest, "name the team to reset: the header \(HarnessTeam.header) or the path /\(HarnessTeam.pathSegment)/{team}\(Self.path)")
            }
            let answer = JSONValue.object([
                ("team", .string(team)),
                ("pinsRemoved", .number(String(scenarios.pins.remove(nil, team: team)))),
                ("loadMix", loadMix.stop(team: team)),
                ("presFaultsDisarmed", .bool(directoryServer.disarmPResFaults(team: team))),
                ("cardRangeChangesDropped", .number(String(directoryServer.dropCardRangeChanges(team: team)))),
            ])
            metrics.forget(team: team, on: scenarios.loadMix)
            return .emv(answer)
        }
    }
}
