@testable import EMV3DS
import EMVCrypto
import Foundation
import JOSE
import JSON
import Net
import SDKSimulator
import Testing

/// The default challenge scenarios: (name, PAN, the answers that pass).
let challengeScenarios: [(String, String, [String])] = [
    ("challenge-text", "4000000000110009", ["1234"]),
    ("challenge-single-select", "4000000000120008", ["2"]),
    ("challenge-multi-select", "4000000000130007", ["4,2"]),
    ("challenge-oob", "4000000000140006", ["continue"]),
    ("challenge-html", "4000000000150005", ["1234"]),
    ("challenge-whitelisting", "4000000000160004", ["1234"]),
    ("challenge-two-steps", "4000000000170003", ["1", "1234"]),
    ("challenge-information", "4000000000180002", ["continue"]),
]

extension DeviceDataStyle {
    /// Android SDKs encrypt device data with `dir`; the simulator pairs each style with its platform's channel.
    var channel: ChannelStyle { self == .android ? .android : .ios }
}

/// Runs one transaction with the simulator's SDK.
func runTransaction(_ harness: RunningHarness, pan: String, version: MessageVersion = .v2_2_0, style: DeviceDataStyle = .android,
                    answers: [String], whitelisting: String? = nil, encryption: ContentEncryptionAlgorithm = .a128cbcHS256,
                    challenger: ChallengeRunner? = nil) async throws -> TransactionRun {
    let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", style), messageVersion: version, style: style)
    return try await harness.simulator.run(sdk, pan: pan, answers: ChallengeAnswers(answers, whitelisting: whitelisting),
                                           challenger: challenger ?? harness.challenger, style: style.channel, encryption: encryption)
}

@Suite("Challenge flow: ARes C, secure channel, RReq through the DS")
struct ChallengeFlowTests {
    @Test(arguments: FlowCase.all)
    func everyChallengeScenarioPasses(_ flow: FlowCase) async throws {
        try await withHarness { harness in
            for (name, pan, answers) in challengeScenarios {
                let run = try await runTransaction(harness, pan: pan, version: flow.version, style: flow.style, answers: answers)
                #expect(run.authentication.transStatus == "C", "\(name): \(run.authentication.summary)")
                let report = try #require(run.challenge, "\(name)")
                #expect(report.outcome == .completed(.authenticated), "\(name): \(run.summary)")
                #expect(run.final.state == "completed", "\(name): \(run.summary)")
                #expect(run.final.transStatus == "Y", "\(name)")
                #expect(run.final.eci == "05", "\(name)")
                #expect(run.final.authenticationValue?.count == 28, "\(name)")
                let trail = run.final.record["messages"].flatMap { message -> [String]? in
                    guard case .array(let items) = message else { return nil }
                    return items.compactMap { $0["message"]?["messageType"]?.stringValue }
                }
                #expect(trail == ["AReq", "ARes", "RReq", "RRes"], "\(name)")
                // Every screen is one this version knows.
                for screen in report.screens { #expect(screen.uiType.since <= flow.version, "\(name): \(screen.uiType)") }
            }
        }
    }
}
