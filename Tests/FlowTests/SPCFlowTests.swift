import Configuration
import EMV3DS
import EMVCrypto
import Foundation
import Harness
import JOSE
import JSON
import Net
import SDKSimulator
import Testing
import ThreeDSServer

/// Secure Payment Confirmation (EMV 3DS 2.3.1, browser) end to end over HTTP, with the software authenticator in
/// the browser's place: the issuer's enrolment, the ARes S, and the second AReq with the assertion or spcIncompInd.
/// The flow's fields are from EMVCo's SB 279 (the 2.3.1 changes; docs/spc.md); RealBrowserSPCTests runs it in Chromium.
@Suite("Secure Payment Confirmation (2.3.1, browser)")
struct SPCFlowTests {
    static let card = "4000000000810004", payeeOrigin = "https://merchant.example"

    @Test func anEnrolledCardGetsAResSAndAnAssertionThatVerifiesEndsY() async throws {
        try await withHarness { harness in
            let authenticator = try await enrol(harness)
            let first = try await authenticate(harness)
            #expect(first["transStatus"]?.stringValue == "S", "\(first)")
            #expect(first["state"]?.stringValue == "spc")
            let spc = try #require(first["spc"], "\(first)")
            let data = try #require(spc["spcTransData"])
            #expect(data["payeeOrigin"]?.stringValue == Self.payeeOrigin)
            #expect(data["currency"]?.stringValue == "EUR" && data["value"]?.stringValue == "12.34", "\(data)")
            #expect(spc["webAuthnCredList"]?.arrayValue?.first?["credentialIds"]?.stringValue == Base64URL.encode(authenticator.credentialID))

            let second = try await post(harness, first, assertion: try sign(authenticator, harness, spc))
            #expect(second["transStatus"]?.stringValue == "Y", "\(second)")
            #expect(second["authenticationValue"]?.stringValue?.count == 28)
            let areq = try #require(sentAReq(second))
            #expect(areq["threeDSRequestorPriorAuthenticationInfo"]?.arrayValue?.first?["threeDSReqPriorRef"] == first["acsTransID"])
            #expect(areq["threeDSRequestorAuthenticationInfo"]?.arrayValue?.first?["threeDSReqAuthMethod"]?.stringValue == "09")
            #expect(try await check(harness, second) == "pass")
            // Nothing else of the second AReq fails: its 3DS Method was the first's, graded there.
            let checks = try await harness.checks(of: second)
            #expect(!checks.isEmpty && checks.allSatisfy { $0.verdict != "fail" }, "\(checks)")
            // The first transaction shows what followed it, and takes no second result.
            let followed = try JSONReader.parse(try await harness.get("/3ds-server/transactions/\(first["threeDSServerTransID"]?.stringValue ?? "")").body).value
            #expect(followed["spc"]?["followedBy"] == second["threeDSServerTransID"])
            let again = try await harness.post(resultPath(first), JSONWriter.write(.object([("spcIncompInd", .string("01"))])))
            #expect(again.status == .conflict, "\(again.bodyText)")
        }
    }

    /// A 3DS Server that spoils the assertion (here: signed for another challenge, as a page that reuses an old one)
    /// fails `areq.spc`, and the ACS answers N/01.
    @Test func anAssertionThatDoesNotVerifyEndsNAndFailsTheCheck() async throws {
        try await withHarness { harness in
            let authenticator = try await enrol(harness)
            let first = try await authenticate(harness)
            var spc = try #require(first["spc"])
            var data = try #require(spc["spcTransData"])
            data.set("challenge", .string(Base64URL.encode(randomBytes(32))))
            spc.set("spcTransData", data)
            let second = try await post(harness, first, assertion: try sign(authenticator, harness, spc))
            #expect(second["transStatus"]?.stringValue == "N", "\(second)")
            #expect(second["transStatusReason"]?.stringValue == "01")
            #expect(try await check(harness, second) == "fail")
        }
    }

