import Configuration
import EMV3DS
import Messaging
import Foundation
import Harness
import JSON
import Net
import Testing
import ThreeDSServer

/// PReq/PRes by serial number, and what the DS grades of a 3DS Server's PReqs: the serialNum of its last
/// PRes (`preq.serial-number`), a cache rather than a PReq per transaction (`preq.frequency`), and AReqs
/// only for cards and versions the ranges offer now (`areq.card-range`). The PReq checks are graded on the
/// 3DS Server's next AReq, the unit of a run's cases. (/n software's 3-D Secure V2 documentation of
/// RequestCardRanges and CardRange describes the same serial-number and actionInd use.)
@Suite("Card ranges by serial number, and the 3DS Server's PReqs graded")
struct PreparationTests {
    static func preq(_ refNumber: String = "3DS_LOA_SER_TEST_020200_00001", serialNum: String? = nil) -> JSONValue {
        .object(omittingAbsent: [
            ("messageType", .string("PReq")), ("messageVersion", .string("2.2.0")), ("threeDSServerRefNumber", .string(refNumber)),
            ("threeDSServerTransID", .string(UUID().uuidString.lowercased())), ("serialNum", serialNum.map(JSONValue.string)),
        ])
    }

    /// The range of the DS's listing that holds `pan`.
    func range(_ harness: RunningHarness, holding pan: String) async throws -> JSONValue {
        let listing = try JSONReader.parse(try await harness.get("/admin/ds/card-ranges").body).value
        return try #require(listing["cardRangeData"]?.arrayValue?.first { range in
            guard let start = range["startRange"]?.stringValue, let end = range["endRange"]?.stringValue else { return false }
            let card = String(pan.prefix(start.count))
            return start <= card && card <= end
        })
    }

    func change(_ harness: RunningHarness, _ action: String, _ range: JSONValue, _ extra: [(String, JSONValue)] = []) async throws -> HTTPResponse {
        let body = JSONValue.object([("actionInd", .string(action)), ("startRange", range["startRange"] ?? .null),
                                     ("endRange", range["endRange"] ?? .null)] + extra)
        return try await harness.post("/admin/ds/card-ranges", JSONWriter.write(body))
    }

    /// The checks the DS recorded on the newest AReq of `refNumber` for `pan` in `version`.
    func checks(_ harness: RunningHarness, refNumber: String, pan: String = "4000000000001000",
                version: MessageVersion = .v2_2_0) async throws -> [String: (verdict: String, detail: String)] {
        _ = try await harness.postMessage("/ds/areq", try appAReq(pan: pan, version: version, replacing: ["threeDSServerRefNumber": .string(refNumber)]))
        let list = try JSONReader.parse(try await harness.get("/inspector/transactions?limit=1").body).value
        return try await harness.checkVerdicts(try #require(list["transactions"]?.arrayValue?.first?["dsTransID"]?.stringValue))
    }

    @Test func theDSGivesEveryRangeThenWhatChangedSinceASerialAndRefusesAnUnknownSerial() async throws {
        try await withHarness { harness in
            let full = try await harness.postMessage("/ds/preq", Self.preq())
            let serial = try #require(full["serialNum"]?.stringValue)
            #expect((full["cardRangeData"]?.arrayValue?.count ?? 0) > 3 && full["cardRangeData"]?.arrayValue?.allSatisfy { $0["actionInd"] == .string("A") } == true)
            // Nothing changed: no cardRangeData, the same serial.
            let same = try await harness.postMessage("/ds/preq", Self.preq(serialNum: serial))
            #expect(same["serialNum"]?.stringValue == serial && same["cardRangeData"] == nil, "\(JSONWriter.string(same))")

            let mastercard = try await range(harness, holding: "5100000000000008")
            #expect(try await change(harness, "D", mastercard).status == .created)
            let visa = try await range(harness, holding: "4000000000001000")
            let modified = try await change(harness, "M", visa, [("acsEndProtocolVersion", .string("2.1.0"))])
            #expect(modified.status == .created)
            let newSerial = try #require(try JSONReader.parse(modified.body).value["serialNum"]?.stringValue)
            #expect(newSerial != serial)
            // The changes since the first serial, in order: D then M.
            let delta = try await harness.postMessage("/ds/preq", Self.preq(serialNum: serial))
            let entries = delta["cardRangeData"]?.arrayValue ?? []
            #expect(entries.map { $0["actionInd"]?.stringValue ?? "" } == ["D", "M"] && delta["serialNum"]?.stringValue == newSerial, "\(JSONWriter.string(delta))")
            #expect(entries.last?["acsEndProtocolVersion"]?.stringValue == "2.1.0" && entries.first?["startRange"] == mastercard["startRange"])
            // Added back: A.
            #expect(try await change(harness, "A", mastercard).status == .created)
            // A serial this DS never gave: Erro 307 naming serialNum.
            let erro = try await harness.postMessage("/ds/preq", Self.preq(serialNum: "0-99"))
            #expect(erro["messageType"]?.stringValue == "Erro" && erro["errorCode"]?.stringValue == "307" && erro["errorDetail"]?.stringValue == "serialNum",
                    "\(JSONWriter.string(erro))")
            // Bad changes are refused with the reason.
            #expect(try await change(harness, "D", .object([("startRange", .string("4111111111111111")), ("endRange", .string("4111111111111112"))])).status == .notFound)
            #expect(try await change(harness, "A", visa).status == .conflict)
            #expect(try await change(harness, "X", visa).status == .badRequest)
        }
    }

    @Test func a3DSServerThatAsksForEveryRangeBeforeEachTransactionFailsSerialAndFrequency() async throws {
        try await withHarness { harness in
            let buggy = "3DS_LOA_SER_BUGS_020200_00001"
            _ = try await harness.postMessage("/ds/preq", Self.preq(buggy))
            let first = try await checks(harness, refNumber: buggy)
            #expect(first["preq.serial-number"]?.verdict == "pass" && first["preq.frequency"]?.verdict == "pass", "\(first)")
            _ = try await harness.postMessage("/ds/preq", Self.preq(buggy))
            let second = try await checks(harness, refNumber: buggy)
            #expect(second["preq.serial-number"]?.verdict == "fail" && second["preq.serial-number"]?.detail.contains("without serialNum") == true, "\(second)")
            #expect(second["preq.frequency"]?.verdict == "fail" && second["preq.frequency"]?.detail.contains("not one per transaction") == true, "\(second)")
            // Graded once: the AReq after carries no PReq check.
            #expect(try await checks(harness, refNumber: buggy)["preq.frequency"] == nil)
        }
    }

    /// A test run is where a 3DS Server may start without a card-range cache: restarted between two pipelines' runs (or
    /// a second pipeline's first job on a shared harness), its first PReq asks for every range at once, and passes; in
    /// the same run, a PReq that drops the serial it was given still fails both checks.
    @Test func a3DSServerRestartedBetweenTwoRunsPassesBothAndOneThatDropsItsSerialInARunFails() async throws {
        try await withHarness { harness in
            let ref = "3DS_LOA_SER_REST_020200_00001"
            func startRun() async throws {
                let suite = JSONValue.object([("suite", .object([("name", .string("PReq")), ("party", .string("3ds-server")),
                                                                 ("scenarios", .array([.string("frictionless-y")])), ("versions", .array([.string("2.2.0")]))]))])
                #expect(try await harness.post("/admin/runs", JSONWriter.write(suite)).status == .created)
            }
            for run in 1...2 {
                try await startRun()
                // Started with no cache: every range, then a transaction.
                _ = try await harness.postMessage("/ds/preq", Self.preq(ref))
                let first = try await checks(harness, refNumber: ref)
                #expect(first["preq.serial-number"]?.verdict == "pass" && first["preq.frequency"]?.verdict == "pass", "run \(run): \(first)")
            }
            // Within the second run, the serial it holds dropped: every range asked for again at once.
            _ = try await harness.postMessage("/ds/preq", Self.preq(ref))
            let dropped = try await checks(harness, refNumber: ref)
            #expect(dropped["preq.serial-number"]?.verdict == "fail" && dropped["preq.frequency"]?.verdict == "fail", "\(dropped)")
        }
    }

    @Test func a3DSServerThatRefreshesWithItsSerialAfterAChangePasses() async throws {
        try await withHarness { harness in
            let good = "3DS_LOA_SER_GOOD_020200_00001"
            let pres = try await harness.postMessage("/ds/preq", Self.preq(good))
            #expect(try await change(harness, "D", try await range(harness, holding: "5100000000000008")).status == .created)
            _ = try await harness.postMessage("/ds/preq", Self.preq(good, serialNum: pres["serialNum"]?.stringValue))
            let found = try await checks(harness, refNumber: good)
            #expect(found["preq.serial-number"]?.verdict == "pass" && found["preq.frequency"]?.verdict == "pass", "\(found)")
        }
    }

    @Test func anAReqForADeletedRangeOrAVersionItNoLongerOffersFailsCardRange() async throws {
        try await withHarness { harness in
            let ref = "3DS_LOA_SER_CACH_020200_00001"
            #expect(try await checks(harness, refNumber: ref)["areq.card-range"]?.verdict == "pass")
            let visa = try await range(harness, holding: "4000000000001000")
            #expect(try await change(harness, "M", visa, [("acsEndProtocolVersion", .string("2.1.0"))]).status == .created)
            let modified = try await checks(harness, refNumber: ref)
            #expect(modified["areq.card-range"]?.verdict == "fail" && modified["areq.card-range"]?.detail.contains("2.2.0 is not offered") == true, "\(modified)")
            #expect(try await checks(harness, refNumber: ref, version: .v2_1_0)["areq.card-range"]?.verdict == "pass")
            #expect(try await change(harness, "D", try await range(harness, holding: "5100000000000008")).status == .created)
            let deleted = try await checks(harness, refNumber: ref, pan: "5100000000000008")
            #expect(deleted["areq.card-range"]?.verdict == "fail" && deleted["areq.card-range"]?.detail.contains("no card range") == true, "\(deleted)")
        }
    }

    /// Lookups that find the cache stale while a PReq is under way wait for its PRes: eight at once on a fresh harness, its
    /// first PRes late, make one PReq (each sending its own, all but the first would lack the serialNum the first PRes gives).
    @Test func concurrentLookupsMakeOnePReq() async throws {
        try await withHarness { harness in
            // The first PRes 500 ms late: the other lookups come while its PReq is under way.
            let late = JSONValue.object([("faults", .array([.object([("fault", .string("latency")), ("value", .string("500"))])])), ("count", .number("1"))])
            let armed = try await harness.post("/admin/ds/pres-faults", JSONWriter.write(late))
            #expect(armed.status == .created, "\(armed.bodyText)")
            let body = JSONWriter.write(.object([("acctNumber", .string("4000000000001000"))]))
            try await withThrowingTaskGroup(of: HTTPResponse.self) { group in
                for _ in 0..<8 { group.addTask { try await harness.post("/3ds-server/versions", body) } }
                for try await response in group { #expect(response.status == .ok, "\(response.bodyText)") }
            }
            let metrics = try await harness.get("/metrics").bodyText
            let preqs = metrics.split(separator: "\n").first { $0.hasPrefix(#"threeds_http_requests_total{route="/ds/preq",method="POST",status="200"}"#) }
            #expect(preqs?.hasSuffix(" 1") == true, "\(preqs ?? "no PReq counted")")
        }
    }

    /// The harness's own 3DS Server caches the ranges: two card lookups make one PReq, and its AReqs pass the PReq
    /// checks. Without its cache (cardRangeRefreshSeconds 0) it is the 3DS Server that asks before each transaction.
    @Test(arguments: [(3600.0, "pass"), (0.0, "fail")])
    func theHarnesss3DSServerCachesTheRanges(_ refresh: Double, _ expected: String) async throws {
        try await withHarness(configure: { $0.threeDSServer.cardRangeRefreshSeconds = refresh }) { harness in
            for _ in 0..<2 {
                let response = try await harness.post("/3ds-server/versions", JSONWriter.write(.object([("acctNumber", .string("4000000000001000"))])))
                #expect(response.status == .ok, "\(response.bodyText)")
            }
            let found = try await checks(harness, refNumber: harness.app.configuration.threeDSServer.referenceNumber)
            #expect(found["preq.frequency"]?.verdict == expected && found["preq.serial-number"]?.verdict == "pass", "\(found)")
        }
    }

    // MARK: PRes faults (pres.erro)

    /// Arms faults for the next PReq of `refNumber`.
    func arm(_ harness: RunningHarness, _ faults: [(String, String?)], for refNumber: String? = nil, count: Int = 1) async throws -> HTTPResponse {
        let body = JSONValue.object(omittingAbsent: [
            ("faults", .array(faults.map { .object(omittingAbsent: [("fault", .string($0.0)), ("value", .string($0.1))]) })),
            ("count", .number(String(count))), ("threeDSServerRefNumber", .string(refNumber)),
        ])
        return try await harness.post("/admin/ds/pres-faults", JSONWriter.write(body))
    }

    /// A simulated 3DS Server's PReq: the PRes validated as a correct 3DS Server does, and when it fails, the
    /// Erro a correct one posts to the DS (`erroCode` replaces its code: a 3DS Server that names the wrong one).
    func prepare(_ harness: RunningHarness, _ refNumber: String, validates: Bool, erroCode: String? = nil) async throws {
        let preq = Self.preq(refNumber)
        let bytes = try await harness.post("/ds/preq", JSONWriter.write(preq)).body
        guard validates else { return }
        do {
            _ = try MessageEnvelope.read(bytes, rules: PreparationRules.pRes, request: preq)
        } catch {
            var erro = error.erro(from: .threeDSServer).json
            erro.set("threeDSServerTransID", preq["threeDSServerTransID"])
            if let erroCode { erro.set("errorCode", .string(erroCode)) }
            #expect(try await harness.post("/ds/preq", JSONWriter.write(erro)).status == .ok)
        }
    }

    @Test func a3DSServerThatKeepsASpoiltPResFailsPResErroAndOneThatAnswersItWithTheErroPasses() async throws {
        try await withHarness { harness in
            let spoilt = [("missing-field", Optional("dsEndProtocolVersion"))]
            let buggy = "3DS_LOA_SER_KEEP_020200_00001"
            #expect(try await arm(harness, spoilt, for: buggy).status == .created)
            try await prepare(harness, buggy, validates: false)
            let kept = try await checks(harness, refNumber: buggy)
            #expect(kept["pres.erro"]?.verdict == "fail" && kept["pres.erro"]?.detail.contains("no Erro came") == true
                    && kept["pres.erro"]?.detail.contains("201, errorDetail naming dsEndProtocolVersion") == true, "\(kept)")

            let good = "3DS_LOA_SER_GOOD_020200_00002"
            #expect(try await arm(harness, spoilt, for: good).status == .created)
            try await prepare(harness, good, validates: true)
            let answered = try await checks(harness, refNumber: good)
            #expect(answered["pres.erro"]?.verdict == "pass", "\(answered)")
            // The refused PRes gave nothing to keep: the PReq after it, without serialNum, is no fault.
            try await prepare(harness, good, validates: true)
            let again = try await checks(harness, refNumber: good)
            #expect(again["preq.serial-number"]?.verdict == "pass" && again["pres.erro"] == nil, "\(again)")

            let wrongCode = "3DS_LOA_SER_CODE_020200_00001"
            #expect(try await arm(harness, spoilt, for: wrongCode).status == .created)
            try await prepare(harness, wrongCode, validates: true, erroCode: "203")
            let coded = try await checks(harness, refNumber: wrongCode)
            #expect(coded["pres.erro"]?.verdict == "fail" && coded["pres.erro"]?.detail.contains("errorCode 203, expected 201") == true, "\(coded)")
        }
    }

    @Test func a3DSServerThatAnswersAValidPResOrTheDSsErroWithAnErroFailsPResErro() async throws {
        try await withHarness { harness in
            // Every PRes refused: a 3DS Server whose validation is wrong.
            let refusesAll = "3DS_LOA_SER_ERRO_020200_00001"
            let preq = Self.preq(refusesAll)
            _ = try await harness.postMessage("/ds/preq", preq)
            let erro = InvalidMessage(Violation(field: "cardRangeData", code: .formatInvalid, reason: "refused"), about: preq).erro(from: .threeDSServer)
            var json = erro.json
            json.set("threeDSServerTransID", preq["threeDSServerTransID"])
            json.set("errorMessageType", .string("PRes"))
            #expect(try await harness.post("/ds/preq", JSONWriter.write(json)).status == .ok)
            let valid = try await checks(harness, refNumber: refusesAll)
            #expect(valid["pres.erro"]?.verdict == "fail" && valid["pres.erro"]?.detail.contains("nothing was due") == true, "\(valid)")

            // The DS answers the PReq with an Erro: a correct 3DS Server takes it (an Erro is never answered with an Erro).
            let taker = "3DS_LOA_SER_TAKE_020200_00001"
            #expect(try await arm(harness, [("erro", "403")], for: taker).status == .created)
            let answer = try await harness.postMessage("/ds/preq", Self.preq(taker))
            #expect(answer["messageType"]?.stringValue == "Erro" && answer["errorCode"]?.stringValue == "403", "\(JSONWriter.string(answer))")
            let taken = try await checks(harness, refNumber: taker)
            #expect(taken["pres.erro"] == nil, "\(taken)")
        }
    }

    /// The harness's own 3DS Server refuses a spoilt PRes with the Erro, keeps no ranges from it, and asks again.
    @Test func theHarnesss3DSServerAnswersASpoiltPResWithAnErroAndAsksAgain() async throws {
        try await withHarness { harness in
            let ref = harness.app.configuration.threeDSServer.referenceNumber
            #expect(try await arm(harness, [("missing-field", "dsTransID")]).status == .created)
            let lookup = { try await harness.post("/3ds-server/versions", JSONWriter.write(.object([("acctNumber", .string("4000000000001000"))]))) }
            let refused = try await lookup()
            #expect(refused.status == .badGateway && refused.bodyText.contains("dsTransID"), "\(refused.bodyText)")
            #expect(try await lookup().status == .ok)
            let found = try await checks(harness, refNumber: ref)
            #expect(found["pres.erro"]?.verdict == "pass" && found["preq.serial-number"]?.verdict == "pass" && found["preq.frequency"]?.verdict == "pass", "\(found)")
        }
    }

    @Test func armedPResFaultsAreTakenByTheNamed3DSServerAndCountedDownAndBadOnesRefused() async throws {
        try await withHarness { harness in
            #expect(try await arm(harness, [("latency", "10"), ("malformed-json", nil)], for: "3DS_LOA_SER_ONLY_020200_00001", count: 2).status == .created)
            // Another 3DS Server's PReq is answered as ever.
            #expect(try await harness.postMessage("/ds/preq", Self.preq("3DS_LOA_SER_ELSE_020200_00001"))["messageType"]?.stringValue == "PRes")
            for remaining in [1, 0] {
                let answer = try await harness.post("/ds/preq", JSONWriter.write(Self.preq("3DS_LOA_SER_ONLY_020200_00001")))
                #expect((try? JSONReader.parse(answer.body)) == nil, "\(answer.bodyText)")
                let listing = try JSONReader.parse(try await harness.get("/admin/ds/pres-faults").body).value
                #expect(listing["remaining"]?.numberText == String(remaining), "\(JSONWriter.string(listing))")
            }
            #expect(try await harness.postMessage("/ds/preq", Self.preq("3DS_LOA_SER_ONLY_020200_00001"))["messageType"]?.stringValue == "PRes")
            for (faults, reason) in [([("wrong-counter", nil)], "not a fault of a DS answer"), ([("no-such-fault", nil)], "is not one of"),
                                     ([("latency", "x")], "milliseconds"), ([], "at least one fault")] as [([(String, String?)], String)] {
                let refused = try await arm(harness, faults)
                #expect(refused.status == .badRequest && refused.bodyText.contains(reason), "\(refused.bodyText)")
            }
            #expect(try await arm(harness, [("latency", "10")], count: 5000).status == .badRequest)
            #expect(try await arm(harness, [("latency", "10")]).status == .created)
            #expect(try await arm(harness, [], count: 0).status == .ok)
            #expect(try await harness.postMessage("/ds/preq", Self.preq())["messageType"]?.stringValue == "PRes")
        }
    }

    /// A 3DS Server whose PReq the DS refused sends no AReq: its run shows the refused PReq, and each case says so
    /// beside "not attempted". A run of the SDK does not (the PReq is no message of the SDK), nor does a valid PReq.
    @Test func aPReqTheDSRefusedAppearsInTheRunOfThe3DSServerBesideItsCasesNotAttempted() async throws {
        try await withHarness { harness in
            func start(_ suite: String) async throws -> String {
                let body = #"{"suite":{"name":"\#(suite)","party":"\#(suite)","scenarios":["frictionless-y"],"versions":["2.2.0"],"channels":["app"]}}"#
                return try #require(try JSONReader.parse(try await harness.post("/admin/runs", Array(body.utf8)).body).value["id"]?.stringValue)
            }
            let server = try await start("3ds-server")
            let sdk = try await start("sdk")
            #expect(try await harness.postMessage("/ds/preq", Self.preq())["messageType"]?.stringValue == "PRes")
            // 35 characters: threeDSServerRefNumber is at most 32 (Annex A).
            let refused = try await harness.postMessage("/ds/preq", Self.preq(String(repeating: "R", count: 35)))
            #expect(refused["errorCode"]?.stringValue == "203" && refused["errorDetail"]?.stringValue == "threeDSServerRefNumber", "\(refused)")
            let finished = try JSONReader.parse(try await harness.post("/admin/runs/\(server)/finish", []).body).value
            let shown = try #require(finished["refusedOutsideCases"]?.arrayValue, "\(JSONWriter.string(finished))")
            #expect(shown.count == 1 && shown.first?["message"]?.stringValue == "PReq")
            #expect(shown.first?["failures"]?.arrayValue?.first?.stringValue?.hasPrefix("preq.elements: 203 threeDSServerRefNumber: length 35") == true, "\(shown)")
            let problem = finished["cases"]?.arrayValue?.first?["problems"]?.arrayValue?.first?.stringValue ?? ""
            #expect(problem.hasPrefix("not attempted") && problem.contains("the latest a PReq (Erro 203 to the PReq; preq.elements: 203 threeDSServerRefNumber"), "\(problem)")
            // The entry is in the inspector, with the PReq and the Erro.
            let entryID = try #require(shown.first?["dsTransID"]?.stringValue)
            let entry = try JSONReader.parse(try await harness.get("/inspector/transactions/\(entryID)").body).value
            #expect(entry["messages"]?.arrayValue?.compactMap { $0["type"]?.stringValue } == ["PReq", "Erro"], "\(entry)")
            // The reports carry it too.
            let junit = try await harness.get("/admin/runs/\(server)/report.xml").bodyText
            #expect(junit.contains("<system-err>refused outside the cases:&#10;PReq refused"), "\(junit)")
            let html = try await harness.get("/admin/runs/\(server)/report.html").bodyText
            #expect(html.contains("Refused outside the cases"))
            let sdkRun = try JSONReader.parse(try await harness.post("/admin/runs/\(sdk)/finish", []).body).value
            #expect(sdkRun["refusedOutsideCases"] == nil, "\(JSONWriter.string(sdkRun))")
        }
    }
}
