public import ArgumentParser
import Configuration
import EMV3DS
import EMVCrypto
import EventLoops
import Foundation
import Harness
import JOSE
import JSON
import Net
import Runs
import SDKSimulator
import ThreeDSServer

struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Act as an app with a 3DS SDK against a running harness, printing each step.",
        discussion: """
            The SDK encrypts its device data to the DS certificate of the card's scheme (from the test PKI named by --config), \
            creates an ephemeral key and ids, and the app posts them with the card to /3ds-server/authenticate.
            When the ACS asks for a challenge, the SDK verifies acsSignedContent against the DS CA root, agrees the key and \
            answers each screen from --answers ("1234", or "1111;resend;5678": one answer per screen; also cancel, cancel:NN, \
            continue, empty). android runs the Android channel (zero IV with counter); ios-ec and rsa the iOS one (random IV).
            --profile emvco or token goes through that integration profile instead (docs/profiles.md): the SDK is configured \
            from what the profile answers, and the profile's answers are checked against the 3DS Server's record.
            --channel browser runs a cardholder's browser on a merchant's checkout instead (docs/browser.md): prepare, the \
            3DS Method, authenticate with the browser's fields, the ACS's pages answered from --answers, the final CRes \
            posted to the notificationURL. --all runs both channels unless --channel says one.
            --all runs every scenario of GET /admin/scenarios (--all-frictionless only the frictionless ones) for each chosen \
            version and style with the scenario's documented answers, and exits 1 on any unexpected result. With --junit, \
            --report or --json it runs them as a test run on the harness (POST /admin/runs), so the reports carry the \
            harness's checks of every message (JUnit XML, one-file HTML, JSON).
            """
    )

    @Option(name: .long, help: "The harness's base URL.")
    var url = "http://127.0.0.1:8080"

    @Option(name: .long, help: "YAML configuration file (for the test PKI and card ranges; default: config/harness.yaml here or in the binary's checkout).")
    var config: String?

    @Option(name: .long, help: "Card number of one transaction.")
    var pan: String?

    @Option(name: .long, help: "Message version (repeatable; default 2.2.0, or all with --all, --all-frictionless or --negative).")
    var version: [String] = []

    @Option(name: .long, help: "Device data style: android (dir, EC), ios-ec (ECDH-ES), rsa (RSA-OAEP-256). Repeatable; default android, or all with --all, --all-frictionless or --negative.")
    var style: [String] = []

    @Option(name: .long, help: "Challenge answers, one per screen, separated by semicolons (with --pan).")
    var answers = ""

    @Option(name: .long, help: "whitelistingDataEntry to send when a screen asks (Y or N).")
    var whitelisting = "Y"

    @Option(name: .long, help: "CReq encryption: A128CBC-HS256 (the default) or A128GCM (the default, and the only one, of a Split-SDK).")
    var encryption: String?

    @Option(name: .long, help: "Play a wrong SDK on purpose: withhold-erro (no Erro about a bad CRes), repeat-counter (the second CReq repeats sdkCounterStoA 000), oob-as-data-entry (an out-of-band screen answered with challengeDataEntry), oob-app-url-supported (oobAppURLInd 01 in 2.3.1 CReqs), accepts-any-value (a CRes element's value outside its version's set taken), accepts-any-type (a value of another JSON type coerced), accepts-any-length (no length checked), accepts-any-format (no shape checked beyond length and type), accepts-duplicates (a member written twice read once): these five with --negative; kdf-without-reference (the channel key derived without the sdkReferenceNumber), stale-channel-key (every challenge sealed with the first one's key), trusts-any-chain (acsSignedContent's signature checked, not its chain), ignores-intermediates (the x5c leaf checked against the DS roots alone), ignores-sdk-key-echo (acsSignedContent's sdkEphemPubKey not checked), refuses-unknown-members (a member its version does not define refused, in a CRes or acsSignedContent), ignores-envelope (a CRes taken whatever its messageType and messageVersion), infers-alg-from-key (acsSignedContent verified with its key's algorithm, whatever its header's alg and crit), assumes-p256-key (acsSignedContent's acsEphemPubKey read as a P-256 point whatever its kty and crv), ends-on-trans-status (a CRes with transStatus taken as the final one; with --negative), answers-an-invalid-erro (an Erro from the ACS that does not read answered with an Erro; with --negative) or continues-after-acs-erro (the next CReq sent after an Erro from the ACS).")
    var misbehave: String?

    @Option(name: .long, help: "app (an app with a 3DS SDK) or browser (a checkout page). Repeatable; default app, or both with --all and --all-frictionless.")
    var channel: [String] = []

    @Option(name: .long, help: "Browser, 2.3.1, with --pan: Secure Payment Confirmation (docs/spc.md). Enrol a software authenticator for the card, say the checkout supports SPC, and after an ARes S: accept (the assertion), decline (spcIncompInd 02), unavailable (spcIncompInd 01) or spoil (an assertion signed for another challenge, a faulty page).")
    var spc: String?

    @Option(name: .long, help: "App, 2.3.1, with --pan: play a Split-SDK (sdkType 02) whose server signs with the test PKI's Split-SDK server certificate: valid, wrong-transaction (signs another sdkTransID) or untrusted (a certificate under another DS's CA). The DS verifies it (Erro 308 when it does not).")
    var splitSdk: String?

    @Option(name: .long, help: "The app's backend contract: server (/3ds-server/authenticate), emvco (/profiles/emvco: the EMVCo SDK API's parameters) token (/profiles/token: Adyen-style fingerprint and challenge tokens) or token-classic (the token style's /payments/details after each step).")
    var profile: IntegrationProfile = .server

    @Flag(name: .long, help: "Run every scenario and check its outcome.")
    var all = false

    @Flag(name: .long, help: "Run every frictionless scenario and check its outcome.")
    var allFrictionless = false

    @Flag(name: .long, help: "Run the negative cases generated from the field tables (GET /admin/scenarios/negative): each CRes, ARes, RReq and PRes element Annex A requires left out (Erro 201 due), an optional one sent empty or a value outside its version's set (Erro 203 due), in the versions where the table says so; the 3DS Server's refused by this harness's 3DS Server, the PRes cases by a PReq of the simulator's own.")
    var negative = false

    @Option(name: .long, help: "With --all or --negative: only the scenarios of this name, or with it among their name's dash-separated parts (a message, a mutation or an element of a negative case: pres, missing-dsTransID, ares-challenge). Repeat for more.")
    var only: [String] = []

    @Option(name: .long, help: "With --all: write the run's JUnit XML report here.")
    var junit: String?

    @Option(name: .long, help: "With --all: write the run's HTML report here.")
    var report: String?

    @Option(name: .long, help: "With --all: write the run's JSON report here.")
    var json: String?

    @Option(name: .long, help: "Send X-Harness-Case with every transaction: a run id (or RUN/CASE), so that a run started with `run` takes them.")
    var harnessCase: String?

    var runsScenarios: Bool { all || allFrictionless || negative }
    var writesReports: Bool { junit != nil || report != nil || json != nil }

    func validate() throws {
        guard pan != nil || runsScenarios else { throw ValidationError("give --pan, --all, --all-frictionless or --negative") }
        if [all, allFrictionless, negative].count(where: { $0 }) > 1 { throw ValidationError("give one of --all, --all-frictionless and --negative") }
        if !only.isEmpty, !runsScenarios { throw ValidationError("--only selects among the scenarios of --all, --all-frictionless or --negative") }
        if writesReports, !runsScenarios || pan != nil { throw ValidationError("--junit, --report and --json go with --all or --all-frictionless (without --pan)") }
        if writesReports, harnessCase != nil { throw ValidationError("--harness-case names a run of yours: its reports come from `run --id`, not from --junit here") }
        if let encryption, !["A128CBC-HS256", "A128GCM"].contains(encryption) { throw ValidationError("--encryption \(encryption) is not A128CBC-HS256 or A128GCM") }
        for name in version where MessageVersion(rawValue: name) == nil { throw ValidationError("--version \(name) is not 2.1.0, 2.2.0 or 2.3.1") }
        if let misbehave, ChallengeRunner.Misbehaviour(rawValue: misbehave) == nil {
            throw ValidationError("--misbehave \(misbehave) is not one of \(ChallengeRunner.Misbehaviour.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        for name in style where DeviceDataStyle(rawValue: name) == nil { throw ValidationError("--style \(name) is not android, ios-ec or rsa") }
        for name in channel where !["app", "browser"].contains(name) { throw ValidationError("--channel \(name) is not app or browser") }
        if let spc {
            guard SPCPlay(rawValue: spc) != nil else { throw ValidationError("--spc \(spc) is not one of \(SPCPlay.allCases.map(\.rawValue).joined(separator: ", "))") }
            guard pan != nil, !runsScenarios, channel == ["browser"], version == ["2.3.1"] else {
                throw ValidationError("--spc goes with --pan, --channel browser and --version 2.3.1: SPC is 2.3.1's, in the browser")
            }
        }
        if let splitSdk {
            guard ["valid", "wrong-transaction", "untrusted"].contains(splitSdk) else { throw ValidationError("--split-sdk \(splitSdk) is not valid, wrong-transaction or untrusted") }
            guard pan != nil, !runsScenarios, !channel.contains("browser"), version == ["2.3.1"] else {
                throw ValidationError("--split-sdk goes with --pan and --version 2.3.1 in the app channel: the Split-SDK is 2.3.1's")
            }
        }
        if channel.contains("browser"), profile != .server {
            throw ValidationError("--channel browser goes through the 3DS Server's requestor API: --profile \(profile.rawValue) is an app's")
        }
    }

    /// The channels to run: as given; else both for the scenario runs through the requestor API, the app otherwise.
    var channels: [DeviceChannel] {
        if !channel.isEmpty { return DeviceChannel.allCases.filter { channel.contains($0.name) } }
        return runsScenarios && profile == .server ? [.app, .browser] : [.app]
    }

    func run() async throws {
        let location = try ConfigurationLocation.find(commandLine: config)
        let configuration = location.configuration
        let pkiDirectory = location.resolve(configuration.pkiDirectory)
        let versions = version.isEmpty ? (runsScenarios ? MessageVersion.allCases : [.v2_2_0]) : version.compactMap(MessageVersion.init(rawValue:))
        let styles = style.isEmpty ? (runsScenarios ? DeviceDataStyle.allCases : [.android]) : style.compactMap(DeviceDataStyle.init(rawValue:))
        let contentEncryption = ContentEncryptionAlgorithm(rawValue: encryption ?? (splitSdk != nil ? "A128GCM" : "A128CBC-HS256")) ?? .a128cbcHS256

        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        // An SDK waits 10 s for a CRes: its read timeout. The app waits for the 3DS Server as long as that waits for the DS, and more.
        let tls = TLSConfiguration(trustRootsFile: pkiDirectory + "/tls/root-ca.pem")
        let sdkClient = try HTTPClient(group: group, configuration: HTTPClientConfiguration(tls: tls, readTimeoutMilliseconds: 10_000))
        let appClient = try HTTPClient(group: group, configuration: HTTPClientConfiguration(
            tls: tls, readTimeoutMilliseconds: configuration.threeDSServer.directoryServerTimeoutMs + 15_000, maxResponseBytes: RunClient.maxReportBytes))
        // An unreachable harness is "could not run" (exit 2), not a failed test (exit 1).
        try await CouldNotRun.guarding { try await RunClient(client: appClient, baseURL: url).health() }
        var simulator = Simulator(client: appClient, baseURL: url, profile: profile)
        simulator.harnessCase = harnessCase
        simulator.spc = spc.flatMap(SPCPlay.init(rawValue:))
        let pki = TestPKI(directory: pkiDirectory)
        if let splitSdk {
            let rids = configuration.directoryServers.map(\.rid)
            simulator.splitSDK = { rid in
                // Untrusted: the certificate of another DS's Split-SDK server, which does not chain to this DS's CA.
                let signer = splitSdk == "untrusted" ? rids.first { $0 != rid } ?? rid : rid
                guard let key = try? pki.splitSDKServerPrivateKey(signer), let certificate = try? pki.splitSDKServerCertificate(signer) else { return nil }
                var server = SplitSDKServer(key: key, chain: [certificate])
                server.signsAnotherTransaction = splitSdk == "wrong-transaction"
                return server
            }
        }
        let challenger = ChallengeRunner(client: sdkClient, trustAnchors: configuration.directoryServers.compactMap { try? pki.rootCertificate($0.rid) },
                                         misbehaviour: misbehave.flatMap(ChallengeRunner.Misbehaviour.init(rawValue:)))

        var cases: [SimulationCase] = []
        if let pan { cases.append(SimulationCase(label: pan, pan: pan, answers: ChallengeAnswers(script: answers, whitelisting: whitelisting))) }
        if runsScenarios {
            let chosen = try await simulator.scenarios(negative: negative)
                .compactMap { SimulationCase(scenario: $0, whitelisting: whitelisting) }
                .filter { all || negative || $0.label.hasPrefix("frictionless-") }
                .filter { simulation in only.isEmpty || only.contains { Suite.names(simulation.label, part: $0) } }
            cases += chosen
            if !only.isEmpty, chosen.isEmpty {
                throw ValidationError("--only \(only.joined(separator: ", ")) names no scenario to run (GET /admin/scenarios\(negative ? "/negative" : "") lists them)")
            }
        }

        // The reports come from a test run on the harness: its cases are this matrix's scenarios and versions.
        var testRun: (client: RunClient, id: String)?
        if writesReports {
            let runs = RunClient(client: appClient, baseURL: url)
            let suite = JSONValue.object([("name", .string(negative ? "simulate --negative" : "simulate")), ("party", .string("sdk")),
                                          ("scenarios", .array(cases.map { .string($0.label) })),
                                          ("versions", .array(versions.map { .string($0.rawValue) })),
                                          ("channels", .array(channels.map { .string($0.name) }))])
            let started = try await CouldNotRun.guarding {
                try await runs.start(JSONWriter.write(.object([("suite", suite), ("name", .string("simulate \(styles.map(\.rawValue).joined(separator: ", "))"))])))
            }
            testRun = (runs, started["id"]?.stringValue ?? "")
            // Every transaction names the run: both styles of a case are attached to it, none of another run's.
            simulator.harnessCase = testRun?.id
            // Dimensions, not their product: a scenario may play in some versions or one channel only (a negative case).
            print("run \(testRun?.id ?? ""): \(cases.count) scenarios; versions \(versions.map(\.rawValue).joined(separator: ", ")); \(styles.count) styles")
        }
        // A PRes case is a PReq, not a transaction on its card: one each, one at a time (a team has one set of armed PRes faults).
        var failures = 0, preparations = 0
        if channels.contains(.app) {
            for simulation in cases where simulation.preparation {
                for version in versions where simulation.versions?.contains(version) ?? true {
                    let label = "\(simulation.label) \(version.rawValue)"
                    preparations += 1
                    do {
                        let played = try await simulator.playPreparationCase(simulation.label, version: version)
                        let expected = (played.erroSent != nil) == simulation.preparationErroDue
                        if !expected { failures += 1 }
                        print("\(label): \(played.line)" + (expected ? "  [ok]" : "  [UNEXPECTED: " + (simulation.preparationErroDue ? "an Erro was due]" : "no Erro was due]")))
                    } catch {
                        failures += 1
                        print("\(label):  [FAILED: \(error)]")
                    }
                }
            }
        }
        cases.removeAll(where: \.preparation)
        let matrix = SimulationMatrix(cases: cases, versions: versions, styles: styles, coverage: .everyCombination, channels: channels)
        let total = matrix.entries.count
        var done = 0
        var failedSoFar = 0
        let results = await matrix.run(simulator: simulator, challenger: challenger, encryption: contentEncryption) { pan, style in
            guard let scheme = configuration.scheme(for: pan) else { return nil }
            return SDKDirectoryServer(rid: scheme.rid, certificate: try pki.dsCertificate(scheme.rid, style.keyVariant),
                                      keyID: TestPKI.dsKeyID(scheme.rid, style.keyVariant), name: scheme.name)
        } report: { result in
            result.lines.forEach { print($0) }
            done += 1
            if !result.passed { failedSoFar += 1 }
            if runsScenarios { print("[\(done)/\(total)] \(failedSoFar) failed so far") }
        }
        failures += results.count { !$0.passed }
        if runsScenarios {
            for result in results where !result.passed {
                print("FAILED \(result.entry.simulation.label) \(result.entry.version.rawValue) \(result.entry.style.rawValue): \(result.problem ?? "")")
            }
            let (app, browser) = (matrix.entries.count { $0.channel == .app }, matrix.entries.count { $0.channel == .browser })
            let parts = [(app, "in the app"), (browser, "in the browser")].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
            let prepared = preparations > 0 ? "; \(preparations) \(preparations == 1 ? "PReq of a PRes case" : "PReqs of PRes cases")" : ""
            let counted = parts.isEmpty ? "" : ": " + parts.joined(separator: ", ")
            print("\(failures == 0 ? "all passed" : "\(failures) unexpected") (\(total) transactions\(counted)\(prepared))")
        }
        if let (runs, id) = testRun {
            let finished = try await CouldNotRun.guarding {
                let finished = try await runs.finish(id)
                try await RunText.writeReports(runs, id: id, junit: junit, html: report, json: json)
                return finished
            }
            let failedCases = RunText.failures(finished)
            failedCases.forEach { print($0) }
            print("run \(id): " + RunText.progress(finished))
            failures += failedCases.count
        }
        if failures > 0 { throw ExitCode(1) }
    }
}

extension IntegrationProfile: ExpressibleByArgument {}
