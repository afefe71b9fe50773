import EMV3DS
public import EMVCrypto
import EventLoops
import Foundation
import JOSE
import Net
import SDKSimulator

/// Full app challenges against a running harness (authentication, two CReq/CRes rounds, the RReq behind the last one) at a
/// fixed concurrency, for a while.
public struct ChallengeLoad: Sendable {
    public let url: String
    public let pki: String
    public let concurrency: Int
    public let seconds: Double
    public let style: DeviceDataStyle

    public init(url: String, pki: String, concurrency: Int, seconds: Double, style: DeviceDataStyle) {
        self.url = url
        self.pki = pki
        self.concurrency = concurrency
        self.seconds = seconds
        self.style = style
    }

    /// What a load measured: transactions per second, and each step's times.
    public struct Result: Sendable {
        public let transactionsPerSecond: Double
        /// Authentication, CReq 1, CReq 2 (with the RReq).
        public let steps: [[Duration]]

        /// Transactions per second, then p50 and p99 in milliseconds of each step: what `bench/run` reads.
        public var line: String {
            var fields = [String(format: "%.0f", transactionsPerSecond)]
            for step in steps { fields += [String(format: "%.2f", Self.percentile(step, 0.5)), String(format: "%.2f", Self.percentile(step, 0.99))] }
            return fields.joined(separator: " ")
        }

        static func percentile(_ values: [Duration], _ p: Double) -> Double {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return 0 }
            let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
            return Double(value.components.attoseconds) / 1e15 + Double(value.components.seconds) * 1000
        }
    }

    public func run() async throws -> Result {
        let pki = TestPKI(directory: self.pki)
        let group = EventLoopGroup(loopCount: 1)
        defer { group.shutdown() }
        let client = try HTTPClient(group: group, configuration: HTTPClientConfiguration(
            tls: TLSConfiguration(trustRootsFile: self.pki + "/tls/root-ca.pem"), maxIdleConnectionsPerEndpoint: concurrency))
        let simulator = Simulator(client: client, baseURL: url)
        let rid = BenchTransaction.directoryServerID
        let challenger = ChallengeRunner(client: client, trustAnchors: [try pki.rootCertificate(rid)])
        let directoryServer = SDKDirectoryServer(rid: rid, certificate: try pki.dsCertificate(rid, style.keyVariant))
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(seconds)
        let start = clock.now
        let style = style
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
                            throw BenchError("no challenge: \(authentication.summary)")
                        }
                        let report = await challenger.run(sdk, parameters: parameters, answers: ChallengeAnswers(["1234"]), style: style.channelStyle)
                        guard report.outcome == .completed(.authenticated), report.roundTimes.count == 2 else {
                            throw BenchError("challenge failed: \(report.outcome)")
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
        return Result(transactionsPerSecond: Double(samples[0].count) / seconds, steps: samples)
    }
}
