import EMV3DS
import Foundation
import JSON
import Net
import SDKSimulator
import Synchronization
import Testing
import Store

/// `challenge.sdk-timeout`: an SDK ends a challenge the cardholder has not finished within the AReq's
/// sdkMaxTimeout (05 minutes here) with Erro 402 and sends no CReq after it. The ACS reads a clock that
/// jumps six minutes at each reading: to it, a cardholder who takes six minutes over each screen.
@Suite("The SDK's challenge timeout against sdkMaxTimeout")
struct SDKTimeoutTests {
    static func jumpingClock() -> @Sendable () -> ContinuousClock.Instant {
        let readings = Mutex(0)
        let start = ContinuousClock.now
        return { start + .seconds(360 * readings.withLock { count in count += 1; return count }) }
    }

    func checks(_ harness: RunningHarness, _ dsTransID: String) async throws -> [String: (verdict: String, detail: String)] {
        try await harness.checkVerdicts(dsTransID)
    }

    @Test func anSDKThatKeepsSendingCReqsPastSDKMaxTimeoutFails() async throws {
        try await withHarness(clock: HarnessClock(instant: Self.jumpingClock())) { harness in
            let run = try await runTransaction(harness, pan: "4000000000110009", answers: ["1234"])
            let dsTransID = try #require(run.final.record["dsTransID"]?.stringValue)
            let found = try await checks(harness, dsTransID)
            #expect(found["challenge.sdk-timeout"]?.verdict == "fail", "\(found)")
            #expect(found["challenge.sdk-timeout"]?.detail.contains("past the AReq's sdkMaxTimeout 5 min") == true)
        }
    }

    @Test func anSDKThatTimesOutWithErro402AtSDKMaxTimeoutPasses() async throws {
        try await withHarness(clock: HarnessClock(instant: Self.jumpingClock())) { harness in
            let ares = try await harness.postMessage("/ds/areq", try appAReq(pan: "4000000000110009"))
            #expect(ares["transStatus"]?.stringValue == "C", "\(JSONWriter.string(ares))")
            let dsTransID = try #require(ares["dsTransID"]?.stringValue)
            var erro = ErroMessage(messageVersion: "2.2.0", errorCode: .transactionTimedOut, errorComponent: .sdk, errorDetail: "timeout",
                                   errorMessageType: MessageType.cRes.rawValue, threeDSServerTransID: ares["threeDSServerTransID"]?.stringValue,
                                   acsTransID: ares["acsTransID"]?.stringValue, sdkTransID: ares["sdkTransID"]?.stringValue)
            erro.explain("the challenge timed out")
            let answer = try await harness.post("/acs/challenge", JSONWriter.write(erro.json))
            #expect(answer.status == .ok, "\(answer.bodyText)")
            let found = try await checks(harness, dsTransID)
            #expect(found["challenge.sdk-timeout"]?.verdict == "pass", "\(found)")
            #expect(found["sdk.erro"]?.verdict == "pass" && found["challenge.end"]?.verdict == "pass", "\(found)")
        }
    }

    /// An Erro 402 long before sdkMaxTimeout is not the challenge timeout: without a late CRes to excuse it, sdk.erro fails.
    @Test func anErro402BeforeSDKMaxTimeoutIsNotTheTimeout() async throws {
        try await withHarness { harness in
            let ares = try await harness.postMessage("/ds/areq", try appAReq(pan: "4000000000110009"))
            let dsTransID = try #require(ares["dsTransID"]?.stringValue)
            let erro = ErroMessage(messageVersion: "2.2.0", errorCode: .transactionTimedOut, errorComponent: .sdk, errorDetail: "timeout",
                                   errorMessageType: MessageType.cRes.rawValue, threeDSServerTransID: ares["threeDSServerTransID"]?.stringValue,
                                   acsTransID: ares["acsTransID"]?.stringValue, sdkTransID: ares["sdkTransID"]?.stringValue)
            _ = try await harness.post("/acs/challenge", JSONWriter.write(erro.json))
            let found = try await checks(harness, dsTransID)
            #expect(found["challenge.sdk-timeout"] == nil && found["sdk.erro"]?.verdict == "fail", "\(found)")
        }
    }
}
