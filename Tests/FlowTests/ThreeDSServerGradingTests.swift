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

/// A rehearsal fails a 3DS Server with a common bug, on the check that names it, and passes a
/// correct one: each check of the 3DS Server made to fail by a simulated party with that bug.
@Suite("Test runs: a 3DS Server's reactions graded")
struct ThreeDSServerGradingTests {
    static let scenarios = [
        "frictionless-y", "fault-ds-missing-field", "fault-ds-empty-optional-field", "fault-ds-critical-extension",
        "fault-ds-malformed-json", "fault-ds-wrong-version", "fault-ds-erro-203", "fault-ds-http-500", "decoupled",
        "fault-rreq-unknown-transaction", "fault-rreq-missing-field",
    ]
    static let cards: [String: String] = [
        "frictionless-y": "4000000000001000", "fault-ds-missing-field": "4000000000510000", "fault-ds-empty-optional-field": "4000000000520009",
        "fault-ds-critical-extension": "4000000000560005", "fault-ds-malformed-json": "4000000000500001", "fault-ds-wrong-version": "4000000000530008",
        "fault-ds-erro-203": "4000000000460008", "fault-ds-http-500": "4000000000470007", "decoupled": "4000000000190001",
        "fault-rreq-unknown-transaction": "4000000000740003", "fault-rreq-missing-field": "4000000000750002",
        // Faults of the DS's and the ACS's answers beyond those above: what the restart test rehearses too.
        "fault-ds-http-503": "4000000000480006", "fault-ds-content-type": "4000000000490005", "fault-ds-wrong-ids": "4000000000540007",
        "fault-ds-swapped-ids": "4000000000550006", "fault-ds-close-mid-response": "4000000000570004",
        "fault-acs-erro-404": "4000000000600009", "fault-acs-missing-field": "4000000000610008", "fault-acs-http-500": "4000000000620007",
        // A generated case (NegativeServerScenarios): an ARes R without the transStatusReason R requires.
        "negative-ares-rejected-missing-transStatusReason": "4000000010000018",
        // And an ARes of 2.2.0 with 2.3.1's trustListStatus, which the 3DS Server must take.
        "negative-ares-undefined-trustListStatus": "4000000080000427",
        // And an Erro without errorCode in place of the ARes, which the 3DS Server must not answer.
        "negative-erro-missing-errorCode": "4000000120000015",
    ]