    /// A 3DS Server that changes the purchase between the two AReqs (here: a bigger amount than the cardholder confirmed)
    /// gets N/01 and fails `areq.spc`; the same second AReq sent again (under a new threeDSServerTransID) finds the ARes S
    /// answered: never Y twice.
    @Test func aSecondAReqMustBeTheFirstsPurchaseAndComesOnce() async throws {
        try await withHarness { harness in
            let authenticator = try await enrol(harness)
            let first = try await authenticate(harness)
            let spc = try #require(first["spc"])
            var areq = try #require(sentAReq(first))
            areq.set("acctNumber", .string(Self.card))  // the record shows it masked
            areq.set("threeDSRequestorPriorAuthenticationInfo", .array([.object([("threeDSReqPriorAuthMethod", .string("05")),
                                                                               ("threeDSReqPriorRef", first["acsTransID"] ?? .null)])]))
            let assertion = String(decoding: JSONWriter.write(try sign(authenticator, harness, spc)), as: UTF8.self)
            areq.set("threeDSRequestorAuthenticationInfo", .array([.object([("threeDSReqAuthMethod", .string("09")), ("threeDSReqAuthData", .string(assertion))])]))
            func send(_ areq: JSONValue) async throws -> JSONValue {
                var areq = areq
                areq.set("threeDSServerTransID", .string(UUID().uuidString.lowercased()))
                return try JSONReader.parse(try await harness.post("/ds/areq", JSONWriter.write(areq)).body).value
            }
            var bigger = areq
            bigger.set("purchaseAmount", .string("999999"))
            let changed = try await send(bigger)
            #expect(changed["transStatus"]?.stringValue == "N" && changed["transStatusReason"]?.stringValue == "01", "\(changed)")
            let verdict = try await harness.check("areq.spc", of: changed)
            #expect(verdict == "fail")
            // Its offer is taken: the right second AReq after it is no longer a follow-up of an open ARes S.
            let again = try await send(areq)
            #expect(again["transStatus"]?.stringValue != "Y", "\(again)")
            #expect(try await harness.check("areq.spc", of: again) == "fail")
        }
    }

    @Test(arguments: ["01", "02", "03"])
    func spcThatDidNotCompleteFallsBackToTheChallenge(_ indicator: String) async throws {
        try await withHarness { harness in
            _ = try await enrol(harness)
            let first = try await authenticate(harness)
            let second = try await harness.post(resultPath(first), JSONWriter.write(.object([("spcIncompInd", .string(indicator))])))
            let record = try JSONReader.parse(second.body).value
            #expect(record["transStatus"]?.stringValue == "C", "\(record)")
            #expect(sentAReq(record)?["spcIncompInd"]?.stringValue == indicator)
            #expect(try await check(harness, record) == "pass")
        }
    }

