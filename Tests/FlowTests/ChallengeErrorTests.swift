@testable import EMV3DS
import EMVCrypto
import Foundation
import JOSE
import JSON
import Net
@testable import SDKSimulator
import Testing

/// A challenge driven by hand: the SDK's channel, so a test can send any CReq.
struct OpenChallenge {
    let harness: RunningHarness
    let sdk: SimulatedSDKTransaction
    let parameters: ChallengeParameters
    let channel: SecureChannel
    let acsURL: String

    init(_ harness: RunningHarness, version: MessageVersion = .v2_2_0, pan: String = "4000000000110009") async throws {
        self.harness = harness
        sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: version, style: .android)
        let started = try await harness.simulator.authenticate(sdk, pan: pan)
        parameters = try #require(ChallengeParameters(record: started.record))
        let content = try AcsSignedContent(verifying: parameters.acsSignedContent,
                                           with: CertificateVerifier(trustAnchors: [try pki.rootCertificate("A000000003")]))
        channel = try SecureChannel(privateKey: sdk.ephemeralKey, peerPublicKey: content.acsEphemPubKey,
                                    sdkReferenceNumber: SimulatedSDKTransaction.sdkReferenceNumber)
        acsURL = content.acsURL
    }

    func creq(_ counter: Int, _ action: CReq.Action = .none) -> CReq {
        CReq(messageVersion: sdk.messageVersion, threeDSServerTransID: parameters.threeDSServerTransID, acsTransID: parameters.acsTransID,
             sdkTransID: sdk.sdkTransID, counter: counter, action: action)
    }

    func seal(_ json: JSONValue, kid: String? = nil) throws -> String {
        try channel.seal(JSONWriter.write(json), encryption: .a128cbcHS256, kid: kid ?? parameters.acsTransID, direction: .sdkToACS)
    }

    func post(_ body: String, contentType: String = "application/jose; charset=UTF-8") async throws -> HTTPResponse {
        try await harness.client.post(acsURL, body: Array(body.utf8), contentType: contentType)
    }

    /// Posts a CReq and expects an Erro back: returns it.
    func expectErro(_ body: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ErroMessage {
        let response = try await post(body)
        #expect(response.headers.mediaType == "application/json", sourceLocation: sourceLocation)
        return try ErroMessage(json: try JSONReader.parse(response.body).value)
    }

    /// The CRes to a CReq that must succeed.
    func exchange(_ creq: CReq) async throws -> CRes {
        let response = try await post(try seal(creq.json))
        #expect(response.headers.mediaType == "application/jose")
        return try CRes(bytes: try channel.open(response.bodyText, direction: .acsToSDK).plaintext)
    }

    /// The verdict and detail of the check `id` in the transaction's journal entry, as a run grades it.
    func check(_ id: String) async throws -> (verdict: String?, detail: String?) {
        let list = try JSONReader.parse(try await harness.get("/inspector/transactions?limit=50").body).value
        let summary = list["transactions"]?.arrayValue?.first { $0["threeDSServerTransID"]?.stringValue == parameters.threeDSServerTransID }
        let dsTransID = try #require(summary?["dsTransID"]?.stringValue)
        let entry = try JSONReader.parse(try await harness.get("/inspector/transactions/\(dsTransID)").body).value
        let result = entry["checks"]?.arrayValue?.first { $0["id"]?.stringValue == id }
        return (result?["verdict"]?.stringValue, result?["detail"]?.stringValue)
    }

    /// The transaction ended, and the 3DS Server got an RReq saying so.
    func expectEnded(transStatus: String = "U", cancel: String = "06", sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let final = try await harness.simulator.awaitResult(parameters.threeDSServerTransID, limit: .seconds(10))
        #expect(final.state == "completed", sourceLocation: sourceLocation)
        #expect(final.transStatus == transStatus, sourceLocation: sourceLocation)
        #expect(final.record["challengeCancel"]?.stringValue == cancel, sourceLocation: sourceLocation)
        let acs = try JSONReader.parse(try await harness.get("/admin/acs/transactions/\(parameters.acsTransID)").body).value
        #expect(acs["phase"]?.stringValue == "ended", sourceLocation: sourceLocation)
    }
}

/// Replaces the character at `index` of a base64url part with another alphabet character.
func tamper(_ compact: String, part: Int) -> String {
    var parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    if parts[part].isEmpty {
        parts[part] = "AAAA"
    } else {
        var characters = Array(parts[part])
        let index = characters.count / 2
        characters[index] = characters[index] == "A" ? "B" : "A"
        parts[part] = String(characters)
    }
    return parts.joined(separator: ".")
}

