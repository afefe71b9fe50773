import EMV3DS
import EMVCrypto
import Foundation
import JSON
import Net
import SDKSimulator
import Testing

/// 2.3.1's information beside an outcome, scripted per scenario (`outcomeFields`): the ARes carries the device binding
/// and trust list statuses with the ACS as their source (03), `cardholderInfo` as 2.3.1's object, `broadInfo` and
/// `transStatusReasonInfo`; the 3DS Server's record shows them; 2.1.0 and 2.2.0 ARes leave them out. Values from EMVCo
/// SB 279 (deviceBindingStatus 11 "bound using hardware/SIM internal to the device"; trustListStatus Y).
@Suite("2.3.1 outcome fields of a scenario")
struct OutcomeFieldsTests {
    static let card = "4000000000820003"

    @Test(arguments: MessageVersion.allCases)
    func theARes231CarriesWhatTheScenarioSaysBesideTheOutcome(_ version: MessageVersion) async throws {
        try await withHarness { harness in
            let transaction = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: version, style: .android)
            let result = try await harness.simulator.authenticate(transaction, pan: Self.card)
            #expect(result.transStatus == "Y", "\(result.record)")
            let ares = try #require(SimulationResult(record: result.record).messages("received", "ARes").first)
            guard version == .v2_3_1 else {
                #expect(ares["deviceBindingStatus"] == nil && ares["broadInfo"] == nil && ares["cardholderInfo"] == nil, "\(ares)")
                return
            }
            #expect(ares["deviceBindingStatus"]?.stringValue == "11" && ares["deviceBindingStatusSource"]?.stringValue == "03")
            #expect(ares["trustListStatus"]?.stringValue == "Y" && ares["trustListStatusSource"]?.stringValue == "03")
            #expect(ares["cardholderInfo"]?["text"]?.stringValue == "Paid with your bound device. No further step needed.")
            #expect(ares["broadInfo"]?["recipients"] == .array([.string("02")]))
            #expect(result.record["deviceBindingStatus"]?.stringValue == "11" && result.record["trustListStatus"]?.stringValue == "Y")
            #expect(result.record["cardholderInfo"]?.stringValue?.hasPrefix("Paid with") == true)
            #expect(result.record["broadInfo"]?["severity"]?.stringValue == "04")
        }
    }

    /// After a challenge the RReq is the outcome: it repeats the scenario's outcome fields (SB 279 gives the RReq
    /// deviceBindingStatus, trustListStatus and cardholderInfo as the ARes has them), and the 3DS Server's record shows the RReq's.
    @Test func theRReqAfterAChallengeCarriesThemToo() async throws {
        try await withHarness { harness in
            let card = "4000000000001000"
            let pin = JSONValue.object([("pan", .string(card)), ("scenario", .object([
                ("name", .string("bound-after-challenge")), ("description", .string("A text challenge that binds the device.")),
                ("challenge", .object([("steps", .array([.object([("uiType", .string("text")), ("header", .string("Verify")), ("label", .string("Code")), ("text", .string("Code 1234.")), ("answer", .string("1234"))])]))])),
                ("outcomeFields", .object([("deviceBindingStatus", .string("12")), ("cardholderInfo", .string("This device is now bound.")),
                                           ("broadInfo", .object([("category", .string("01")), ("recipients", .array([.string("02")])),
                                                                  ("severity", .string("04")), ("source", .string("03"))]))])),
            ]))])
            let pinned = try await harness.post("/admin/pins", JSONWriter.write(pin))
            #expect(pinned.status.code == 201, "\(pinned.bodyText)")
            let transaction = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_3_1, style: .android)
            let run = try await harness.simulator.run(transaction, pan: card, answers: ChallengeAnswers(["1234"]), challenger: harness.challenger,
                                                      style: DeviceDataStyle.android.channelStyle)
            #expect(run.final.transStatus == "Y", "\(run.final.record)")
            let rreq = try #require(SimulationResult(record: run.final.record).messages("received", "RReq").first)
            #expect(rreq["deviceBindingStatus"]?.stringValue == "12" && rreq["deviceBindingStatusSource"]?.stringValue == "03", "\(rreq)")
            #expect(rreq["cardholderInfo"]?["text"]?.stringValue == "This device is now bound.")
            #expect(run.final.record["deviceBindingStatus"]?.stringValue == "12")
            // broadInfo is the ARes's alone (SB 279 gives it no place in the RReq): left out there, kept in the record from the ARes.
            #expect(rreq["broadInfo"] == nil && run.final.record["broadInfo"]?["severity"]?.stringValue == "04")
        }
    }
}
