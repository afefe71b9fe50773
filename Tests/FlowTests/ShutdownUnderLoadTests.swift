import EMV3DS
import EventLoops
import Foundation
import Net
import SDKSimulator
import Synchronization
import Testing
import TestSupport
import EMVCrypto
import JOSE

/// SIGTERM while transactions are in flight, round after round: the process must exit 0
/// every time (a heap corruption at shutdown once aborted it about once in ten), and every
/// request it accepted must get its real answer, not a 502 from a role that lost its peer.
@Suite("SIGTERM under load", .serialized)
struct ShutdownUnderLoadTests {
    static let rounds = 4
    static let workers = 24

    @Test func everySIGTERMUnderLoadExitsZeroAndAnswersWhatItAccepted() async throws {
        for round in 1...Self.rounds {
            let serve = try ChildProcess(harnessBinary, ["serve", "--http-port", "0", "--https-port", "0", "--loops", "2",
                                                         "--data-directory", scratchDataDirectory("shutdown-under-load")], directory: repositoryRoot)
            let log = serve.awaitOutput { $0.contains("listening") ? $0 : nil } ?? ""
            guard let range = log.range(of: "http=127.0.0.1:"), let port = Int(log[range.upperBound...].prefix { $0.isNumber }) else {
                Issue.record("round \(round): no listening line: \(serve.output)")
                return
            }
            let group = EventLoopGroup(loopCount: 1)
            let client = try HTTPClient(group: group, configuration: HTTPClientConfiguration(readTimeoutMilliseconds: 20_000))
            let simulator = Simulator(client: client, baseURL: "http://127.0.0.1:\(port)")
            let challenger = ChallengeRunner(client: client, trustAnchors: [try pki.rootCertificate("A000000003")])
            let directory = try directoryServer("A000000003", .android)
            let tally = Tally()

            await withTaskGroup(of: Void.self) { workers in
                for worker in 0..<Self.workers {
                    workers.addTask {
                        // Frictionless and challenge transactions, until the server is gone.
                        while let sdk = try? SimulatedSDKTransaction(directoryServer: directory, messageVersion: .v2_2_0, style: .android) {
                            let challenge = worker % 2 == 1
                            // Before the signal a failure (an answer late on a loaded machine) is tried again; after it, the server is going.
                            let result: SimulationResult
                            do { result = try await simulator.authenticate(sdk, pan: challenge ? "4000000000110009" : "4000000000001000") } catch {
                                if tally.state.withLock({ $0.signalled }) { return }
                                tally.state.withLock { $0.lastFailure = "\(error)" }
                                try? await Task.sleep(for: .milliseconds(50))
                                continue
                            }
                            if result.state == "error" { tally.state.withLock { $0.failedAnswers.append(result.summary) } }
                            if challenge, let parameters = ChallengeParameters(record: result.record) {
                                _ = await challenger.run(sdk, parameters: parameters, answers: ChallengeAnswers(["1234"]), style: .android)
                            }
                            tally.state.withLock { $0.completed += 1 }
                        }
                    }
                }
                // The signal comes once the load is established, with every worker mid-transaction (within 5 minutes, however loaded the machine: a harness
                // that answers nothing fails the test, it does not hang it).
                let established = ContinuousClock.now + .seconds(300)
                while tally.state.withLock({ $0.completed }) < 2 * Self.workers, ContinuousClock.now < established {
                    try? await Task.sleep(nanoseconds: 5_000_000)
                }
                #expect(tally.state.withLock { $0.completed } >= 2 * Self.workers,
                        "round \(round): the load never got going: \(tally.state.withLock { $0.lastFailure ?? "no failure" })\n\(serve.output.suffix(2000))")
                tally.state.withLock { $0.signalled = true }
                serve.signal(SIGTERM)
            }
            let status = serve.wait(timeout: 60)
            #expect(status == 0, "round \(round): exit \(status)\n\(serve.output.suffix(3000))")
            let failed = tally.state.withLock { $0.failedAnswers }
            #expect(failed.isEmpty, "round \(round): answers that failed inside the harness: \(failed.prefix(3))")
            group.shutdown()
        }
    }
}

private final class Tally: Sendable {
    let state = Mutex((completed: 0, failedAnswers: [String](), signalled: false, lastFailure: String?.none))
}
