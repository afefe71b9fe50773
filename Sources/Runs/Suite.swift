public import EMV3DS
public import JSON
import Faults
public import Scenarios

/// What a run tests: the party under test, and the scenarios, versions and channels to drive
/// it through. Built in: `sdk-app` and `3ds-server`; a user's own suite is the same as JSON or YAML.
public struct Suite: Sendable, Equatable {
    public enum Channel: String, Sendable, CaseIterable {
        case app, browser
        case threeRI = "3ri"

        /// The AReq's `deviceChannel`.
        public var deviceChannel: String {
            switch self {
            case .app: "01"
            case .browser: "02"
            case .threeRI: "03"
            }
        }
    }

    public var name: String
    public var party: ConformanceCheck.Party
    /// Scenario names; empty means every scenario with a test PAN that tests the party.
    public var scenarios: [String]
    public var versions: [MessageVersion]
    public var channels: [Channel]
    /// A subset: case ids (`challenge-text/2.2.0/app`) or scenario names; in a negative suite also a run of the generated
    /// names' parts, so a message (`ares`), a mutation (`outside`, `final-missing`) or an element (`transStatus`) selects
    /// every case of it; empty means every case.
    public var only: [String]
    /// The negative cases generated from the field tables (``ScenarioCatalog/negative``) rather than the file's
    /// scenarios, when `scenarios` names none.
    public var negative: Bool

    public init(name: String, party: ConformanceCheck.Party, scenarios: [String] = [], versions: [MessageVersion] = MessageVersion.allCases,
                channels: [Channel] = [.app], only: [String] = [], negative: Bool = false) {
        self.name = name
        self.negative = negative
        self.party = party
        self.scenarios = scenarios
        self.versions = versions
        self.channels = channels
        self.only = only
    }

    /// `sdk-app`: an SDK in an app, through every scenario whose faults are on its leg (or none).
    /// `3ds-server`: a 3DS Server sending AReqs to this DS, through every scenario without SDK-leg faults.
    /// `3ds-server-browser`: the same in the browser channel (3DS Method, challenge pages).
    /// `sdk-negative`: an SDK's CRes, Erro and acsSignedContent parsers, through the negative cases generated from the field tables.
    /// `3ds-server-negative`: a 3DS Server's ARes, RReq, PRes and Erro parsers, the same way.
    public static let builtIn: [Suite] = [
        Suite(name: "sdk-app", party: .sdk),
        Suite(name: "sdk-negative", party: .sdk, negative: true),
        Suite(name: "3ds-server-negative", party: .threeDSServer, negative: true),
        Suite(name: "3ds-server", party: .threeDSServer),
        Suite(name: "3ds-server-browser", party: .threeDSServer, channels: [.browser]),
    ]

