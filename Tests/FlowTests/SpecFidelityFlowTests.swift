import EMV3DS
import Foundation
import JSON
import SDKSimulator
import Testing
import Net

/// The messages of the 3DS Server's record, by type, in order.
private func trail(_ record: JSONValue) -> [JSONValue] {
    record["messages"]?.arrayValue?.compactMap { $0["message"] } ?? []
}

private func message(_ type: String, in record: JSONValue) -> JSONValue? {
    trail(record).first { $0["messageType"]?.stringValue == type }
}

private func record(_ harness: RunningHarness, _ path: String) async throws -> JSONValue {
    try JSONReader.parse(try await harness.get(path).body).value
}

@Suite("Spec fidelity end to end: what each role sends passes the receiver's table, per version")
struct SpecFidelityFlowTests {
    /// Every message the harness emits, for every non-fault default scenario, version and SDK
    /// style, passes the receiving role's rules with no warning: the 3DS Server's, the DS's and
    /// the ACS's records and the SDK's CRes reading show none.
    @Test(arguments: FlowCase.all)
    func everyMessageTheHarnessSendsPassesItsOwnTables(_ flow: FlowCase) async throws {
        let frictionless = ["4000000000001000", "4000000000002008", "4000000000003006", "4000000000004004", "4000000000005001", "4000000000006009"]
        let cases = frictionless.map { ($0, [String]()) } + challengeScenarios.map { ($0.1, $0.2) }
        try await withHarness { harness in
            for (pan, answers) in cases {
                let run = try await runTransaction(harness, pan: pan, version: flow.version, style: flow.style, answers: answers)
                let final = run.final.record
                #expect(final["violations"] == nil && final["warnings"] == nil && final["erroSent"] == nil, "\(pan): \(final)")
                #expect(run.challenge?.warnings ?? [] == [], "\(pan) CRes: \(run.challenge?.warnings ?? [])")
                let acsTransID = try #require(final["acsTransID"]?.stringValue, "\(pan)")
                let dsTransID = try #require(final["dsTransID"]?.stringValue, "\(pan)")
                let acs = try await record(harness, "/admin/acs/transactions/" + acsTransID)
                #expect(acs["warnings"] == nil && acs["erroReceived"] == nil, "\(pan) ACS: \(acs)")
                let ds = try await record(harness, "/admin/ds/transactions/" + dsTransID)
                #expect(ds["warnings"] == nil && ds["erro"] == nil, "\(pan) DS: \(ds)")
            }
        }
    }

    @Test func a231AppTransactionUsesThe231NamesThroughAllThreeRoles() async throws {
        try await withHarness { harness in
            let frictionless = try await runTransaction(harness, pan: "4000000000001000", version: .v2_3_1, answers: [])
            let ares = try #require(message("ARes", in: frictionless.final.record))
            #expect(ares["deviceInfoRecognisedVersion"]?.stringValue?.count ?? 0 >= 3)
            #expect(ares["threeDSRequestorAppURLInd"] == .string("N"))
            let areq = try #require(message("AReq", in: frictionless.final.record))
            #expect(areq["sdkType"] == .string("01") && areq["acquirerCountryCode"] != nil)

            let challenge = try await runTransaction(harness, pan: "4000000000110009", version: .v2_3_1, answers: ["1234"])
            #expect(challenge.final.state == "completed", "\(challenge.summary)")
            let challengeARes = try #require(message("ARes", in: challenge.final.record))
            #expect(challengeARes["authenticationMethod"] == .array([.string("02")]) && challengeARes["authenticationType"] == nil)
            #expect(challengeARes["acsRenderingType"]?["deviceUserInterfaceMode"] == .string("01"))
            let rreq = try #require(message("RReq", in: challenge.final.record))
            #expect(rreq["authenticationMethod"] == .array([.string("02")]) && rreq["authenticationType"] == nil)
            #expect(rreq["acsRenderingType"]?["acsUiTemplate"] == .string("01"))
            #expect(rreq["sdkTransID"] != nil)
            // The text screen's label travels in challengeEntryBox and challengeInfoLabel (ChallengeMessageTests).
            #expect(challenge.challenge?.screens.first?.label == "Enter your code")

            let whitelisting = try await runTransaction(harness, pan: "4000000000160004", version: .v2_3_1, answers: ["1234"], whitelisting: "Y")
            let listed = try #require(message("RReq", in: whitelisting.final.record))
            #expect(listed["trustListStatus"] == .string("Y") && listed["trustListStatusSource"] == .string("03") && listed["whiteListStatus"] == nil)
        }
    }