    /// Runs the scenarios in 2.2.0 through `party`, each tagged with its case, and waits until no case is under way.
    /// `deadline`: the case deadline, what a bug's missing answer waits for; a correct party's cases end before it.
    func rehearse(_ harness: RunningHarness, _ party: SimulatedThreeDSServer, scenarios: [String] = Self.scenarios,
                  deadline: Int = 10) async throws -> JSONValue {
        let request = JSONValue.object([
            ("suite", .object([("name", .string("3DS Server")), ("party", .string("3ds-server")),
                               ("scenarios", .array(scenarios.map(JSONValue.string))), ("versions", .array([.string("2.2.0")]))])),
            // Past the decoupled RReq's 2 s, with room for a loaded machine: a case settled before its RReq came would pass unjudged.
            ("caseDeadlineSeconds", .number(String(deadline))),
        ])
        let started = try JSONReader.parse(try await harness.post("/admin/runs", JSONWriter.write(request)).body).value
        let id = try #require(started["id"]?.stringValue)
        for scenario in scenarios {
            try await party.authenticate(pan: try #require(Self.cards[scenario]), tag: "\(id)/\(scenario)/2.2.0/app")
        }
        // The decoupled RReq comes after 2 s, a missing Erro fails at the 10 s deadline. The limit is for a machine that runs
        // every suite at once on two cores (the http pass of ./harness test took over 30 s to settle these runs there).
        return try await harness.settledRun(id, within: .seconds(90))
    }

    func verdict(_ run: JSONValue, _ scenario: String, _ check: String) -> (status: String?, verdict: String?, detail: String?, fix: String?) {
        let entry = run["cases"]?.arrayValue?.first { $0["scenario"]?.stringValue == scenario }
        let result = entry?["checks"]?.arrayValue?.first { $0["id"]?.stringValue == check }
        return (entry?["status"]?.stringValue, result?["verdict"]?.stringValue, result?["detail"]?.stringValue, result?["fix"]?.stringValue)
    }

    @Test func aCorrect3DSServerPassesEveryCase() async throws {
        try await withHarness { harness in
            let party = try SimulatedThreeDSServer(harness)
            defer { party.stop() }
            // A long deadline: on a loaded machine the decoupled RReq may come late, and nothing here waits for the deadline.
            let run = try await rehearse(harness, party, deadline: 60)
            for entry in run["cases"]?.arrayValue ?? [] {
                #expect(entry["status"]?.stringValue == "passed", "\(JSONWriter.string(entry))")
            }
            #expect(verdict(run, "fault-ds-missing-field", "ares.erro").verdict == "pass")
            #expect(verdict(run, "fault-ds-malformed-json", "ares.erro").verdict == "pass")
            #expect(verdict(run, "decoupled", "rres.valid").verdict == "pass")
            #expect(verdict(run, "fault-rreq-unknown-transaction", "rreq.erro").verdict == "pass")
            #expect(verdict(run, "fault-rreq-missing-field", "rreq.erro").verdict == "pass")
        }
    }

    /// The checks the DS makes of an AReq as it comes: each made to fail (or warn) by one AReq.
    @Test func theAReqChecksFailOnTheAReqThatBreaksThem() async throws {
        try await withHarness { harness in
            // Device data an SDK could send, encrypted to the DS as a correct SDK encrypts it.
            func deviceData(_ json: String, style: DeviceDataStyle = .android, encryption: ContentEncryptionAlgorithm = .a128cbcHS256) throws -> JSONValue {
                let ds = try directoryServer("A000000003", style)
                return .string(try DeviceData.encrypt(Array(json.utf8), to: ds.publicKey, directoryServerID: ds.rid, style: style,
                                                      encryption: encryption, kid: ds.keyID))
            }
            let plain = #"{"DV":"1.4","DD":{"C001":"Android"}}"#
            // RSA-OAEP with SHA-1: the DS can decrypt it, the SDK specification names RSA-OAEP-256.
            let rsaDS = try directoryServer("A000000003", .rsa)
            let sha1 = try JWE.encrypt(Array(plain.utf8), to: .rsa(rsaDS.publicKey, .rsaOAEP), encryption: .a128cbcHS256, kid: rsaDS.keyID)
            let reused = try appAReq()
            _ = try await harness.postMessage("/ds/areq", reused)
            let cases: [(String, [String: JSONValue?], String, String)] = [
                ("areq.elements", ["mcc": nil], "fail", "201 mcc"),
                ("areq.undefined-members", ["browserAcceptHeader": .string("text/html")], "warning", "browserAcceptHeader"),
                ("areq.device-data", ["sdkEncData": .string("not.a.jwe.at.all")], "fail", "sdkEncData"),
                // An sdkTransID that is not a UUID: the AReq is refused (the 3DS Server's areq.elements), and it is the SDK's failure too.
                ("areq.sdk-parameters", ["sdkTransID": .string("not-a-uuid")], "fail", "sdkTransID"),
                // The SDK specification's codes: a reason is RE01-RE04, a warning SW01-SW05; DV and DD are required.
                ("areq.device-info", ["sdkEncData": try deviceData(#"{"DV":"1.4","DD":{"C001":"Android"},"DPNA":{"C010":"RE09"},"SW":[]}"#)], "fail", "RE09"),
                ("areq.device-info", ["sdkEncData": try deviceData(#"{"DV":"1.4","DD":{"C001":"Android"},"SW":[1]}"#)], "fail", "each warning is a string"),
                ("areq.device-info", ["sdkEncData": try deviceData(#"{"DV":"1.4","DD":{"C001":"Android"},"SW":["VENDOR7"]}"#)], "warning", "VENDOR7"),
                ("areq.device-info", ["sdkEncData": try deviceData(#"{"DD":{"C001":"Android"}}"#)], "fail", "DV"),
                ("areq.device-info", ["sdkEncData": try deviceData(#"{"DV":"1.4","DD":{"osName":"Android"}}"#)], "warning", "osName"),
                // DD values are strings (JudoKit's ThreeDSDeviceData: Map<String, String>), of the platform C001 names.
                ("areq.device-info", ["sdkEncData": try deviceData(#"{"DV":"1.4","DD":{"C001":"Android","C008":1080}}"#)], "fail", "C008 as 1080"),
                ("areq.device-info", ["sdkEncData": try deviceData(#"{"DV":"1.4","DD":{"C001":"iOS","A003":"x"}}"#)], "fail", "A003"),
                // The JWE header: the algorithms the SDK specification names, and ECDH-ES as Android SDKs write it (alg dir with an epk).
                ("areq.sdk-enc-header", ["sdkEncData": try deviceData(plain, style: .iosEC)], "pass", ""),
                ("areq.sdk-enc-header", ["sdkEncData": try deviceData(plain, style: .iosEC, encryption: .a128gcm)], "pass", ""),
                ("areq.sdk-enc-header", ["sdkEncData": try deviceData(plain, style: .rsa)], "pass", ""),
                ("areq.sdk-enc-header", ["sdkEncData": try deviceData(plain)], "pass", "alg dir"),
                ("areq.sdk-enc-header", ["sdkEncData": .string(sha1)], "fail", "alg RSA-OAEP:"),
                ("areq.sdk-enc-header", ["sdkEncData": try deviceData(plain, style: .iosEC, encryption: .a256gcm)], "fail", "enc A256GCM"),
                // Local time two hours east of Greenwich, written as if it were UTC.
                ("areq.purchase-date", ["purchaseDate": .string(UTCTime.purchaseDate(Date().addingTimeInterval(7200)))], "fail", "min ahead of the DS's UTC clock"),  // the minutes depend on how long the AReqs above took
                // Local time five hours west of Greenwich (a 3DS Server in New York) in an app AReq: a warning naming purchaseDate.
                ("areq.purchase-date", ["purchaseDate": .string(UTCTime.purchaseDate(Date().addingTimeInterval(-5 * 3600)))], "warning", "behind the DS's UTC clock"),
                ("areq.purchase-date", ["purchaseDate": .string(UTCTime.purchaseDate(Date().addingTimeInterval(-120)))], "pass", ""),
                // The ephemeral key of the AReq sent above, in a new transaction.
                ("areq.sdk-ephem-key", ["sdkEphemPubKey": reused["sdkEphemPubKey"]], "fail", "an SDK makes a new key pair"),
                // The same SDK transaction sent again by its 3DS Server (after an HTTP failure, say): its key rightly comes again.
                ("areq.sdk-ephem-key", ["sdkEphemPubKey": reused["sdkEphemPubKey"], "sdkTransID": reused["sdkTransID"]], "pass", "sent again"),
            ]
            for (check, changes, verdict, seen) in cases {
                _ = try await harness.postMessage("/ds/areq", try appAReq(replacing: changes))
                let list = try JSONReader.parse(try await harness.get("/inspector/transactions?limit=1").body).value
                let id = try #require(list["transactions"]?.arrayValue?.first?["dsTransID"]?.stringValue)
                let entry = try JSONReader.parse(try await harness.get("/inspector/transactions/\(id)").body).value
                let result = try #require(entry["checks"]?.arrayValue?.first { $0["id"]?.stringValue == check }, "\(check)")
                #expect(result["verdict"]?.stringValue == verdict && (seen.isEmpty || result["detail"]?.stringValue?.contains(seen) == true),
                        "\(check): \(JSONWriter.string(result))")
            }
        }
    }

    /// Every fault a DS or an ACS can put on what a 3DS Server receives, rehearsed, then the harness stopped cleanly and
    /// started again on its data directory: each case's status and each check's verdict read the same. A fault that spoils
    /// the bytes (malformed-json) is kept in the journal as text, so its record still reads back whole (docs/runs.md).
    @Test func everyRunVerdictReadsTheSameAfterARestart() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("harness-verdicts-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        let scenarios = Self.cards.keys.sorted()
        /// scenario → status and each check's verdict, as the run's report gives them.
        func verdicts(_ run: JSONValue) -> [String: String] {
            var found: [String: String] = [:]
            for entry in run["cases"]?.arrayValue ?? [] {
                let checks = (entry["checks"]?.arrayValue ?? []).map { "\($0["id"]?.stringValue ?? "?")=\($0["verdict"]?.stringValue ?? "?")" }
                found[entry["scenario"]?.stringValue ?? "?"] = "\(entry["status"]?.stringValue ?? "?") " + checks.sorted().joined(separator: ",")
            }
            return found
        }
        var id = "", before: [String: String] = [:]
        try await withHarness(dataDirectory: data) { harness in
            let party = try SimulatedThreeDSServer(harness)
            defer { party.stop() }
            let run = try await rehearse(harness, party, scenarios: scenarios, deadline: 60)
            id = try #require(run["id"]?.stringValue)
            before = verdicts(run)
            #expect(before.count == scenarios.count && before.values.allSatisfy { $0.hasPrefix("passed") }, "\(before)")
            _ = try await harness.post("/admin/runs/\(id)/finish", [])
        }
        try await withHarness(dataDirectory: data) { harness in
            let after = verdicts(try JSONReader.parse(try await harness.get("/admin/runs/\(id)").body).value)
            for scenario in scenarios {
                #expect(after[scenario] == before[scenario], "\(scenario): \(after[scenario] ?? "absent") after the restart, \(before[scenario] ?? "absent") before")
            }
        }
    }

    /// An RRes naming another transaction cannot be relayed: the DS answers the ACS with Erro 301 and sends the same
    /// to the 3DS Server (Core specification 5.9.10, DS RRes message handling; Table A.4, 301), and the ACS records it.
    @Test func anRResOfAnotherTransactionIsAnsweredWithErro301ToTheACSAndThe3DSServer() async throws {
        try await withHarness { harness in
            let party = try SimulatedThreeDSServer(harness, bugs: [.rresWithWrongAcsTransID])
            defer { party.stop() }
            let run = try await rehearse(harness, party, scenarios: ["decoupled"])
            let entry = try #require(run["cases"]?.arrayValue?.first)
            let dsTransID = try #require(entry["transactions"]?.arrayValue?.first?["dsTransID"]?.stringValue, "\(entry)")
            let received = party.erroReceived
            #expect(received.map { $0["errorCode"]?.stringValue } == ["301"], "\(received)")
            #expect(received.first?["errorMessageType"]?.stringValue == "RRes")
            #expect(received.first?["errorDetail"]?.stringValue?.contains("acsTransID") == true)
            let ds = try JSONReader.parse(try await harness.get("/admin/ds/transactions/\(dsTransID)").body).value
            let acsTransID = try #require(ds["acsTransID"]?.stringValue, "\(ds)")
            let acs = try JSONReader.parse(try await harness.get("/admin/acs/transactions/\(acsTransID)").body).value
            #expect(acs["resultsDelivery"]?.stringValue?.hasPrefix("Erro 301") == true, "\(acs)")
        }
    }

    @Test(arguments: SimulatedThreeDSServer.Bug.allCases)
    func a3DSServerWithABugFailsTheCheckThatNamesIt(_ bug: SimulatedThreeDSServer.Bug) async throws {
        // The DS waits for an RRes as long as for an ARes (directoryServer.acsTimeoutMs): lowered, so a slow one is late.
        try await withHarness(configure: { if bug == .slowRRes { $0.directoryServer.acsTimeoutMs = 500 } }) { harness in
            let party = try SimulatedThreeDSServer(harness, bugs: [bug])
            defer { party.stop() }
            let (scenario, check, seen): (String, String, String) = switch bug {
            case .noErroAboutInvalidARes: ("fault-ds-missing-field", "ares.erro", "no Erro received about the ARes the scenario spoilt")
            case .sameErroCodeForEverything: ("fault-ds-missing-field", "ares.erro", "errorCode 203, expected 201")
            case .erroAboutValidARes: ("frictionless-y", "ares.erro", "nothing was due")
            case .rresWithWrongAcsTransID: ("decoupled", "rres.valid", "acsTransID")
            case .reusesThreeDSServerTransID: ("frictionless-y", "areq.elements", "was sent again in a later AReq")
            case .rresToEveryRReq: ("fault-rreq-unknown-transaction", "rreq.erro", "an RRes answered the RReq the scenario spoilt")
            case .erroAboutValidRReq: ("decoupled", "rres.valid", "Erro 203 (interactionCounter) answered a valid RReq")
            case .slowRRes: ("decoupled", "rres.valid", "no usable RRes: http://127.0.0.1")
            case .errorDetailNamesNoElement: ("fault-ds-missing-field", "ares.erro", "errorDetail does not name")
            case .reasonCheckedForNOnly: ("negative-ares-rejected-missing-transStatusReason", "ares.erro", "no Erro received about the ARes")
            case .refusesMembersItsVersionDoesNotDefine: ("negative-ares-undefined-trustListStatus", "ares.erro", "nothing was due")
            case .answersAnInvalidErro: ("negative-erro-missing-errorCode", "ares.erro", "an Erro is never answered with an Erro")
            }
            let run = try await rehearse(harness, party, scenarios: [scenario])
            let result = verdict(run, scenario, check)
            #expect(result.status == "failed" && result.verdict == "fail", "\(bug): \(JSONWriter.string(run))")
            #expect(result.detail?.contains(seen) == true, "\(bug): \(result.detail ?? "no detail")")
            // The report says how to fix it, not only what was seen.
            #expect(result.fix?.isEmpty == false)
        }
    }
}
