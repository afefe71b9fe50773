import ArgumentParser
import EMV3DS
import EMVCrypto
import Foundation
import Harness
import JOSE
import Net
import SDKSimulator

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
            --all runs every scenario of GET /admin/scenarios (--all-frictionless only the frictionless ones) for each chosen \
            version and style with the scenario's documented answers, and exits 1 on any unexpected result.
            """
    )

    @Option(name: .long, help: "The harness's base URL.")
    var url = "http://127.0.0.1:8080"

    @Option(name: .long, help: "YAML configuration file (for the test PKI and card ranges).")
    var config = "config/harness.yaml"

    @Option(name: .long, help: "Card number of one transaction.")
    var pan: String?

    @Option(name: .long, help: "Message version (repeatable; default 2.2.0, or all with --all-frictionless).")
    var version: [String] = []

    @Option(name: .long, help: "Device data style: android (dir, EC), ios-ec (ECDH-ES), rsa (RSA-OAEP-256). Repeatable; default android, or all with --all-frictionless.")
    var style: [String] = []

    @Option(name: .long, help: "Challenge answers, one per screen, separated by semicolons (with --pan).")
    var answers = ""

    @Option(name: .long, help: "whitelistingDataEntry to send when a screen asks (Y or N).")
    var whitelisting = "Y"

    @Option(name: .long, help: "CReq encryption: A128CBC-HS256 or A128GCM.")
    var encryption = "A128CBC-HS256"

    @Flag(name: .long, help: "Run every scenario and check its outcome.")
    var all = false

    @Flag(name: .long, help: "Run every frictionless scenario and check its outcome.")
    var allFrictionless = false

    var runsScenarios: Bool { all || allFrictionless }

    func validate() throws {
        guard pan != nil || runsScenarios else { throw ValidationError("give --pan, --all or --all-frictionless") }
        guard ["A128CBC-HS256", "A128GCM"].contains(encryption) else { throw ValidationError("--encryption \(encryption) is not A128CBC-HS256 or A128GCM") }
        for name in version where MessageVersion(rawValue: name) == nil { throw ValidationError("--version \(name) is not 2.1.0, 2.2.0 or 2.3.1") }
        for name in style where DeviceDataStyle(rawValue: name) == nil { throw ValidationError("--style \(name) is not android, ios-ec or rsa") }
    }

    func run() async throws {
        let configuration: HarnessConfiguration
        do {
            configuration = FileManager.default.fileExists(atPath: config) || config != "config/harness.yaml"
                ? try HarnessConfiguration.load(path: config) : HarnessConfiguration()
        } catch { throw ValidationError(error.description) }
        let versions = version.isEmpty ? (runsScenarios ? MessageVersion.allCases : [.v2_2_0]) : version.compactMap(MessageVersion.init(rawValue:))
        let styles = style.isEmpty ? (runsScenarios ? DeviceDataStyle.allCases : [.android]) : style.compactMap(DeviceDataStyle.init(rawValue:))
        let contentEncryption = ContentEncryptionAlgorithm(rawValue: encryption) ?? .a128cbcHS256

        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        // An SDK waits 10 s for a CRes: its read timeout. The app waits for the 3DS Server as long as that waits for the DS, and more.
        let tls = TLSConfiguration(trustRootsFile: configuration.pkiDirectory + "/tls/root-ca.pem")
        let sdkClient = try HTTPClient(group: group, configuration: HTTPClientConfiguration(tls: tls, readTimeoutMilliseconds: 10_000))
        let appClient = try HTTPClient(group: group, configuration: HTTPClientConfiguration(
            tls: tls, readTimeoutMilliseconds: configuration.threeDSServer.directoryServerTimeoutMs + 15_000))
        let simulator = Simulator(client: appClient, baseURL: url)
        let pki = TestPKI(directory: configuration.pkiDirectory)
        let challenger = ChallengeRunner(client: sdkClient, trustAnchors: configuration.directoryServers.compactMap { try? pki.rootCertificate($0.rid) })

        var cases: [SimulationCase] = []
        if let pan { cases.append(SimulationCase(label: pan, pan: pan, answers: ChallengeAnswers(script: answers, whitelisting: whitelisting))) }
        if runsScenarios {
            cases += try await simulator.scenarios()
                .compactMap { SimulationCase(scenario: $0, whitelisting: whitelisting) }
                .filter { all || $0.label.hasPrefix("frictionless-") }
        }

        var failures = 0
        for simulation in cases {
            let label = simulation.label
            guard let scheme = configuration.scheme(for: simulation.pan) else {
                print("\(label): \(simulation.pan) is in no card range of \(config)")
                failures += 1
                continue
            }
            // Every version and style of one scenario at once (a fault may make each wait for a timeout); printed in order.
            let combinations = versions.flatMap { version in styles.map { (version, $0) } }
            let outputs = try await withThrowingTaskGroup(of: (Int, [String], Bool).self) { group in
                for (index, (version, style)) in combinations.enumerated() {
                    let directoryServer = SDKDirectoryServer(
                        rid: scheme.rid, certificate: try pki.dsCertificate(scheme.rid, style.keyVariant),
                        keyID: TestPKI.dsKeyID(scheme.rid, style.keyVariant))
                    group.addTask {
                        let transaction = try SimulatedSDKTransaction(directoryServer: directoryServer, messageVersion: version, style: style)
                        var lines = ["\(label) \(version.rawValue) \(style.rawValue): SDK \(transaction.sdkTransID), device data to \(scheme.name) (\(scheme.rid))"]
                        let want = simulation.expected?[version.rawValue]
                        let run: TransactionRun
                        do {
                            run = try await simulator.run(transaction, pan: simulation.pan, answers: simulation.answers, challenger: challenger,
                                                          style: style.channelStyle, encryption: contentEncryption,
                                                          resultWait: want?.resultWait ?? .seconds(30))
                        } catch {
                            return (index, lines + ["  [FAILED: \(error)]"], false)
                        }
                        if let report = run.challenge {
                            for (number, screen) in report.screens.enumerated() {
                                lines.append("  screen \(number + 1): acsUiType \(screen.uiType.rawValue) \(screen.header ?? "")\(screen.textIsWarning ? " (warning: \(screen.text ?? ""))" : "")")
                            }
                            if let erro = report.erroSent { lines.append("  SDK sent Erro \(erro.errorCode.rawValue): \(erro.errorDescription)") }
                        }
                        var line = "  \(run.final.threeDSServerTransID ?? "-"): \(run.summary)"
                        var ok = true
                        if let want {
                            let problem = want.mismatch(in: run)
                            ok = problem == nil
                            line += problem.map { "  [UNEXPECTED: \($0)]" } ?? "  [ok]"
                        }
                        return (index, lines + [line], ok)
                    }
                }
                var results: [(Int, [String], Bool)] = []
                for try await result in group { results.append(result) }
                return results.sorted { $0.0 < $1.0 }
            }
            for (_, lines, ok) in outputs {
                lines.forEach { print($0) }
                if !ok { failures += 1 }
            }
        }
        if runsScenarios { print("\(failures == 0 ? "all passed" : "\(failures) unexpected") (\(cases.count) scenarios x \(versions.count) versions x \(styles.count) styles)") }
        if failures > 0 { throw ExitCode(1) }
    }
}
