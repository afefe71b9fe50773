public import EMV3DS
public import JSON

extension SDKOutcome {
    /// The SDK event's name: completed, cancelled, timedOut, protocolError, runtimeError.
    public var kind: String {
        switch self {
        case .completed: "completed"
        case .cancelled: "cancelled"
        case .timedOut: "timedOut"
        case .protocolError: "protocolError"
        case .runtimeError: "runtimeError"
        }
    }
}

/// What a scenario must give in one version, read from its `/admin/scenarios` entry:
/// the flow and final status, or, for a fault, what a correct SDK or 3DS Server ends with.
public struct ExpectedRun: Sendable {
    public var flow: String
    public var transStatus: String
    /// The SDK's report and the Erro it must send (faults on the SDK leg).
    public var sdk: String?
    public var sdkErro: String?
    /// The state the 3DS Server's record ends in (faults on the DS and ACS legs, a result that never comes).
    public var threeDSServerState: String?
    /// The final CRes's status where it is not the result: D, when a decoupled fallback (2.3.1) brings the result.
    public var challengeTransStatus: String?

    public init?(scenario: JSONValue, version: MessageVersion) {
        guard let entry = scenario["expected"]?[version.rawValue], let flow = entry["flow"]?.stringValue,
              let status = entry["transStatus"]?.stringValue else { return nil }
        self.flow = flow
        transStatus = status
        challengeTransStatus = entry["challengeTransStatus"]?.stringValue
        // Where the version turns a challenge or decoupled scenario into a frictionless U, its faults never act.
        let downgraded = flow == "frictionless" && MessageVersion.allCases.contains { scenario["expected"]?[$0.rawValue]?["flow"]?.stringValue != "frictionless" }
        guard !downgraded else { return }
        sdk = scenario["expect"]?["sdk"]?.stringValue
        sdkErro = scenario["expect"]?["sdkErro"]?.stringValue
        threeDSServerState = scenario["expect"]?["threeDSServer"]?.stringValue
    }

    /// How long to wait for a decoupled or challenge result that may never come.
    public var resultWait: Duration { threeDSServerState == "challenge" ? .seconds(3) : .seconds(30) }

    /// Nil when `run` is what a correct party gives, else what differs.
    public func mismatch(in run: TransactionRun) -> String? {
        var problems: [String] = []
        if let threeDSServerState, run.final.state != threeDSServerState {
            problems.append("3DS Server state \(run.final.state ?? "none"), wanted \(threeDSServerState)")
        }
        if let sdk, run.challenge?.outcome.kind != sdk {
            problems.append("SDK \(run.challenge.map { "\($0.outcome)" } ?? "ran no challenge"), wanted \(sdk)")
        }
        if let sdkErro, run.challenge?.erroSent?.errorCode.rawValue != sdkErro {
            problems.append("SDK Erro \(run.challenge?.erroSent?.errorCode.rawValue ?? "none"), wanted \(sdkErro)")
        }
        if sdk == nil, threeDSServerState == nil {
            let finalState = flow == "frictionless" ? "frictionless" : "completed"
            if run.final.transStatus != transStatus || run.final.state != finalState {
                problems.append("\(run.final.state ?? "none") \(run.final.transStatus ?? "none"), wanted \(flow) \(transStatus)")
            } else if flow == "challenge", let wanted = challengeTransStatus ?? Optional(transStatus),
                      run.challenge?.outcome != .completed(TransStatus(rawValue: wanted) ?? .unavailable) {
                problems.append("SDK \(run.challenge.map { "\($0.outcome)" } ?? "ran no challenge"), wanted completed \(wanted)")
            }
        }
        return problems.isEmpty ? nil : problems.joined(separator: "; ")
    }
}

/// One PAN to run, with the answers to give and, for a scenario of `GET /admin/scenarios`, what
/// each version's transaction must end in: what `simulate --all` and the scenario tests run.
public struct SimulationCase: Sendable {
    public var label: String
    public var pan: String
    public var answers: ChallengeAnswers
    /// By version ("2.2.0"); nil for a PAN run without a scenario.
    public var expected: [String: ExpectedRun]?
    /// The channels the case runs in (a scenario with faults on the SDK leg: the app alone).
    public var channels: [DeviceChannel] = [.app, .browser]
    /// The versions the scenario is a case of (a negative case of an element one version requires); nil: every version.
    public var versions: Set<MessageVersion>?
    /// In the browser channel, where its 3DS Method changes them: the answers and expectations.
    public var browserAnswers: ChallengeAnswers?
    public var browserExpected: [String: ExpectedRun]?
    /// A PRes case (faults on the `pres` leg): played by a PReq, not a transaction on its card; and whether a 3DS Server
    /// owes an Erro about its PRes (it has an expectation) or takes it.
    public var preparation = false
    public var preparationErroDue = false

    public init(label: String, pan: String, answers: ChallengeAnswers, expected: [String: ExpectedRun]? = nil) {
        self.label = label
        self.pan = pan
        self.answers = answers
        self.expected = expected
    }

    /// The answers and expectations of `channel`.
    func plan(on channel: DeviceChannel) -> (answers: ChallengeAnswers, expected: [String: ExpectedRun]?) {
        guard channel == .browser else { return (answers, expected) }
        return (browserAnswers ?? answers, browserExpected ?? expected)
    }

    /// A scenario as `GET /admin/scenarios` lists it: its name, test PAN, the answers that pass
    /// its challenge, and its expectation per version.
    public init?(scenario: JSONValue, whitelisting: String? = nil) {
        guard let name = scenario["name"]?.stringValue, let pan = scenario["pan"]?.stringValue else { return nil }
        var scripted: [String] = []
        if case .array(let list)? = scenario["answers"] { scripted = list.compactMap(\.stringValue) }
        var expected: [String: ExpectedRun] = [:]
        for version in MessageVersion.allCases { expected[version.rawValue] = ExpectedRun(scenario: scenario, version: version) }
        self.init(label: name, pan: pan, answers: ChallengeAnswers(scripted, whitelisting: whitelisting), expected: expected)
        if case .array(let names)? = scenario["channels"] {
            channels = DeviceChannel.allCases.filter { channel in names.contains { $0.stringValue == channel.name } }
        }
        if case .array(let names)? = scenario["versions"] { versions = Set(names.compactMap { $0.stringValue.flatMap(MessageVersion.init(rawValue:)) }) }
        preparation = scenario["faults"]?.arrayValue?.contains { $0["leg"]?.stringValue == "pres" } ?? false
        preparationErroDue = preparation && scenario["expect"] != nil
        if let browser = scenario["browser"] {
            if case .array(let list)? = browser["answers"] { browserAnswers = ChallengeAnswers(list.compactMap(\.stringValue), whitelisting: whitelisting) }
            var browserScenario = scenario
            browserScenario.set("expected", browser["expected"])
            browserExpected = Dictionary(uniqueKeysWithValues: MessageVersion.allCases.compactMap { version in
                ExpectedRun(scenario: browserScenario, version: version).map { (version.rawValue, $0) }
            })
        }
    }
}