@Suite("Challenge errors: what the ACS answers a bad CReq, and that the transaction ends")
struct ChallengeErrorTests {
    @Test(arguments: [1, 2, 3, 4])
    func tamperedJWEPartIs302(_ part: Int) async throws {
        try await withHarness { harness in
            let challenge = try await OpenChallenge(harness)
            let erro = try await challenge.expectErro(tamper(try challenge.seal(challenge.creq(0).json), part: part))
            #expect(erro.errorCode == .dataDecryptionFailure)
            #expect(erro.errorComponent == .acs)
            #expect(erro.acsTransID == challenge.parameters.acsTransID)
            #expect(erro.errorMessageType == "CReq")
            try await challenge.expectEnded()
            // Graded as the SDK's failure, not only answered.
            #expect(try await challenge.check("creq.decrypts").verdict == "fail")
        }
    }

    /// `oobContinue` answers an out-of-band screen and no other (Annex A: oobContinue, "after an OOB screen"): an SDK that
    /// sends it on a text screen fails `creq.oob-continue`; the same screen answered with its code passes it.
    @Test func oobContinueOnATextScreenFailsOOBContinuation() async throws {
        try await withHarness { harness in
            let wrong = try await OpenChallenge(harness)
            let first = try await wrong.exchange(wrong.creq(0))
            guard case .screen(let screen) = first.content else {
                Issue.record("no first screen: \(first.json)")
                return
            }
            #expect(screen.uiType == .text)
            _ = try await wrong.exchange(wrong.creq(1, .oobContinue))
            let (verdict, detail) = try await wrong.check("creq.oob-continue")
            #expect(verdict == "fail" && detail?.contains("acsUiType 01") == true, "\(detail ?? "none")")
            let right = try await OpenChallenge(harness)
            _ = try await right.exchange(right.creq(0))
            _ = try await right.exchange(right.creq(1, .dataEntry("1234")))
            #expect(try await right.check("creq.oob-continue").verdict != "fail")
        }
    }

    @Test func tamperedHeader() async throws {
        try await withHarness { harness in
            let challenge = try await OpenChallenge(harness)
            let sealed = try challenge.seal(challenge.creq(0).json)
            // A header that still reads, with a member added: the authentication tag covers it.
            var parts = sealed.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let header = #"{"kid":"\#(challenge.parameters.acsTransID)","enc":"A128CBC-HS256","alg":"dir","x":"1"}"#
            parts[0] = Base64URL.encode(header)
            #expect(try await challenge.expectErro(parts.joined(separator: ".")).errorCode == .dataDecryptionFailure)
            try await challenge.expectEnded()
            // A header that does not read names no transaction: 302, no ids to echo.
            let garbled = try await challenge.expectErro(tamper(sealed, part: 0))
            #expect(garbled.errorCode == .dataDecryptionFailure)
        }
    }

    @Test func replayedAndSkippedCounters() async throws {
        try await withHarness { harness in
            let challenge = try await OpenChallenge(harness)
            let first = try await challenge.exchange(challenge.creq(0))
            #expect(first.counter == 0)
            let replay = try await challenge.expectErro(try challenge.seal(challenge.creq(0).json))
            #expect(replay.errorCode == .dataDecryptionFailure)
            #expect(replay.errorDetail == "sdkCounterStoA")
            try await challenge.expectEnded()

            let other = try await OpenChallenge(harness)
            _ = try await other.exchange(other.creq(0))
            #expect(try await other.expectErro(try other.seal(other.creq(2, .dataEntry("1234")).json)).errorCode == .dataDecryptionFailure)
            try await other.expectEnded()
        }
    }

    @Test func unknownKidIs301() async throws {
        try await withHarness { harness in
            let challenge = try await OpenChallenge(harness)
            let erro = try await challenge.expectErro(try challenge.seal(challenge.creq(0).json, kid: UUID().uuidString.lowercased()))
            #expect(erro.errorCode == .transactionIDNotRecognised)
            #expect(erro.errorDetail == "kid")
            // The real transaction is untouched.
            #expect(try await challenge.exchange(challenge.creq(0)).isFinal == false)
        }
    }

    @Test(arguments: ["threeDSServerTransID", "acsTransID", "sdkTransID"])
    func wrongIDIs301(_ field: String) async throws {
        try await withHarness { harness in
            let challenge = try await OpenChallenge(harness)
            var json = challenge.creq(0).json
            json.set(field, .string(UUID().uuidString.lowercased()))
            let erro = try await challenge.expectErro(try challenge.seal(json))
            #expect(erro.errorCode == .transactionIDNotRecognised)
            #expect(erro.errorDetail == field)
            #expect(erro.acsTransID == challenge.parameters.acsTransID)
            try await challenge.expectEnded()
            #expect(try await challenge.check("creq.ids").verdict == "fail")
        }
    }

