import EMV3DS
import EMVCrypto
import Foundation
import JOSE
import JSON
import SDKSimulator
import Testing

/// A Split-SDK (EMV 3DS 2.3.1, `sdkType` 02): its server signs each transaction (`sdkServerSignedContent`, a JWS with its
/// certificate under the DS CA), and the DS verifies it before anything else of the AReq, answering Erro 308 when it does
/// not verify (EMVCo SB 279 §6.2.2.3-6.2.2.4, Req 390; the error code's text in Table A.4 of the bulletin). The signing
/// certificate is the test PKI's (`certs/<RID>/split-sdk-server-ec.pem`).
@Suite("Split-SDK (2.3.1, sdkType 02)")
struct SplitSDKTests {
    static let card = "4000000000001000"

    func server(_ rid: String = "A000000003") throws -> SplitSDKServer {
        SplitSDKServer(key: try pki.splitSDKServerPrivateKey(rid), chain: [try pki.splitSDKServerCertificate(rid)])
    }

    func authenticate(_ harness: RunningHarness, as server: SplitSDKServer) async throws -> SimulationResult {
        var transaction = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_3_1, style: .android)
        try transaction.signAsSplitSDK(server)
        return try await harness.simulator.authenticate(transaction, pan: Self.card)
    }

    @Test func aSplitSDKWhoseServerSignedItsTransactionIsAuthenticated() async throws {
        try await withHarness { harness in
            let result = try await authenticate(harness, as: try server())
            #expect(result.transStatus == "Y", "\(result.record)")
            let areq = try #require(result.sentAReq)
            #expect(areq["sdkType"]?.stringValue == "02" && areq["splitSdkType"]?["sdkVariant"]?.stringValue == "01" && areq["defaultSdkType"] == nil)
            #expect(try await harness.check("areq.sdk-server-signed-content", of: result.record) == "pass")
        }
    }

    /// A Split-SDK server that signs another transaction, or one whose certificate is not under this DS's CA: Erro 308
    /// from the DS, and the check fails (the party judged is the SDK).
    @Test(arguments: ["wrong-transaction", "untrusted"])
    func signedContentThatDoesNotVouchForTheAReqIsErro308(_ fault: String) async throws {
        try await withHarness { harness in
            var signer = try server(fault == "untrusted" ? "A000000004" : "A000000003")
            signer.signsAnotherTransaction = fault == "wrong-transaction"
            let result = try await authenticate(harness, as: signer)
            #expect(result.state == "error", "\(result.record)")
            #expect(result.record["erro"]?["errorCode"]?.stringValue == "308" && result.record["erro"]?["errorComponent"]?.stringValue == "D", "\(result.record)")
            #expect(result.record["erro"]?["errorDescription"]?.stringValue?.hasPrefix("Signature Verification Failure") == true)
            #expect(try await harness.check("areq.sdk-server-signed-content", of: result.record) == "fail")
        }
    }

    /// A Split-SDK's CReqs are A128GCM only (SB 279 §6.2.4.1): one in A128CBC-HS256 gets Erro 310 (Incorrect Cryptographic
    /// Algorithm, §5.9.5) and fails creq.decrypts; in A128GCM the challenge ends Y.
    @Test(arguments: [(ContentEncryptionAlgorithm.a128gcm, true), (.a128cbcHS256, false)])
    func aSplitSDKsChallengeIsInA128GCM(_ encryption: ContentEncryptionAlgorithm, _ allowed: Bool) async throws {
        try await withHarness { harness in
            var transaction = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_3_1, style: .android)
            try transaction.signAsSplitSDK(try server())
            let run = try await harness.simulator.run(transaction, pan: "4000000000110009", answers: ChallengeAnswers(["1234"]),
                                                      challenger: harness.challenger, style: DeviceDataStyle.android.channelStyle, encryption: encryption)
            if allowed {
                #expect(run.final.transStatus == "Y", "\(run.summary)")
                #expect(try await harness.check("creq.decrypts", of: run.final.record) == "pass")
            } else {
                #expect(run.challenge?.outcome.description.contains("310") == true, "\(run.summary)")
                #expect(try await harness.check("creq.decrypts", of: run.final.record) == "fail")
            }
        }
    }

    /// The payload check on its own: each element the specification names, and its timestamp not ahead of the DS's clock.
    @Test func theSignedContentNamesItsTransactionAndTime() throws {
        let signer = try server()
        let verifier = CertificateVerifier(trustAnchors: [try pki.rootCertificate("A000000003")])
        let signed = try SDKServerSignedContent.sign(sdkReferenceNumber: "3DS_LOA_SDK_X", sdkTransID: UUID().uuidString.lowercased(),
                                                     splitSdkServerID: "S1", key: signer.key, chain: signer.chain)
        let content = try SDKServerSignedContent(verifying: signed, with: verifier)
        #expect(content.splitSdkServerID == "S1" && content.sdkSignatureTimestamp.count == 14)
        #expect(content.mismatch(sdkReferenceNumber: "3DS_LOA_SDK_X", sdkTransID: content.sdkTransID) == nil)
        #expect(content.mismatch(sdkReferenceNumber: "3DS_LOA_SDK_Y", sdkTransID: content.sdkTransID)?.contains("sdkReferenceNumber") == true)
        let ahead = try SDKServerSignedContent.sign(sdkReferenceNumber: "R", sdkTransID: UUID().uuidString.lowercased(), splitSdkServerID: "S1",
                                                    at: Date().addingTimeInterval(3600), key: signer.key, chain: signer.chain)
        #expect(throws: SDKServerSignedContent.Failure.self) { try SDKServerSignedContent(verifying: ahead, with: verifier) }
    }

    /// A Split-SDK/Browser (splitSdkType.sdkVariant 02) opens no OOB app: its CReqs say oobAppURLInd 02 (SB 279, oobAppURLInd:
    /// "If SDK Type = 02 and Split-SDK Type = 02, the OOB App URL Indicator is set to 02"). One that says 01 gets Erro 203 and
    /// fails creq.elements; one that says 02 completes.
    @Test(arguments: [false, true])
    func aSplitSDKBrowserSaysItOpensNoOOBApp(_ claimsOOBApp: Bool) async throws {
        try await withHarness { harness in
            var transaction = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_3_1, style: .android)
            var signer = try server()
            signer.variant = "02"
            try transaction.signAsSplitSDK(signer)
            let challenger = claimsOOBApp ? ChallengeRunner(client: harness.client, trustAnchors: [try pki.rootCertificate("A000000003")],
                                                            misbehaviour: .oobAppURLSupported) : harness.challenger
            let run = try await harness.simulator.run(transaction, pan: "4000000000110009", answers: ChallengeAnswers(["1234"]),
                                                      challenger: challenger, style: DeviceDataStyle.android.channelStyle, encryption: .a128gcm)
            if claimsOOBApp {
                #expect(run.challenge?.outcome.description.contains("203") == true, "\(run.summary)")
                #expect(try await harness.check("creq.elements", of: run.final.record) == "fail")
            } else {
                #expect(run.final.transStatus == "Y", "\(run.summary)")
                #expect(try await harness.check("creq.elements", of: run.final.record) == "pass")
            }
        }
    }

    /// A limited Split-SDK (splitSdkType.limitedInd Y) takes no static passcode (01) or knowledge-based (06) challenge (SB 279,
    /// authenticationMethod: "If SDK Type and Split-SDK Type/Limited Indicator = Y, a value of 01 or 06 is not valid"): a
    /// single-select challenge (06) is answered U with reason 03 (unsupported device); a text one (02) is run.
    @Test(arguments: [("4000000000120008", "U"), ("4000000000110009", "C")])
    func aLimitedSplitSDKGetsNoKnowledgeBasedChallenge(_ card: String, _ status: String) async throws {
        try await withHarness { harness in
            var transaction = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_3_1, style: .android)
            var signer = try server()
            signer.limited = true
            try transaction.signAsSplitSDK(signer)
            let result = try await harness.simulator.authenticate(transaction, pan: card)
            #expect(result.transStatus == status, "\(result.record)")
            if status == "U" { #expect(result.record["transStatusReason"]?.stringValue == "03") }
        }
    }

    /// The rule as the DS and the 3DS Server apply it to an ARes from elsewhere: 01 or 06 for a limited Split-SDK is Erro 203.
    @Test func anAResWithAKnowledgeBasedMethodForALimitedSplitSDKIs203() throws {
        let areq = AReq(json: try appAReq(version: .v2_3_1, replacing: [
            "sdkType": .string("02"), "defaultSdkType": nil, "splitSdkType": .object([("sdkVariant", .string("01")), ("limitedInd", .string("Y"))]),
        ]), version: .v2_3_1)
        let ares = JSONValue.object([("transStatus", .string("C")), ("authenticationMethod", .array([.string("06")]))])
        #expect(areq.answerNotAllowed(ares)?.field == "authenticationMethod")
        #expect(areq.answerNotAllowed(.object([("transStatus", .string("C")), ("authenticationMethod", .array([.string("02")]))])) == nil)
    }
}
