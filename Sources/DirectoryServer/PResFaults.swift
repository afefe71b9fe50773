import EMV3DS
import Faults
import Foundation
import JSON
import Logging
import Messaging
import Net
import Scenarios
import Store
import Synchronization

// PRes faults: armed by `POST /admin/ds/pres-faults`, taken by the next PReqs (a PReq carries no card to pick a scenario by).
extension DirectoryServer {
    /// The armed PRes faults: the next `remaining` PReqs (of one 3DS Server, when named) are answered with them.
    struct PResFaults: Sendable {
        let faults: [Fault]
        var remaining: Int
        let threeDSServerRefNumber: String?
        /// Where the store counts their uses over the instances of a cluster (the arming change's id); nil for one instance.
        let sharedCount: String?
        /// The scenario whose `pres` faults these are (a generated PRes case), and the versions it is a case of: a PReq of
        /// another version is answered plainly and leaves them armed.
        var scenario: String? = nil
        var versions: Set<MessageVersion>? = nil

        func applies(to threeDSServerRefNumber: String, version: MessageVersion) -> Bool {
            (self.threeDSServerRefNumber.map { $0 == threeDSServerRefNumber } ?? true) && (versions?.contains(version) ?? true)
        }
    }

    /// The armed faults for the next PReq of `threeDSServerRefNumber` in `version` and `team`'s scope, taken once, and the
    /// scenario they are of; none when none are armed for it. In a cluster each instance has them armed, and the store
    /// gives each of the `count` uses to one PReq, wherever it lands.
    func takePResFaults(for threeDSServerRefNumber: String, version: MessageVersion, team: String?) async -> (faults: [Fault], scenario: String?) {
        if let armed = presFaults.withLock({ $0[team] }), let id = armed.sharedCount {
            guard armed.applies(to: threeDSServerRefNumber, version: version) else { return ([], nil) }
            // Unknown to the store (nil): none rather than a use counted twice.
            let taken = await sharing.use(id, for: nil)
            presFaults.withLock { armed in
                guard var mine = armed[team], mine.sharedCount == id else { return }
                mine.remaining -= 1
                armed[team] = taken == true && mine.remaining > 0 ? mine : nil
            }
            return taken == true ? (armed.faults, armed.scenario) : ([], nil)
        }
        return presFaults.withLock { armed in
            guard var current = armed[team], current.applies(to: threeDSServerRefNumber, version: version) else { return ([], nil) }
            current.remaining -= 1
            armed[team] = current.remaining > 0 ? current : nil
            return (current.faults, current.scenario)
        }
    }

    /// `POST /admin/ds/pres-faults` with `{"faults": [{"fault": "missing-field", "value": "dsTransID"}], "count": 1,
    /// "threeDSServerRefNumber": "…"}`: the next `count` PReqs (of that 3DS Server, when named) of the request's team are
    /// answered with these faults, written as a scenario's; `count` 0 disarms. The faults a DS answer takes: content, timing, transport.
    /// `{"scenario": "negative-pres-missing-dsTransID"}` in place of `faults` arms a scenario's faults on the `pres` leg (a
    /// generated PRes case's) for PReqs of the versions it is a case of: each such PRes is a transaction of that scenario,
    /// which a test run's case takes, and the 3DS Server's Erro about it grades it (`pres.erro`).
    func armPResFaults(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        let team = try request.team()
        guard request.body.count <= 4096 else { throw HTTPError(.payloadTooLarge, "armed PRes faults are at most 4096 bytes") }
        let json = try request.jsonBody()
        let count = json["count"].map { $0.numberText.flatMap { Int($0) } } ?? 1
        guard let count, (0...1000).contains(count) else { throw HTTPError(.badRequest, "count must be 0 (disarm) to 1000 PReqs") }
        var faults: [Fault] = []
        var scenario: Scenario?
        if let name = json["scenario"] {
            guard json["faults"] == nil else { throw HTTPError(.badRequest, "name faults or a scenario, not both") }
            guard let name = name.stringValue, let named = scenarios?.catalog.scenario(named: name) else {
                throw HTTPError(.badRequest, "scenario must name a scenario (GET /admin/scenarios/negative lists the PRes cases, negative-pres-…)")
            }
            faults = named.faults.on(.preparation)
            guard !faults.isEmpty else { throw HTTPError(.badRequest, "scenario \(named.name) has no fault on the pres leg: a PRes case is negative-pres-…") }
            scenario = named
        }
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
        let sharedCount = sharing.isShared ? request.headers[HarnessChangeHeader.name] : nil
        if let sharedCount, count > 0 {
            sharing.startCount(id: sharedCount, remaining: count, lifetimeMilliseconds: Self.presFaultsLifetimeMilliseconds)
        }
        presFaults.withLock {
            $0[team] = count == 0 ? nil : PResFaults(faults: faults, remaining: count, threeDSServerRefNumber: refNumber, sharedCount: sharedCount,
                                                     scenario: scenario?.name, versions: scenario?.versions)
        }
        logger.info("PRes faults armed", metadata: ["faults": "\(faults.map(\.name))", "count": "\(count)", "team": "\(team ?? "")",
                                                    "scenario": "\(scenario?.name ?? "")"])
        return .emv(presFaultJSON(team: team), status: count == 0 ? .ok : .created)
    }

    /// How long the store counts armed PRes faults' uses in a cluster: as long as a pin lives at most.
    static let presFaultsLifetimeMilliseconds = Int64(PinBoard.maxLifetime.components.seconds) * 1000

    /// `GET /admin/ds/pres-faults`: what the next PReqs will be answered with (in a cluster, as this instance saw them used).
    func presFaultListing(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse { .emv(presFaultJSON(team: try request.team())) }

    /// Disarms `team`'s PRes faults (a team's reset); true when some were armed.
    public func disarmPResFaults(team: String?) -> Bool { presFaults.withLock { $0.removeValue(forKey: team) } != nil }

    func presFaultJSON(team: String?) -> JSONValue {
        let armed = presFaults.withLock { $0[team] }
        return .object(omittingAbsent: [
            ("faults", .array((armed?.faults ?? []).map { .string($0.name) })), ("remaining", .number(String(armed?.remaining ?? 0))),
            ("threeDSServerRefNumber", .string(armed?.threeDSServerRefNumber)), ("scenario", .string(armed?.scenario)),
            ("messageVersions", armed?.versions.map { versions in .array(MessageVersion.allCases.filter(versions.contains).map { .string($0.rawValue) }) }),
        ])
    }
}