    @Test func versionChangeIs102() async throws {
        try await withHarness { harness in
            let challenge = try await OpenChallenge(harness, version: .v2_2_0)
            _ = try await challenge.exchange(challenge.creq(0))
            var json = challenge.creq(1, .dataEntry("1234")).json
            json.set("messageVersion", .string("2.1.0"))
            let erro = try await challenge.expectErro(try challenge.seal(json))
            #expect(erro.errorCode == .versionNotSupported)
            #expect(erro.messageVersion == "2.2.0")
            try await challenge.expectEnded()
        }
    }

    @Test func fieldErrors() async throws {
        try await withHarness { harness in
            let missing = try await OpenChallenge(harness)
            var json = missing.creq(0).json
            json.set("sdkCounterStoA", nil)
            let erro201 = try await missing.expectErro(try missing.seal(json))
            #expect(erro201.errorCode == .requiredElementMissing)
            #expect(erro201.errorDetail == "sdkCounterStoA")
            try await missing.expectEnded()
            #expect(try await missing.check("creq.elements").verdict == "fail")

            let empty = try await OpenChallenge(harness)
            _ = try await empty.exchange(empty.creq(0))
            var entry = empty.creq(1).json
            entry.set("challengeDataEntry", .string(""))
            let erro203 = try await empty.expectErro(try empty.seal(entry))
            #expect(erro203.errorCode == .formatInvalid)
            #expect(erro203.errorDetail == "challengeDataEntry")
            try await empty.expectEnded()

            // 10 (an Erro about a CReq) is a 2.3.1 cancel code.
            let old = try await OpenChallenge(harness, version: .v2_1_0)
            #expect(try await old.expectErro(try old.seal(old.creq(0, .cancel(.erroToSDK)).json)).errorCode == .formatInvalid)
        }
    }

    @Test func creqAfterTheEndIs301() async throws {
        try await withHarness { harness in
            let challenge = try await OpenChallenge(harness)
            _ = try await challenge.exchange(challenge.creq(0))
            let final = try await challenge.exchange(challenge.creq(1, .dataEntry("1234")))
            #expect(final.content == .final(.authenticated))
            let late = try await challenge.expectErro(try challenge.seal(challenge.creq(2, .dataEntry("1234")).json))
            #expect(late.errorCode == .transactionIDNotRecognised)
            #expect(late.errorDescription.contains("ended"))
            // A CReq after the final CRes fails the SDK's challenge.end (it passed when the challenge completed).
            let graded = try await challenge.check("challenge.end")
            #expect(graded.verdict == "fail" && graded.detail?.contains("the challenge has ended (challenge completed): no CReq is due") == true, "\(graded)")
            // The result stays what the challenge decided.
            let record = try await harness.simulator.record(challenge.parameters.threeDSServerTransID)
            #expect(record.transStatus == "Y")
        }
    }

    @Test func plainJSONCReqIs101() async throws {
        try await withHarness { harness in
            let challenge = try await OpenChallenge(harness)
            let response = try await challenge.post(JSONWriter.string(challenge.creq(0).json), contentType: "application/json")
            #expect(try ErroMessage(json: try JSONReader.parse(response.body).value).errorCode == .messageNotRecognised)
            #expect(try ErroMessage(json: try JSONReader.parse(try await challenge.post("not a jwe").body).value).errorCode == .messageNotRecognised)
        }
    }

    @Test(arguments: ["application/json", "application/jose; charset=UTF-8"])
    func sdkErroEndsTheChallenge(_ contentType: String) async throws {
        try await withHarness { harness in
            let challenge = try await OpenChallenge(harness)
            _ = try await challenge.exchange(challenge.creq(0))
            let erro = ErroMessage(messageVersion: "2.2.0", errorCode: .dataDecryptionFailure, errorComponent: .sdk, errorDetail: "CRes",
                                   errorMessageType: "CRes", threeDSServerTransID: challenge.parameters.threeDSServerTransID,
                                   acsTransID: challenge.parameters.acsTransID, sdkTransID: challenge.sdk.sdkTransID)
            let response = try await challenge.post(JSONWriter.string(erro.json), contentType: contentType)
            #expect(response.status.code == 200)
            #expect(response.body.isEmpty)
            try await challenge.expectEnded()

            // The SDK's timeout (402) is reported as 08 from 2.2.0.
            let slow = try await OpenChallenge(harness)
            var timeout = erro
            timeout.errorCode = .transactionTimedOut
            timeout.acsTransID = slow.parameters.acsTransID
            _ = try await slow.post(JSONWriter.string(timeout.json), contentType: contentType)
            try await slow.expectEnded(transStatus: "N", cancel: "08")
        }
    }
}