    @Test func a210RReqCarriesNoSDKTransIDAndIsAccepted() async throws {
        try await withHarness { harness in
            let run = try await runTransaction(harness, pan: "4000000000110009", version: .v2_1_0, answers: ["1234"])
            #expect(run.final.state == "completed", "\(run.summary)")
            let rreq = try #require(message("RReq", in: run.final.record))
            #expect(rreq["sdkTransID"] == nil && rreq["authenticationType"] == .string("02") && rreq["interactionCounter"] != nil)
        }
    }

    @Test func aDecoupledAResAndRReqCarryTheirConditionalFields() async throws {
        try await withHarness { harness in
            for version in [MessageVersion.v2_2_0, .v2_3_1] {
                let run = try await runTransaction(harness, pan: "4000000000190001", version: version, answers: [])
                #expect(run.final.state == "completed", "\(version.rawValue): \(run.summary)")
                let ares = try #require(message("ARes", in: run.final.record))
                #expect(ares["acsChallengeMandated"] != nil && ares["acsDecConInd"] == .string("Y"))
                let rreq = try #require(message("RReq", in: run.final.record))
                if version == .v2_3_1 {
                    #expect(ares["authenticationMethod"] == .array([.string("12")]) && ares["cardholderInfo"]?["text"] != nil)
                    #expect(rreq["authenticationMethod"] == .array([.string("12")]) && rreq["authenticationType"] == nil)
                } else {
                    #expect(ares["authenticationType"] == .string("04") && ares["cardholderInfo"]?.stringValue != nil)
                    #expect(rreq["authenticationType"] == .string("04") && rreq["authenticationMethod"] == nil)
                }
                // No challenge screen was shown: no rendering type; the counter of cardholder interactions is 00.
                #expect(rreq["acsRenderingType"] == nil && rreq["interactionCounter"] == .string("00"))
            }
        }
    }