    /// The second AReq is the first's transaction's: it goes under the first's team, though the page that posts SPC's result
    /// names none. Each AReq takes one use of the team's pin, so both are used.
    @Test func theSecondAReqGoesUnderTheFirstsTeam() async throws {
        try await withHarness { harness in
            _ = try await enrol(harness)
            let pin = try await harness.post("/teams/red/admin/pins", Array(#"{"pan": "\#(Self.card)", "scenario": "spc", "count": 2}"#.utf8))
            #expect(pin.status == .created, "\(pin.bodyText)")
            let first = try await authenticate(harness, under: "/teams/red")
            let second = try await harness.post(resultPath(first), JSONWriter.write(.object([("spcIncompInd", .string("01"))])))
            #expect(try JSONReader.parse(second.body).value["transStatus"]?.stringValue == "C", "\(second.bodyText)")
            let left = try JSONReader.parse(try await harness.get("/teams/red/admin/pins").body).value["pins"]?.arrayValue
            #expect(left?.isEmpty == true, "the second AReq did not take the red team's pin: \(left ?? [])")
        }
    }

    @Test func withoutACredentialOrWithoutSPCSupportTheCardIsChallenged() async throws {
        try await withHarness { harness in
            #expect(try await authenticate(harness)["transStatus"]?.stringValue == "C", "no credential enrolled")
            _ = try await enrol(harness)
            #expect(try await authenticate(harness, spcSupport: false)["transStatus"]?.stringValue == "C", "no threeDSRequestorSpcSupport")
            // 2.2.0 does not know SPC: the 3DS Server's table builds the version's own AReq, without its fields.
            for version in [MessageVersion.v2_1_0, .v2_2_0] {
                var body = browserRequest(pan: Self.card, version: version)
                body.set("threeDSRequestorSpcSupport", .string("Y"))
                body.set("payeeOrigin", .string(Self.payeeOrigin))
                let answer = try JSONReader.parse(try await harness.post("/3ds-server/authenticate", JSONWriter.write(body)).body).value
                #expect(answer["transStatus"]?.stringValue == "C", "\(answer)")
                #expect(sentAReq(answer)?["threeDSRequestorSpcSupport"] == nil && sentAReq(answer)?["payeeOrigin"] == nil)
            }
        }
    }

    @Test func theResultEndpointRefusesWhatIsNotAResult() async throws {
        try await withHarness { harness in
            _ = try await enrol(harness)
            let first = try await authenticate(harness)
            for (body, reason) in [("{}", "exactly one"), (#"{"spcIncompInd":"04"}"#, "01"), (#"{"assertion":"x"}"#, "JSON object")] {
                let answer = try await harness.post(resultPath(first), Array(body.utf8))
                #expect(answer.status == .badRequest && answer.bodyText.contains(reason), "\(body): \(answer.bodyText)")
            }
            let unknown = try await harness.post("/3ds-server/transactions/\(UUID().uuidString.lowercased())/spc", Array(#"{"spcIncompInd":"01"}"#.utf8))
            #expect(unknown.status == .notFound)
        }
    }

    @Test func enrolmentNeedsADomainAndARegistrationThatHolds() async throws {
        try await withHarness { harness in
            let authenticator = try SoftwareAuthenticator()
            let port = harness.baseURL.split(separator: ":").last.map(String.init) ?? ""
            let (clientData, attestation) = authenticator.registration(rpID: "localhost", origin: "http://localhost:\(port)",
                                                                       challenge: try await enrolmentChallenge(harness))
            let body = JSONWriter.write(.object([("acctNumber", .string(Self.card)), ("clientDataJSON", .string(Base64URL.encode(clientData))),
                                                 ("attestationObject", .string(Base64URL.encode(attestation)))]))
            // At 127.0.0.1 there is no domain to scope a credential to.
            let atIP = try await harness.post("/acs/spc/credentials", body)
            #expect(atIP.status == .badRequest && atIP.bodyText.contains("localhost"), "\(atIP.bodyText)")
            // Made for another origin.
            let elsewhere = try await harness.client.post(harness.baseURL + "/acs/spc/credentials", body: body,
                                                          headers: ["Host": "localhost:\(port)", "Origin": "http://localhost:1"])
            #expect(elsewhere.status == .badRequest && elsewhere.bodyText.contains("origin"), "\(elsewhere.bodyText)")
            let badCard = try await harness.client.post(harness.baseURL + "/acs/spc/credentials", body: Array(#"{"acctNumber":"1234"}"#.utf8),
                                                        headers: ["Host": "localhost:\(port)"])
            #expect(badCard.status == .badRequest && badCard.bodyText.contains("acctNumber"))
            // The registration holds (its challenge survived the refusals above), and counts once: replayed, it is refused.
            let local: HTTPHeaders = ["Host": "localhost:\(port)", "Origin": "http://localhost:\(port)"]
            let first = try await harness.client.post(harness.baseURL + "/acs/spc/credentials", body: body, headers: local)
            #expect(first.status == .created, "\(first.bodyText)")
            let replayed = try await harness.client.post(harness.baseURL + "/acs/spc/credentials", body: body, headers: local)
            #expect(replayed.status == .badRequest && replayed.bodyText.contains("clientDataJSON.challenge"), "\(replayed.bodyText)")
            // A challenge the page's script made itself, not the ACS: refused.
            let (ownData, ownAttestation) = authenticator.registration(rpID: "localhost", origin: "http://localhost:\(port)", challenge: randomBytes(32))
            let ownBody = JSONWriter.write(.object([("acctNumber", .string(Self.card)), ("clientDataJSON", .string(Base64URL.encode(ownData))),
                                                    ("attestationObject", .string(Base64URL.encode(ownAttestation)))]))
            let own = try await harness.client.post(harness.baseURL + "/acs/spc/credentials", body: ownBody, headers: local)
            #expect(own.status == .badRequest && own.bodyText.contains("not a challenge this ACS issued"), "\(own.bodyText)")
            // The enrolment page carries one the ACS issued.
            let page = try await harness.get("/acs/spc/enrol?acctNumber=\(Self.card)").bodyText
            #expect(page.contains("challenge: Uint8Array.from(atob(\"") && !page.contains("crypto.getRandomValues(new Uint8Array(32))"))
        }
    }

    /// Without the second AReq within its time (here 0.5 s, 10 minutes by default), the ACS ends the first transaction
    /// with RReq N, reason 14 (SB 279 Req 452-453), and a result posted after is refused.
    @Test func withoutTheSecondAReqTheACSEndsTheFirstByRReqN14() async throws {
        try await withHarness(configure: { $0.accessControlServer.challengeTimeout = 0.5 }) { harness in
            _ = try await enrol(harness)
            let first = try await authenticate(harness)
            // On the record's state: the RReq comes after the ACS's time.
            let record = try await self.record(harness, first) { $0["state"]?.stringValue == "spc" }
            #expect(record["state"]?.stringValue == "completed", "\(record)")
            #expect(record["transStatus"]?.stringValue == "N" && record["transStatusReason"]?.stringValue == "14", "\(record)")
            let late = try await harness.post(resultPath(first), JSONWriter.write(.object([("spcIncompInd", .string("03"))])))
            #expect(late.status == .conflict, "\(late.bodyText)")
        }
    }

    /// The page never posts SPC's result: at the 3DS Server's time limit (here 0.5 s, 540 s by default; SB 279 Req 454-455:
    /// "send the second AReq message to the ACS with SPC Incompletion Indicator = 03 and without the 3DS Requestor
    /// Authentication Information") it sends the second AReq itself, and the ACS falls back to the scenario's challenge.
    @Test func withoutThePagesResultThe3DSServerSendsTheSecondAReqWithSpcIncompInd03() async throws {
        try await withHarness(configure: { $0.threeDSServer.spcResultTimeout = 0.5 }) { harness in
            _ = try await enrol(harness)
            let first = try await authenticate(harness)
            // On the record's state: the second AReq goes after the 3DS Server's time.
            let record = try await self.record(harness, first) { $0["spc"]?["followedBy"] == nil }
            let secondID = try #require(record["spc"]?["followedBy"]?.stringValue, "\(record)")
            let second = try JSONReader.parse(try await harness.get("/3ds-server/transactions/\(secondID)").body).value
            #expect(second["transStatus"]?.stringValue == "C", "\(second)")
            let areq = try #require(sentAReq(second))
            #expect(areq["spcIncompInd"]?.stringValue == "03" && areq["threeDSRequestorAuthenticationInfo"] == nil, "\(areq)")
            #expect(try await check(harness, second) == "pass")
            // The page's result after the limit finds the transaction followed up.
            let late = try await harness.post(resultPath(first), JSONWriter.write(.object([("spcIncompInd", .string("02"))])))
            #expect(late.status == .conflict, "\(late.bodyText)")
        }
    }

    // MARK: The simulator

    @Test(arguments: [(SPCPlay.accept, "Y", "pass"), (.spoil, "N", "fail"), (.decline, "Y", "pass"), (.unavailable, "Y", "pass")])
    func theSimulatedBrowserPlaysSPC(_ play: SPCPlay, _ status: String, _ verdict: String) async throws {
        try await withHarness { harness in
            var simulator = harness.simulator
            simulator.spc = play
            // The fallback challenge (decline, unavailable) is answered with its code.
            let run = try await BrowserSimulator(simulator: simulator).run(pan: Self.card, version: .v2_3_1, answers: ChallengeAnswers(["1234"]))
            #expect(run.lines.contains { $0.hasPrefix("  SPC: credential enrolled") }, "\(run.lines)")
            #expect(run.lines.contains { $0.hasPrefix("  ARes S: SPC \(play.rawValue)") }, "\(run.lines)")
            #expect(run.transaction.final.transStatus == status, "\(run.transaction.summary)")
            #expect(try await check(harness, run.transaction.final.record) == verdict)
            #expect((run.transaction.challenge != nil) == [.decline, .unavailable].contains(play))
        }
    }

    // MARK: Helpers

    /// Enrols a fresh software authenticator for the card, as the issuer's page at http://localhost:PORT does.
    func enrol(_ harness: RunningHarness) async throws -> SoftwareAuthenticator {
        let authenticator = try SoftwareAuthenticator()
        let (clientData, attestation) = authenticator.registration(rpID: "localhost", origin: origin(harness), challenge: try await enrolmentChallenge(harness))
        let body = JSONWriter.write(.object([("acctNumber", .string(Self.card)), ("clientDataJSON", .string(Base64URL.encode(clientData))),
                                             ("attestationObject", .string(Base64URL.encode(attestation)))]))
        let answer = try await harness.client.post(harness.baseURL + "/acs/spc/credentials", body: body,
                                                   headers: ["Host": String(origin(harness).dropFirst("http://".count)), "Origin": origin(harness)])
        #expect(answer.status == .created, "\(answer.bodyText)")
        return authenticator
    }

    /// A challenge the ACS issued for an enrolment, as its enrolment page carries one.
    func enrolmentChallenge(_ harness: RunningHarness) async throws -> [UInt8] {
        let answer = try JSONReader.parse(try await harness.post("/acs/spc/enrol/challenge", []).body).value
        return try Base64URL.decode(try #require(answer["challenge"]?.stringValue))
    }

    func origin(_ harness: RunningHarness) -> String { "http://localhost:" + (harness.baseURL.split(separator: ":").last.map(String.init) ?? "") }

    func authenticate(_ harness: RunningHarness, spcSupport: Bool = true, under prefix: String = "") async throws -> JSONValue {
        var body = browserRequest(pan: Self.card, version: .v2_3_1)
        body.set("purchaseAmount", .string("1234"))
        body.set("purchaseCurrency", .string("978"))
        if spcSupport {
            body.set("threeDSRequestorSpcSupport", .string("Y"))
            body.set("payeeOrigin", .string(Self.payeeOrigin))
        }
        let answer = try await harness.post(prefix + "/3ds-server/authenticate", JSONWriter.write(body))
        #expect(answer.status == .ok, "\(answer.bodyText)")
        return try JSONReader.parse(answer.body).value
    }

    /// What the browser's SPC returns for `spc` (the transaction's `spc` member), signed by `authenticator`.
    func sign(_ authenticator: SoftwareAuthenticator, _ harness: RunningHarness, _ spc: JSONValue) throws -> JSONValue {
        try authenticator.assertion(confirming: try #require(spc["spcTransData"]), rpID: "localhost", topOrigin: Self.payeeOrigin).json
    }

    /// The 3DS Server's record of `first` once `pending` no longer holds of it, polled; at most 10 s.
    func record(_ harness: RunningHarness, _ first: JSONValue, while pending: (JSONValue) -> Bool) async throws -> JSONValue {
        let path = "/3ds-server/transactions/\(first["threeDSServerTransID"]?.stringValue ?? "")"
        var record = first
        for _ in 0..<100 where pending(record) {
            try await Task.sleep(for: .milliseconds(100))
            record = try JSONReader.parse(try await harness.get(path).body).value
        }
        return record
    }

    func resultPath(_ first: JSONValue) -> String { "/3ds-server/transactions/\(first["threeDSServerTransID"]?.stringValue ?? "")/spc" }

    func post(_ harness: RunningHarness, _ first: JSONValue, assertion: JSONValue) async throws -> JSONValue {
        let answer = try await harness.post(resultPath(first), JSONWriter.write(.object([("assertion", assertion)])))
        return try JSONReader.parse(answer.body).value
    }

    /// The verdict of `areq.spc` in the journal entry of the transaction `record` (the second AReq's).
    func check(_ harness: RunningHarness, _ record: JSONValue) async throws -> String? { try await harness.check("areq.spc", of: record) }
}
