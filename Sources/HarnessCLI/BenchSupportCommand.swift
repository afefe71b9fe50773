import ArgumentParser
import EMV3DS
import EMVCrypto
import EventLoops
import Foundation
import JOSE
import JSON
import Net
import SDKSimulator
import Synchronization

/// Helpers for `bench/run`: a ready AReq body, and the crypto-bound rate of the DS.
struct BenchSupportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-support",
        abstract: "Benchmark helpers (used by bench/run).",
        shouldDisplay: false,
        subcommands: [AReqBody.self, CryptoRate.self, ChallengeCryptoRate.self, ChallengeLoad.self, ReadRate.self]
    )

    /// Runs `operation` on `threads` threads for `seconds`; prints how many succeeded per second
    /// and the CPU microseconds (user and system, this process) each cost.
    static func printRate(threads: Int, seconds: Double, _ operation: @escaping @Sendable () throws -> Void) {
        let deadline = Date().addingTimeInterval(seconds)
        let total = Mutex(0)
        let cpuBefore = processCPUSeconds()
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            var done = 0
            while Date() < deadline {
                guard (try? operation()) != nil else { continue }
                done += 1
            }
            total.withLock { $0 += done }
        }
        let count = Double(max(1, total.withLock { $0 }))
        print(String(format: "%.0f %.1f", count / seconds, 1_000_000 * (processCPUSeconds() - cpuBefore) / count))
    }

    private static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    static func deviceData(pki directory: String, style: DeviceDataStyle) throws -> (SimulatedSDKTransaction, DirectoryServerKeys) {
        let pki = TestPKI(directory: directory)
        let rid = "A000000003"
        let directoryServer = SDKDirectoryServer(rid: rid, certificate: try pki.dsCertificate(rid, style.keyVariant))
        let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer, messageVersion: .v2_2_0, style: style)
        let keys = DirectoryServerKeys(rsa: try pki.dsPrivateKey(rid, .rsa), ec: try pki.dsPrivateKey(rid, .ec))
        return (sdk, keys)
    }

    /// Prints a complete app-channel AReq for the Visa DS with device data in `style`.
    struct AReqBody: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "areq")
        @OptionGroup var parent: BenchSupportCommandOptions
        @Option var style = "rsa"

        func run() throws {
            guard let style = DeviceDataStyle(rawValue: style) else { throw ValidationError("unknown style \(style)") }
            let (sdk, _) = try BenchSupportCommand.deviceData(pki: parent.pki, style: style)
            var areq = sdk.authenticateRequest(pan: "4000000000001000")
            let fixed: [(String, JSONValue)] = [
                ("messageType", .string("AReq")), ("deviceChannel", .string("01")),
                ("threeDSServerTransID", .string("8a880dc0-d2d2-4067-bcb1-b08d1690b26e")),
                ("threeDSServerRefNumber", .string("3DS_LOA_SER_BENCH_020200_00001")), ("threeDSServerURL", .string("http://127.0.0.1:9/rreq")),
                ("threeDSRequestorID", .string("bench")), ("threeDSRequestorName", .string("Bench")),
                ("threeDSRequestorURL", .string("https://bench.example")), ("threeDSRequestorAuthenticationInd", .string("01")),
                ("acquirerBIN", .string("400551")), ("acquirerMerchantID", .string("bench")), ("mcc", .string("5411")),
                ("merchantCountryCode", .string("840")), ("merchantName", .string("Bench")), ("purchaseExponent", .string("2")),
                ("purchaseDate", .string("20261121120000")), ("sdkMaxTimeout", .string("05")),
                ("sdkEphemPubKey", sdk.ephemeralPublicKeyJSON),
                ("sdkEncData", .string(sdk.deviceData)),
                ("deviceRenderOptions", .object([("sdkInterface", .string("03")), ("sdkUiType", .array([.string("01")]))])),
            ]
            areq.set("deviceData", nil)
            for (key, value) in fixed { areq.set(key, value) }
            print(JSONWriter.string(areq))
        }
    }

    /// Reads the same AReq on one thread for a while, as the DS reads one from the wire: parsed alone (`--parse-only`), or
    /// parsed and checked by every field rule. Prints reads per second and the CPU microseconds each cost: the figure of
    /// a change to the reader or the rules, without the network, the crypto and the store around it.
    struct ReadRate: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "read")
        @Option(help: "A file holding the AReq (bench-support areq writes one).") var file: String
        @Flag var parseOnly = false
        @Option var seconds = 3.0

        func run() throws {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            _ = try AReq(bytes: bytes, rules: AReqRules.fromThreeDSServer)  // a valid AReq, or say why not
            let parseOnly = parseOnly
            BenchSupportCommand.printRate(threads: 1, seconds: seconds) {
                if parseOnly { _ = try JSONReader.parse(bytes) } else { _ = try AReq(bytes: bytes, rules: AReqRules.fromThreeDSServer) }
            }
        }
    }

    /// Decrypts the same device data on N threads for a while; prints operations per second.
    struct CryptoRate: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "crypto")
        @OptionGroup var parent: BenchSupportCommandOptions
        @Option var style = "rsa"
        @Option var threads = 2
        @Option var seconds = 3.0

        func run() throws {
            guard let style = DeviceDataStyle(rawValue: style) else { throw ValidationError("unknown style \(style)") }
            let (sdk, keys) = try BenchSupportCommand.deviceData(pki: parent.pki, style: style)
            let deviceData = sdk.deviceData
            BenchSupportCommand.printRate(threads: threads, seconds: seconds) {
                _ = try DeviceData.decrypt(deviceData, keys: keys, directoryServerID: "A000000003")
            }
        }
    }
}