    /// Annex A, threeDSRequestorDecReqInd: absent means N, "do not use decoupled authentication"; the ACS that
    /// would have used it answers U with transStatusReason 23 ("Decoupled Authentication required by ACS but not
    /// requested by 3DS Requestor", a 2.2.0 code).
    @Test func decoupledIsAnsweredOnlyToARequestorThatAsksForIt() async throws {
        try await withHarness { harness in
            for (indicator, status) in [(nil, "U"), ("N", "U"), ("Y", "D")] as [(String?, String)] {
                let areq = try appAReq(pan: "4000000000190001", replacing: [
                    "threeDSRequestorDecReqInd": indicator.map(JSONValue.string), "threeDSRequestorDecMaxTime": indicator == "Y" ? .string("00010") : nil,
                ])
                let ares = try await harness.postMessage("/ds/areq", areq)
                #expect(ares["transStatus"]?.stringValue == status, "\(indicator ?? "absent"): \(JSONWriter.string(ares))")
                if status == "U" { #expect(ares["transStatusReason"]?.stringValue == "23") }
            }
        }
    }

    /// Core specification 5.9.4: a 3DS Server answers an invalid ARes with an Erro to the DS;
    /// the harness's DS passes it on to the ACS (the specification does not say it must), and
    /// each role records it.
    @Test func anInvalidAResIsAnsweredWithAnErroThatReachesTheACS() async throws {
        try await withHarness { harness in
            let run = try await runTransaction(harness, pan: "4000000000510000", answers: [])  // fault-ds-missing-field: no transStatus
            #expect(run.final.state == "error")
            let erroSent = try #require(run.final.record["erroSent"])
            #expect(erroSent["errorCode"] == .string("201") && erroSent["errorComponent"] == .string("S"))
            #expect(erroSent["errorDetail"] == .string("transStatus") && erroSent["errorMessageType"] == .string("ARes"))
            #expect(message("Erro", in: run.final.record) != nil)
            let dsTransID = try #require(erroSent["dsTransID"]?.stringValue)
            let acsTransID = try #require(erroSent["acsTransID"]?.stringValue)
            let ds = try await record(harness, "/admin/ds/transactions/" + dsTransID)
            #expect(ds["erro"] == .array([.string("received from the 3DS Server: Erro 201 (transStatus)"), .string("forwarded to the ACS: Erro 201")]))
            let acs = try await record(harness, "/admin/acs/transactions/" + acsTransID)
            #expect(acs["erroReceived"] == .array([.string("Erro 201 from component S about ARes: transStatus")]))
        }
    }

    /// 5.9.3: a DS that cannot relay the ACS's ARes sends an Erro to the ACS as well as to the 3DS Server.
    @Test func anAResTheDSRefusesIsReportedToTheACSToo() async throws {
        try await withHarness { harness in
            let run = try await runTransaction(harness, pan: "4000000000610008", answers: [])  // fault-acs-missing-field
            #expect(run.final.state == "error")
            let erro = try #require(run.final.record["erro"])
            #expect(erro["errorCode"] == .string("201") && erro["errorComponent"] == .string("D"))
            #expect(run.final.record["erroSent"] == nil)  // an Erro is not answered with an Erro
            let acsTransID = try #require(erro["acsTransID"]?.stringValue)
            let dsTransID = try #require(erro["dsTransID"]?.stringValue)
            let acs = try await record(harness, "/admin/acs/transactions/" + acsTransID)
            #expect(acs["erroReceived"] == .array([.string("Erro 201 from component D about ARes: transStatus")]))
            let ds = try await record(harness, "/admin/ds/transactions/" + dsTransID)
            #expect(ds["erro"]?.arrayValue?.first == .string("sent to the ACS: Erro 201 about the ARes"))
        }
    }

    /// An RReq is taken only for a transaction awaiting one (ARes C or D, not yet completed),
    /// with every id of its transaction; else the Erro names the field.
    @Test func rreqsForTransactionsThatAwaitNoneOrWithOtherIdsAreRefused() async throws {
        try await withHarness { harness in
            func rreq(_ record: JSONValue, version: MessageVersion, changing changes: [String: JSONValue?] = [:]) -> JSONValue {
                var rreq = RReq(messageVersion: version, messageCategory: "01", threeDSServerTransID: record["threeDSServerTransID"]?.stringValue ?? "",
                                acsTransID: record["acsTransID"]?.stringValue ?? "", dsTransID: record["dsTransID"]?.stringValue ?? "",
                                sdkTransID: record["sdkTransID"]?.stringValue, transStatus: .authenticated, interactionCounter: "01")
                rreq.authenticationValue = "AAABBBCCCDDDEEEFFFGGGHHHIII="
                rreq.eci = "05"
                rreq.setAuthentication(.smsOTP)
                rreq.acsRenderingType = .object([("acsInterface", .string("01")), ("acsUiTemplate", .string("01")), ("deviceUserInterfaceMode", .string("01"))])
                var json = rreq.json
                for (key, value) in changes { json.set(key, value) }
                return json
            }
            // A frictionless N cannot be turned into a Y: 305 before 2.3.1, 313 from 2.3.1.
            for (version, code) in [(MessageVersion.v2_2_0, "305"), (.v2_3_1, "313")] {
                let frictionless = try await runTransaction(harness, pan: "4000000000003006", version: version, answers: [])
                let erro = try await harness.postMessage("/3ds-server/rreq", rreq(frictionless.final.record, version: version))
                #expect(erro["messageType"] == .string("Erro") && erro["errorCode"] == .string(code), "\(erro)")
                let after = try await record(harness, "/3ds-server/transactions/" + (frictionless.final.record["threeDSServerTransID"]?.stringValue ?? ""))
                #expect(after["state"] == .string("frictionless") && after["transStatus"] == .string("N"))
                #expect(after["erroSent"]?["errorCode"] == .string(code))
            }
            // A decoupled transaction awaiting its RReq: every id must be its own.
            let waiting = try await runTransaction(harness, pan: "4000000000630006", answers: [], resultWait: .zero)  // fault-decoupled-never: no result comes
            #expect(waiting.final.state == "challenge")
            for field in ["acsTransID", "dsTransID", "sdkTransID"] {
                let erro = try await harness.postMessage("/3ds-server/rreq", rreq(waiting.final.record, version: .v2_2_0,
                                                                                  changing: [field: .string(UUID().uuidString.lowercased())]))
                #expect(erro["errorCode"] == .string("301") && erro["errorDetail"] == .string(field), "\(field): \(erro)")
            }
            let rres = try await harness.postMessage("/3ds-server/rreq", rreq(waiting.final.record, version: .v2_2_0))
            #expect(rres["messageType"] == .string("RRes"), "\(rres)")
            let again = try await harness.postMessage("/3ds-server/rreq", rreq(waiting.final.record, version: .v2_2_0))
            #expect(again["errorCode"] == .string("305"), "a second RReq: \(again)")

            // 2.3.1: a second RReq is a duplicate (312); an RReq in another version than the transaction's is 203.
            let waiting231 = try await runTransaction(harness, pan: "4000000000630006", version: .v2_3_1, answers: [], resultWait: .zero)
            let otherVersion = try await harness.postMessage("/3ds-server/rreq", rreq(waiting231.final.record, version: .v2_2_0))
            #expect(otherVersion["errorCode"] == .string("203") && otherVersion["errorDetail"] == .string("messageVersion")
                    && otherVersion["messageVersion"] == .string("2.3.1"), "\(otherVersion)")
            #expect(try await harness.postMessage("/3ds-server/rreq", rreq(waiting231.final.record, version: .v2_3_1))["messageType"] == .string("RRes"))
            let duplicate = try await harness.postMessage("/3ds-server/rreq", rreq(waiting231.final.record, version: .v2_3_1))
            #expect(duplicate["errorCode"] == .string("312"), "\(duplicate)")
        }
    }

