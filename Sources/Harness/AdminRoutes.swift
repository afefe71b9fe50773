import AccessControlServer
import Cluster
import Configuration
import EMV3DS
import Faults
import Foundation
import JSON
import Messaging
import Net
import Scenarios
import Store

/// Reads the scenario file again and puts it in force. A bad file changes nothing;
/// transactions in flight keep the scenario they started with.
struct ScenarioReloader: Sendable {
    let path: String
    /// The path as configured (usually relative): what an HTTP client is shown instead of `path`.
    var shownPath: String? = nil
    let scenarios: ScenarioSource

    /// Returns how many scenarios are now in force.
    func reload() throws(ConfigurationError) -> Int {
        let catalog = try ScenarioFile.load(path: path)
        scenarios.replace(with: catalog)
        return catalog.scenarios.count
    }
}

/// `/admin/...`: what the harness is set up to do, and the controls tests and CI jobs use.
struct AdminRoutes {
    let scenarios: ScenarioSource
    let reloader: ScenarioReloader
    /// Where each pin's uses are counted for all instances, when several share the store.
    var counts: any SharedWork = SoleInstance()
    /// What a change made before this instance started is measured against (a pin's lifetime left).
    var clock = HarnessClock.system

    func register(on router: inout Router) {
        router.get("/admin/scenarios") { _, _ in
            let catalog = scenarios.catalog
            return .emv(.object([
                ("defaultScenario", .string(catalog.fallback.name)),
                ("scenarios", .array(catalog.scenarios.map { Self.json($0, in: catalog) })),
            ]))
        }
        // The negative cases generated from the field tables, each on a card of its own (docs/negative.md).
        router.get("/admin/scenarios/negative") { _, _ in
            let catalog = scenarios.catalog
            return .emv(.object([("scenarios", .array(catalog.negative.map { Self.json($0, in: catalog) }))]))
        }
        // A bad file leaves the scenarios in force as they were; transactions in flight keep theirs.
        router.post("/admin/reload") { _, _ in
            let count: Int
            do { count = try reloader.reload() } catch let error as ConfigurationError {
                // The file's place on this machine is the operator's business: a client sees the configured path.
                throw HTTPError(.badRequest, error.description.replacingOccurrences(of: reloader.path, with: reloader.shownPath ?? "the scenario file"))
            }
            return .emv(.object([("reloaded", .number(String(count)))]))
        }
        // The field tables the harness enforces: /admin/spec lists them, /admin/spec/AReq/2.3.1?channel=02 shows one.
        router.get("/admin/spec") { _, _ in
            .emv(.object([("tables", .array(MessageTables.all.map { .object([("name", .string($0.name)), ("leg", .string($0.leg))]) })),
                          ("versions", .array(MessageVersion.allCases.map { .string($0.rawValue) }))]))
        }
        router.get("/admin/spec/{messageType}/{version}") { request, context in
            let name = try context.parameter("messageType")
            let versionText = try context.parameter("version")
            guard let version = MessageVersion(rawValue: versionText) else {
                throw HTTPError(.notFound, "version \(versionText) is not one of \(MessageVersion.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            var channel: DeviceChannel?
            if let value = request.queryItems["channel"] {
                guard let known = DeviceChannel(rawValue: value) else { throw HTTPError(.badRequest, "channel \(value) is not 01, 02 or 03") }
                channel = known
            }
            guard let entry = MessageTables.named(name, channel: channel) else {
                throw HTTPError(.notFound, "no table \(name); tables: \(MessageTables.all.map(\.name).joined(separator: ", "))")
            }
            return .emv(entry.json(version: version, channel: channel))
        }
        router.post("/admin/pins") { request, _ in try addPin(request) }
        // Each call sees and changes the pins of its own team's scope (docs/operations.md), or of no team's.
        router.get("/admin/pins") { request, _ in .emv(.object([("pins", .array(scenarios.pins.all(team: try request.team()).map(Self.json)))])) }
        router.delete("/admin/pins") { request, _ in
            .emv(.object([("removed", .number(String(scenarios.pins.remove(nil, team: try request.team()))))]))
        }
        router.delete("/admin/pins/{target}") { request, context in
            let value = try context.parameter("target"), team = try request.team()
            let removed = scenarios.pins.remove(.pan(value), team: team) + scenarios.pins.remove(.sdkTransID(value), team: team)
            return .emv(.object([("removed", .number(String(removed)))]))
        }
    }

    /// The largest pin body: an inline scenario is a few KiB; a pin is held until used or expired.
    static let maxPinBytes = 64 * 1024

    /// `{"pan" | "sdkTransID": …, "scenario": "name" | {inline scenario}, "count": 1, "expiresIn": 3600}`.
    func addPin(_ request: HTTPRequest) throws -> HTTPResponse {
        guard request.headers.mediaType == "application/json" else { throw HTTPError(.unsupportedMediaType, "expected Content-Type application/json") }
        guard request.body.count <= Self.maxPinBytes else {
            throw HTTPError(.payloadTooLarge, "a pin is at most \(Self.maxPinBytes) bytes, this one \(request.body.count)")
        }
        let body = try request.jsonBody()
        let target: PinTarget
        switch (body["pan"]?.stringValue, body["sdkTransID"]?.stringValue) {
        case (let pan?, nil):
            guard CardNumber.isLuhnValid(pan), (13...19).contains(pan.count) else { throw HTTPError(.badRequest, "pan \(pan) is not a Luhn-valid card number") }
            target = .pan(pan)
        case (nil, let id?):
            guard FieldFormat.isCanonicalUUID(id) else { throw HTTPError(.badRequest, "sdkTransID \(id) is not a UUID") }
            target = .sdkTransID(id.lowercased())
        default:
            throw HTTPError(.badRequest, "give exactly one of pan and sdkTransID (strings)")
        }
        let count: Int
        switch body["count"] {
        case nil: count = 1
        case .number(let text)?:
            guard let value = Int(text), value >= 1 else { throw HTTPError(.badRequest, "count must be a whole number of 1 or more") }
            count = value
        default: throw HTTPError(.badRequest, "count must be a number")
        }
        var lifetime = Double(PinBoard.defaultLifetime.components.seconds)
        let longest = Double(PinBoard.maxLifetime.components.seconds)
        switch body["expiresIn"] {
        case nil: break
        case .number(let text)?:
            guard let seconds = Double(text), seconds.isFinite, (1...longest).contains(seconds) else {
                throw HTTPError(.badRequest, "expiresIn must be 1-\(Int(longest)) seconds")
            }
            lifetime = seconds
        default: throw HTTPError(.badRequest, "expiresIn must be a number of seconds")
        }
        // Made again by an instance started later (docs/scale.md): the pin lives as long as where it was set.
        if request.headers[Cluster.forwardedHeader] != nil, let made = request.headers[Cluster.changeMadeHeader].flatMap({ Int64($0) }) {
            lifetime -= Double(clock.wallMilliseconds() - made) / 1000
            guard lifetime >= 1 else { throw HTTPError(HTTPStatus(code: 410), "the pin expired before this instance started") }
        }
        let scenario: Scenario
        switch body["scenario"] {
        case .string(let name)?:
            guard let named = scenarios.catalog.scenarios.first(where: { $0.name == name }) else {
                throw HTTPError(.badRequest, "no scenario \(name) (GET /admin/scenarios lists them)")
            }
            scenario = named
        case let inline? where inline.objectMembers != nil:
            do { scenario = try ScenarioFile.parseScenario(JSONWriter.string(inline), source: "pin") } catch {
                throw HTTPError(.badRequest, error.description)
            }
        default:
            throw HTTPError(.badRequest, "scenario must be a scenario name or a scenario object")
        }
        let pin: Pin
        // One id on every instance of a cluster: the change's, which the instance that took the request gave it.
        let id = request.headers[HarnessChangeHeader.name] ?? UUID().uuidString.lowercased()
        let team = try request.team()
        do { pin = try scenarios.pins.add(scenario, for: target, team: team, count: count, lifetime: .seconds(lifetime), id: id) } catch {
            throw HTTPError(.tooManyRequests, "\(error.capacity) pins are set: use, remove (DELETE /admin/pins) or let some expire first")
        }
        counts.startCount(id: pin.id, remaining: count, lifetimeMilliseconds: Int64(lifetime * 1000))
        return .emv(Self.json(pin), status: .created)
    }

    static func json(_ pin: Pin) -> JSONValue {
        let target: (String, JSONValue) = switch pin.target {
        case .pan(let pan): ("pan", .string(CardNumber.masked(pan)))
        case .sdkTransID(let id): ("sdkTransID", .string(id))
        }
        let seconds = max(0, (pin.expires - ContinuousClock.now).components.seconds)
        return .object(omittingAbsent: [target, ("team", .string(pin.team)), ("scenario", .string(pin.scenario.name)),
                                        ("remaining", .number(String(pin.remaining))), ("expiresIn", .number(String(seconds)))])
    }

    static func json(_ scenario: Scenario, in catalog: ScenarioCatalog) -> JSONValue {
        var answers: JSONValue?
        if case .challenge(let script) = scenario.outcome { answers = .array(script.passingAnswers().map(JSONValue.string)) }
        // The browser's own outcome and answers where its 3DS Method makes the ACS play another scenario's.
        var browser: JSONValue?
        if scenario.channels.contains(.browser) {
            let outcome = scenario.outcome(on: .browser, in: catalog)
            var browserAnswers: JSONValue?
            if outcome != scenario.outcome, case .challenge(let script) = outcome { browserAnswers = .array(script.passingAnswers().map(JSONValue.string)) }
            browser = .object(omittingAbsent: [("threeDSCompInd", .string(scenario.threeDSMethod.expectedCompInd.rawValue)),
                                               ("answers", browserAnswers), ("expected", expected(outcome, on: .browser))])
        }
        return .object(omittingAbsent: [
            ("name", .string(scenario.name)),
            ("pan", .string(scenario.pan)),
            ("trigger", json(scenario.trigger)),
            ("description", .string(scenario.description)),
            ("answers", answers),
            ("expected", expected(scenario.outcome, on: .app)),
            ("channels", .array(scenario.channels.map { .string($0.name) })),
            ("browser", browser),
            ("faults", scenario.faults.isEmpty ? nil : .array(scenario.faults.map(json))),
            ("expect", scenario.expectation.map(json)),
            ("versions", scenario.versions.map { versions in .array(MessageVersion.allCases.filter(versions.contains).map { .string($0.rawValue) }) }),
        ])
    }

    /// The outcome per version: a status a version does not know is answered differently.
    private static func expected(_ outcome: Outcome, on channel: DeviceChannel) -> JSONValue {
        .object(omittingAbsent: MessageVersion.allCases.map { version -> (String, JSONValue?) in
            let plan = outcome.plan(for: version, on: channel)
            var reason: String?
            if case .final(_, let finalReason) = plan { reason = finalReason }
            // A challenge that falls back (2.3.1) ends D at the SDK; the decoupled authentication that follows brings the result.
            var challengeStatus: String?
            if case .challenge(let script) = plan, let fallback = script.decoupledFallback, fallback.afterSuccess, version >= .v2_3_1 {
                challengeStatus = TransStatus.decoupled.rawValue
            }
            return (version.rawValue, .object(omittingAbsent: [("flow", .string(plan.flow)),
                                                              ("transStatus", .string(outcome.expectedResult(for: version, on: channel).rawValue)),
                                                              ("transStatusReason", .string(reason)), ("challengeTransStatus", .string(challengeStatus))]))
        })
    }

    static func json(_ trigger: Trigger) -> JSONValue? {
        guard !trigger.isEmpty else { return nil }
        func text(_ range: ClosedRange<UInt64>?) -> JSONValue? {
            range.map { .string($0.upperBound == .max ? "\($0.lowerBound)-" : "\($0.lowerBound)-\($0.upperBound)") }
        }
        return .object(omittingAbsent: [("panRange", text(trigger.panRange)), ("amount", text(trigger.amount)),
                                        ("messageCategory", .string(trigger.messageCategory))])
    }

    static func json(_ injection: FaultInjection) -> JSONValue {
        .object(omittingAbsent: [("leg", .string(injection.leg.rawValue)), ("fault", .string(injection.fault.name)),
                                 ("round", injection.leg == .sdk ? .number(String(injection.round)) : nil)])
    }

    /// What a correct client does: `sdk` (its report), `sdkErro`, `threeDSServer` (the state its transaction ends in), `text`.
    static func json(_ expectation: Expectation) -> JSONValue {
        .object(omittingAbsent: [("sdk", .string(expectation.sdk?.rawValue)), ("sdkErro", .string(expectation.sdkErro?.rawValue)),
                                 ("threeDSServer", .string(expectation.threeDSServerState)), ("text", .string(expectation.text))])
    }
}