/// The server-side crypto of one challenge transaction, on N threads: DS device-data
/// decryption, the ACS's ephemeral key, key agreement and `acsSignedContent` signature, and two
/// CReq/CRes rounds. Prints transactions per second.
struct ChallengeCryptoRate: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "challenge-crypto")
    @OptionGroup var parent: BenchSupportCommandOptions
    @Option var style = "android"
    @Option var threads = 2
    @Option var seconds = 3.0

    func run() throws {
        guard let style = DeviceDataStyle(rawValue: style) else { throw ValidationError("unknown style \(style)") }
        let (sdk, keys) = try BenchSupportCommand.deviceData(pki: parent.pki, style: style)
        let pki = TestPKI(directory: parent.pki)
        let identity = ACSSigningIdentity(key: try pki.acsPrivateKey("A000000003", .rsa),
                                          chain: [try pki.acsCertificate("A000000003", .rsa), try pki.rootCertificate("A000000003")])
        let sdkKey = sdk.ephemeralKey.publicKey.jwk()
        let sdkKeyJSON = sdk.ephemeralPublicKeyJSON
        let deviceData = sdk.deviceData
        let creq = Array(#"{"messageType":"CReq","messageVersion":"2.2.0","sdkCounterStoA":"000"}"#.utf8)
        let cres = Array(String(repeating: "x", count: 600).utf8)
        BenchSupportCommand.printRate(threads: threads, seconds: seconds) {
            _ = try DeviceData.decrypt(deviceData, keys: keys, directoryServerID: "A000000003")
            let agreement = try EphemeralAgreement(with: sdkKey)
            let channel = SecureChannel(sharedSecret: agreement.sharedSecret, sdkReferenceNumber: SimulatedSDKTransaction.sdkReferenceNumber)
            _ = try AcsSignedContent.sign(acsURL: "https://localhost:8443/acs/challenge", acsEphemeralKey: agreement.publicKey,
                                          sdkEphemPubKey: sdkKeyJSON, identity: identity)
            for _ in 0..<2 {
                // The ACS opens what the SDK sealed, and seals its answer.
                let sealed = try channel.seal(creq, encryption: .a128cbcHS256, kid: "k", direction: .sdkToACS)
                _ = try channel.open(sealed, direction: .sdkToACS)
                _ = try channel.seal(cres, encryption: .a128cbcHS256, kid: "k", direction: .acsToSDK)
            }
        }
    }
}

/// Runs full challenge transactions (authentication, two CReq/CRes rounds, the RReq behind
/// the last one) at a fixed concurrency; prints transactions/s and p50/p99 per step.
struct ChallengeLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "challenge")
    @OptionGroup var parent: BenchSupportCommandOptions
    @Option var url = "http://127.0.0.1:8080"
    @Option var concurrency = 32
    @Option var seconds = 8.0
    @Option var style = "android"

    func run() async throws {
        guard let style = DeviceDataStyle(rawValue: style) else { throw ValidationError("unknown style \(style)") }
        let pki = TestPKI(directory: parent.pki)
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group, configuration: HTTPClientConfiguration(
            tls: TLSConfiguration(trustRootsFile: parent.pki + "/tls/root-ca.pem"), maxIdleConnectionsPerEndpoint: concurrency))
        let simulator = Simulator(client: client, baseURL: url)
        let challenger = ChallengeRunner(client: client, trustAnchors: [try pki.rootCertificate("A000000003")])
        let directoryServer = SDKDirectoryServer(rid: "A000000003", certificate: try pki.dsCertificate("A000000003", style.keyVariant))
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(seconds)
        let start = clock.now
        let samples = try await withThrowingTaskGroup(of: [[Duration]].self) { tasks in
            for _ in 0..<concurrency {
                tasks.addTask {
                    var steps: [[Duration]] = [[], [], []]
                    while clock.now < deadline {
                        let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer, messageVersion: .v2_2_0, style: style)
                        let begin = clock.now
                        let authentication = try await simulator.authenticate(sdk, pan: "4000000000110009")
                        let authenticated = clock.now - begin
                        guard let parameters = ChallengeParameters(record: authentication.record) else {
                            throw ValidationError("no challenge: \(authentication.summary)")
                        }
                        let report = await challenger.run(sdk, parameters: parameters, answers: ChallengeAnswers(["1234"]),
                                                          style: style.channelStyle)
                        guard report.outcome == .completed(.authenticated), report.roundTimes.count == 2 else {
                            throw ValidationError("challenge failed: \(report.outcome)")
                        }
                        steps[0].append(authenticated)
                        steps[1].append(report.roundTimes[0])
                        steps[2].append(report.roundTimes[1])
                    }
                    return steps
                }
            }
            var merged: [[Duration]] = [[], [], []]
            for try await steps in tasks { for index in 0..<3 { merged[index] += steps[index] } }
            return merged
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        func percentile(_ values: [Duration], _ p: Double) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return 0 }
            let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
            return Double(value.components.attoseconds) / 1e15 + Double(value.components.seconds) * 1000
        }
        // transactions/s, then p50 and p99 in ms of: authentication, CReq 1, CReq 2 (with the RReq).
        var fields = [String(format: "%.0f", Double(samples[0].count) / seconds)]
        for step in samples { fields += [String(format: "%.2f", percentile(step, 0.5)), String(format: "%.2f", percentile(step, 0.99))] }
        print(fields.joined(separator: " "))
    }
}

struct BenchSupportCommandOptions: ParsableArguments {
    @Option(name: .long, help: "Test PKI directory.")
    var pki = "certs"
}
