import EMV3DS
import EMVCrypto
import JSON
import Net
import SDKSimulator
import Testing
import TestSupport

/// A CReq the channel key does not open is Erro 302 and fails `creq.decrypts`. The ACS then tries the derivations SDKs
/// get wrong and the channels of its latest challenges, and the check says which input was off: a team reads "derived
/// without the sdkReferenceNumber", not only "cannot be decrypted". A correct SDK's CReqs open (every challenge flow).
@Suite("A CReq under a wrong channel key names the input that was off")
struct ChannelKeyFlowTests {
    static let textChallenge = "4000000000110009"

    /// The `creq.decrypts` check of the transaction `run` made, as the inspector shows it.
    func decryptionCheck(_ harness: RunningHarness, _ run: TransactionRun) async throws -> (verdict: String?, detail: String) {
        let dsTransID = try #require(run.final.record["dsTransID"]?.stringValue, "\(run.summary)")
        let entry = try JSONReader.parse(try await harness.get("/inspector/transactions/\(dsTransID)").body).value
        let check = entry["checks"]?.arrayValue?.first { $0["id"]?.stringValue == "creq.decrypts" }
        return (check?["verdict"]?.stringValue, check?["detail"]?.stringValue ?? JSONWriter.string(entry["checks"] ?? .null))
    }

    @Test func anSDKThatLeavesTheReferenceNumberOutOfTheKeyIsToldSo() async throws {
        try await withHarness { harness in
            let run = try await runTransaction(harness, pan: Self.textChallenge, answers: ["1234"], challenger: harness.challenger(misbehaving: .kdfWithoutReference))
            guard case .protocolError? = run.challenge?.outcome else { Issue.record("\(run.summary)"); return }
            let check = try await decryptionCheck(harness, run)
            #expect(check.verdict == "fail" && check.detail.contains("without the sdkReferenceNumber"), "\(check)")
        }
    }

    /// The first challenge's CReqs open; the second's, sealed with the first one's key, name that challenge.
    @Test func anSDKThatKeepsAnEarlierChallengesKeyIsToldWhichChallenge() async throws {
        try await withHarness { harness in
            let stale = harness.challenger(misbehaving: .staleChannelKey)
            let first = try await runTransaction(harness, pan: Self.textChallenge, answers: ["1234"], challenger: stale)
            #expect(first.final.transStatus == "Y", "\(first.summary)")
            #expect(try await decryptionCheck(harness, first).verdict == "pass")
            let earlier = try #require(first.final.record["acsTransID"]?.stringValue)
            let second = try await runTransaction(harness, pan: Self.textChallenge, answers: ["1234"], challenger: stale)
            let check = try await decryptionCheck(harness, second)
            #expect(check.verdict == "fail" && check.detail.contains("another challenge (acsTransID \(earlier))"), "\(check)")
        }
    }
}