    /// A suite as JSON: `{"name": …, "party": "sdk" | "3ds-server", "scenarios": […], "versions": […], "channels": ["app"]}`.
    public init(json: JSONValue) throws(SuiteError) {
        guard json.objectMembers != nil else { throw SuiteError("a suite is a name (\(Self.builtIn.map(\.name).joined(separator: ", "))) or an object") }
        guard let name = json["name"]?.stringValue, !name.isEmpty, name.count <= 100 else { throw SuiteError("suite.name must be a string of 1-100 characters") }
        guard let partyName = json["party"]?.stringValue, let party = ConformanceCheck.Party(rawValue: partyName) else {
            throw SuiteError("suite.party must be one of \(ConformanceCheck.Party.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        func strings(_ key: String) throws(SuiteError) -> [String]? {
            guard let value = json[key] else { return nil }
            guard case .array(let items) = value else { throw SuiteError("suite.\(key) must be a list of strings") }
            let texts = items.compactMap(\.stringValue)
            guard texts.count == items.count else { throw SuiteError("suite.\(key) must be a list of strings") }
            return texts
        }
        var versions = MessageVersion.allCases
        if let names = try strings("versions") {
            versions = []
            for name in names {
                guard let version = MessageVersion(rawValue: name) else {
                    throw SuiteError("suite.versions: \(name) is not one of \(MessageVersion.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                versions.append(version)
            }
        }
        var channels: [Channel] = [.app]
        if let names = try strings("channels") {
            channels = []
            for name in names {
                guard let channel = Channel(rawValue: name) else {
                    throw SuiteError("suite.channels: \(name) is not one of \(Channel.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                channels.append(channel)
            }
        }
        guard !versions.isEmpty, !channels.isEmpty else { throw SuiteError("suite.versions and suite.channels must not be empty") }
        let negative: Bool
        switch json["negative"] {
        case nil: negative = false
        case .bool(let value)?: negative = value
        default: throw SuiteError("suite.negative must be true or false")
        }
        self.init(name: name, party: party, scenarios: try strings("scenarios") ?? [], versions: versions, channels: channels,
                  only: try strings("only") ?? [], negative: negative)
    }

    public var json: JSONValue {
        .object(omittingAbsent: [("name", .string(name)), ("party", .string(party.rawValue)), ("scenarios", .array(scenarios.map(JSONValue.string))),
                                 ("versions", .array(versions.map { .string($0.rawValue) })), ("channels", .array(channels.map { .string($0.rawValue) })),
                                 ("only", only.isEmpty ? nil : .array(only.map(JSONValue.string))), ("negative", negative ? .bool(true) : nil)])
    }

    /// The cases of the suite over `catalog`: one per scenario x version x channel.
    public func cases(from catalog: ScenarioCatalog) throws(SuiteError) -> [RunCase] {
        var chosen: [Scenario] = []
        if scenarios.isEmpty {
            chosen = (negative ? catalog.negative : catalog.scenarios).filter { $0.pan != nil && Self.tests(party, $0) }
        } else {
            for name in scenarios {
                guard let scenario = catalog.scenario(named: name) else {
                    throw SuiteError("suite.scenarios: no scenario \(name) (GET /admin/scenarios lists them)")
                }
                guard scenario.pan != nil else { throw SuiteError("suite.scenarios: \(name) has no test PAN to run it with") }
                chosen.append(scenario)
            }
        }
        guard !chosen.isEmpty else { throw SuiteError("the suite has no scenario to run") }
        // A scenario runs in the channels it plays in (SDK-leg faults: the app alone); 3RI takes any card.
        let cases = chosen.flatMap { scenario in
            versions.filter { scenario.versions?.contains($0) ?? true }.flatMap { version in
                channels.filter { $0 == .threeRI || scenario.channels.map(\.rawValue).contains($0.deviceChannel) }
                    .map { RunCase(scenario: scenario, version: version, channel: $0, catalog: catalog) }
            }
        }
        guard !cases.isEmpty else { throw SuiteError("no scenario of the suite plays in its channels (SDK-leg faults are app only)") }
        guard !only.isEmpty else { return cases }
        // Sets, not nested searches: a request may name thousands (see RunRegistry.retry).
        let known = Set(cases.map(\.id)).union(cases.map(\.scenario)), named = Set(only)
        // In a negative suite an entry may also be a run of the generated names' parts: searched only for those entries.
        let parts = negative ? only.filter { !known.contains($0) } : []
        if let name = only.first(where: { entry in !known.contains(entry) && !(negative && cases.contains { Self.names($0.scenario, part: entry) }) }) {
            throw SuiteError("suite.only: \(name) is neither a case id (scenario/version/channel) nor a scenario of the suite"
                             + (negative ? ", nor a part of a case's name (a message, a mutation or an element: ares, outside, transStatus)" : ""))
        }
        return cases.filter { runCase in
            named.contains(runCase.id) || named.contains(runCase.scenario) || parts.contains { Self.names(runCase.scenario, part: $0) }
        }
    }

    /// Whether the generated name `scenario` has `part` (one or more of its dash-separated parts, in order) in it.
    public static func names(_ scenario: String, part: String) -> Bool {
        let tokens = scenario.split(separator: "-").map(String.init), wanted = part.split(separator: "-").map(String.init)
        return !wanted.isEmpty && tokens.indices.contains { tokens[$0...].starts(with: wanted) }
    }

    /// Whether a scenario tests the party: its faults are on the party's legs (or it has none).
    static func tests(_ party: ConformanceCheck.Party, _ scenario: Scenario) -> Bool {
        switch party {
        case .sdk: scenario.faults.allSatisfy { $0.leg == .sdk }
        case .threeDSServer: scenario.faults.allSatisfy { $0.leg != .sdk }
        }
    }
}

public struct SuiteError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