    /// 5.9.8: an RReq the DS cannot relay is answered with an Erro to the ACS, and the same Erro
    /// goes to the 3DS Server of the transaction, which records it.
    @Test func anInvalidRReqAtTheDSIsReportedToBothSides() async throws {
        try await withHarness { harness in
            let waiting = try await runTransaction(harness, pan: "4000000000630006", answers: [], resultWait: .zero)  // fault-decoupled-never: no result comes
            let record = waiting.final.record
            let invalid: JSONValue = .object([
                ("messageType", .string("RReq")), ("messageVersion", .string("2.2.0")), ("messageCategory", .string("01")),
                ("threeDSServerTransID", record["threeDSServerTransID"] ?? .null), ("acsTransID", record["acsTransID"] ?? .null),
                ("dsTransID", record["dsTransID"] ?? .null), ("sdkTransID", record["sdkTransID"] ?? .null),
            ])  // no transStatus
            let erro = try await harness.postMessage("/ds/rreq", invalid)
            #expect(erro["errorCode"] == .string("201") && erro["errorComponent"] == .string("D") && erro["errorDetail"] == .string("transStatus"))
            // The DS answers once the 3DS Server has been told.
            let server = try JSONReader.parse(try await harness.get("/3ds-server/transactions/" + (record["threeDSServerTransID"]?.stringValue ?? "")).body).value
            #expect(server["erroReceived"]?.arrayValue?.first?["errorCode"] == .string("201"), "\(server)")
            #expect(server["state"] == .string("challenge"))
        }
    }

    /// A PAN in no card range gets the DS's own ARes, valid in every version (2.3.1 adds two app fields).
    @Test(arguments: MessageVersion.allCases)
    func theDSsOwnAResForAPANInNoRangeIsValid(version: MessageVersion) async throws {
        try await withHarness { harness in
            let run = try await runTransaction(harness, pan: "1000000000000009", version: version, answers: [])
            #expect(run.final.state == "frictionless" && run.final.transStatus == "N", "\(run.summary)")
            #expect(run.final.record["warnings"] == nil && run.final.record["erroSent"] == nil)
        }
    }

    @Test func theSpecEndpointShowsTheTableTheHarnessEnforces() async throws {
        try await withHarness { harness in
            let areq = try JSONReader.parse(try await harness.get("/admin/spec/AReq/2.3.1?channel=02").body).value
            let names = areq["fields"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
            #expect(names.contains("acceptLanguage") && names.contains("browserJavascriptEnabled") && !names.contains("sdkAppID"))
            #expect(areq["fieldCount"] == .number(String(names.count)))
            #expect(try await harness.get("/admin/spec/Nope/2.3.1").status.code == 404)
            #expect(try await harness.get("/admin/spec/ARes/9.9.9").status.code == 404)
            #expect(try await harness.get("/admin/spec/ARes/2.2.0?channel=07").status.code == 400)
            let index = try JSONReader.parse(try await harness.get("/admin/spec").body).value
            #expect(index["tables"]?.arrayValue?.count == MessageTables.all.count)
        }
    }
}
