public import EMV3DS
public import EMVCrypto
public import JOSE

/// Cases × message versions × device-data styles, run against a harness as `simulate --all`
/// and the scenario tests run them, each transaction checked against its case's expectation.
public struct SimulationMatrix: Sendable {
    /// Which combinations of version and style each case runs.
    public enum Coverage: Sendable {
        /// Every version with every style.
        case everyCombination
        /// One combination per case, turning through the versions, then the styles, case by case.
        case rotating
    }

    /// One transaction of the matrix.
    public struct Entry: Sendable {
        public let simulation: SimulationCase
        public let version: MessageVersion
        /// The app's device-data style; a browser transaction has none (the first style stands in).
        public let style: DeviceDataStyle
        public var channel: DeviceChannel = .app
        public var label: String { "\(simulation.label) \(version.rawValue) \(channel == .browser ? "browser" : style.rawValue)" }

        init(simulation: SimulationCase, version: MessageVersion, style: DeviceDataStyle, channel: DeviceChannel = .app) {
            self.simulation = simulation
            self.version = version
            self.style = style
            self.channel = channel
        }
    }

    /// How one transaction went: what to print, and what was unexpected (nil when it ended as
    /// expected, or when its case expects nothing).
    public struct Result: Sendable {
        public let entry: Entry
        public let lines: [String]
        public let problem: String?
        public var passed: Bool { problem == nil }
    }

    /// The Directory Server whose certificate the SDK encrypts a PAN's device data to, in
    /// `style`'s key type; nil when the PAN is in no card range.
    public typealias DirectoryServerLookup = @Sendable (_ pan: String, _ style: DeviceDataStyle) throws -> SDKDirectoryServer?

    public let entries: [Entry]

    /// The app's entries, then the browser's: every case that plays in the browser once per
    /// version (styles are the app's device data), or with `.rotating` one version each.
    public init(cases: [SimulationCase], versions: [MessageVersion], styles: [DeviceDataStyle], coverage: Coverage,
                channels: [DeviceChannel] = [.app]) {
        var entries: [Entry] = []
        if channels.contains(.app) {
            let appCases = cases.filter { $0.channels.contains(.app) }
            switch coverage {
            case .everyCombination:
                entries += appCases.flatMap { simulation in
                    versions.filter { simulation.versions?.contains($0) ?? true }.flatMap { version in
                        styles.map { Entry(simulation: simulation, version: version, style: $0) }
                    }
                }
            case .rotating:
                entries += appCases.enumerated().map { index, simulation in
                    Entry(simulation: simulation, version: versions[index % versions.count],
                          style: styles[(index / versions.count) % styles.count])
                }
            }
        }
        if channels.contains(.browser), let style = styles.first {
            let browserCases = cases.filter { $0.channels.contains(.browser) }
            switch coverage {
            case .everyCombination:
                entries += browserCases.flatMap { simulation in
                    versions.filter { simulation.versions?.contains($0) ?? true }.map { Entry(simulation: simulation, version: $0, style: style, channel: .browser) }
                }
            case .rotating:
                entries += browserCases.enumerated().map { index, simulation in
                    Entry(simulation: simulation, version: versions[index % versions.count], style: style, channel: .browser)
                }
            }
        }
        self.entries = entries
    }

    /// Runs every entry, `concurrency` at a time (a fault may make a transaction wait for a
    /// timeout, so they overlap), and hands each result to `report` in the matrix's order.
    @discardableResult
    public func run(simulator: Simulator, challenger: ChallengeRunner, encryption: ContentEncryptionAlgorithm = .a128cbcHS256,
                    concurrency: Int = 24, directoryServer: @escaping DirectoryServerLookup,
                    report: (Result) -> Void = { _ in }) async -> [Result] {
        var results: [Result?] = Array(repeating: nil, count: entries.count)
        var nextToReport = 0
        await withTaskGroup(of: (Int, Result).self) { group in
            var nextToStart = 0
            func startNext() {
                guard nextToStart < entries.count else { return }
                let index = nextToStart, entry = entries[index]
                nextToStart += 1
                group.addTask {
                    (index, await Self.run(entry, simulator: simulator, challenger: challenger, encryption: encryption,
                                           directoryServer: directoryServer))
                }
            }
            for _ in 0..<max(1, concurrency) { startNext() }
            for await (index, result) in group {
                results[index] = result
                while nextToReport < results.count, let ready = results[nextToReport] {
                    report(ready)
                    nextToReport += 1
                }
                startNext()
            }
        }
        return results.compactMap { $0 }
    }

    private static func run(_ entry: Entry, simulator: Simulator, challenger: ChallengeRunner, encryption: ContentEncryptionAlgorithm,
                            directoryServer: DirectoryServerLookup) async -> Result {
        let simulation = entry.simulation
        let (answers, expected) = simulation.plan(on: entry.channel)
        let want = expected?[entry.version.rawValue]
        func failed(_ lines: [String], _ problem: String) -> Result {
            Result(entry: entry, lines: lines + ["  [FAILED: \(problem)]"], problem: problem)
        }
        if entry.channel == .browser {
            let browser = BrowserSimulator(simulator: simulator)
            let run: BrowserSimulator.Run
            do { run = try await browser.run(pan: simulation.pan, version: entry.version, answers: answers, resultWait: want?.resultWait ?? .seconds(30)) } catch {
                return failed(["\(entry.label):"], "\(error)")
            }
            return verdict(["\(entry.label):"] + run.lines, run.transaction, want: want, entry: entry)
        }
        var transaction: SimulatedSDKTransaction
        let scheme: SDKDirectoryServer
        do {
            guard let found = try directoryServer(simulation.pan, entry.style) else {
                return failed(["\(entry.label):"], "\(simulation.pan) is in no card range")
            }
            scheme = found
            transaction = try SimulatedSDKTransaction(directoryServer: scheme, messageVersion: entry.version, style: entry.style)
            if entry.version >= .v2_3_1, let server = simulator.splitSDK?(scheme.rid) { try transaction.signAsSplitSDK(server) }
        } catch {
            return failed(["\(entry.label):"], "\(error)")
        }
        var lines = ["\(entry.label): SDK \(transaction.sdkTransID), device data to \(scheme.name.map { "\($0) (\(scheme.rid))" } ?? scheme.rid)"]
        let run: TransactionRun
        do {
            run = try await simulator.run(transaction, pan: simulation.pan, answers: answers, challenger: challenger,
                                          style: entry.style.channelStyle, encryption: encryption,
                                          resultWait: want?.resultWait ?? .seconds(30))
        } catch {
            return failed(lines, "\(error)")
        }
        if let report = run.challenge {
            for (number, screen) in report.screens.enumerated() {
                let warning = screen.textIsWarning ? " (warning: \(screen.text ?? ""))" : ""
                lines.append("  screen \(number + 1): acsUiType \(screen.uiType.rawValue) \(screen.header ?? "")\(warning)")
            }
            if let erro = report.erroSent { lines.append("  SDK sent Erro \(erro.errorCode.rawValue): \(erro.errorDescription)") }
        }
        return verdict(lines, run, want: want, entry: entry)
    }

    /// The last line: the outcome, and whether it is what the case expects.
    private static func verdict(_ lines: [String], _ run: TransactionRun, want: ExpectedRun?, entry: Entry) -> Result {
        let problem = want?.mismatch(in: run)
        let verdict = want == nil ? "" : problem.map { "  [UNEXPECTED: \($0)]" } ?? "  [ok]"
        return Result(entry: entry, lines: lines + ["  \(run.final.threeDSServerTransID ?? "-"): \(run.summary)\(verdict)"], problem: problem)
    }
}
