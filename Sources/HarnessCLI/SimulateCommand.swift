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
            --all-frictionless runs every frictionless-* scenario of GET /admin/scenarios for each chosen version and style, \
            and exits 1 on any unexpected result.
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

    @Flag(name: .long, help: "Run every frictionless scenario and check its outcome.")
    var allFrictionless = false

    func validate() throws {
        guard pan != nil || allFrictionless else { throw ValidationError("give --pan or --all-frictionless") }
        for name in version where MessageVersion(rawValue: name) == nil { throw ValidationError("--version \(name) is not 2.1.0, 2.2.0 or 2.3.1") }
        for name in style where DeviceDataStyle(rawValue: name) == nil { throw ValidationError("--style \(name) is not android, ios-ec or rsa") }
    }

    func run() async throws {
        let configuration: HarnessConfiguration
        do {
            configuration = FileManager.default.fileExists(atPath: config) || config != "config/harness.yaml"
                ? try HarnessConfiguration.load(path: config) : HarnessConfiguration()
        } catch { throw ValidationError(error.description) }
        let versions = version.isEmpty ? (allFrictionless ? MessageVersion.allCases : [.v2_2_0]) : version.compactMap(MessageVersion.init(rawValue:))
        let styles = style.isEmpty ? (allFrictionless ? DeviceDataStyle.allCases : [.android]) : style.compactMap(DeviceDataStyle.init(rawValue:))

        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group, configuration: HTTPClientConfiguration(
            tls: TLSConfiguration(trustRootsFile: configuration.pkiDirectory + "/tls/root-ca.pem")))
        let simulator = Simulator(client: client, baseURL: url)
        let pki = TestPKI(directory: configuration.pkiDirectory)

        // (label, pan, expected transStatus per version or nil when unchecked)
        var cases: [(String, String, [String: String]?)] = []
        if let pan { cases.append((pan, pan, nil)) }
        if allFrictionless {
            for scenario in try await simulator.scenarios() {
                guard let name = scenario["name"]?.stringValue, name.hasPrefix("frictionless-"),
                      let scenarioPAN = scenario["pan"]?.stringValue else { continue }
                var expected: [String: String] = [:]
                for version in MessageVersion.allCases {
                    expected[version.rawValue] = scenario["expected"]?[version.rawValue]?["transStatus"]?.stringValue
                }
                cases.append((name, scenarioPAN, expected))
            }
        }

        var failures = 0
        for (label, cardNumber, expected) in cases {
            guard let scheme = configuration.scheme(for: cardNumber) else {
                print("\(label): \(cardNumber) is in no card range of \(config)")
                failures += 1
                continue
            }
            for version in versions {
                for style in styles {
                    let directoryServer = DirectoryServerConfiguration(
                        rid: scheme.rid, certificate: try pki.dsCertificate(scheme.rid, style.keyVariant),
                        keyID: TestPKI.dsKeyID(scheme.rid, style.keyVariant))
                    let transaction = try SimulatedSDKTransaction(directoryServer: directoryServer, messageVersion: version, style: style)
                    print("\(label) \(version.rawValue) \(style.rawValue): SDK \(transaction.sdkTransID), device data to \(scheme.name) (\(scheme.rid))")
                    let result = try await simulator.authenticate(transaction, pan: cardNumber)
                    var line = "  3DS Server \(result.threeDSServerTransID ?? "-"): \(result.state ?? "?") \(result.summary)"
                    if let want = expected?[version.rawValue] {
                        let ok = result.state == "frictionless" && result.transStatus == want
                        if !ok { failures += 1 }
                        line += ok ? "  [ok]" : "  [UNEXPECTED: wanted \(want)]"
                    }
                    print(line)
                }
            }
        }
        if allFrictionless { print("\(failures == 0 ? "all passed" : "\(failures) unexpected") (\(cases.count) scenarios x \(versions.count) versions x \(styles.count) styles)") }
        if failures > 0 { throw ExitCode(1) }
    }
}
