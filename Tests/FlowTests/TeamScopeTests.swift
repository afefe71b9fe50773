import EMV3DS
import EMVCrypto
import Foundation
import JSON
import Net
import SDKSimulator
import Testing
import TestSupport

/// Two pipelines on one harness, each under its team (`/teams/{team}` or `X-Harness-Team`): the pins, load mixes, PRes
/// faults and card-range changes one sets apply to its own transactions alone, it sees and removes its own alone, and its reset undoes what it set
/// and nothing of the other's.
@Suite("Teams: pins, load mixes, PRes faults and card ranges scoped per team")
struct TeamScopeTests {
    /// A card no scenario names: the default scenario's (frictionless Y) unless a pin or a mix says otherwise.
    static let pan = "4111111111111111"

    func transStatus(_ harness: RunningHarness, team: String?, pan: String = TeamScopeTests.pan) async throws -> String? {
        let path = (team.map { "/teams/\($0)" } ?? "") + "/ds/areq"
        return try await harness.postMessage(path, try appAReq(pan: pan))["transStatus"]?.stringValue
    }

    /// The outcome of an app authentication through the harness's 3DS Server at `base`.
    func authenticated(_ harness: RunningHarness, under base: String) async throws -> String? {
        let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
        return try await Simulator(client: harness.client, baseURL: base).authenticate(sdk, pan: Self.pan).record["transStatus"]?.stringValue
    }

    func delete(_ harness: RunningHarness, _ path: String, headers: HTTPHeaders = [:]) async throws -> JSONValue {
        let answer = try await harness.client.execute(HTTPRequest(method: .delete, target: path, headers: headers), url: harness.baseURL + path)
        #expect(answer.status == .ok, "\(path): \(answer.bodyText)")
        return try JSONReader.parse(answer.body).value
    }

    @Test func aTeamsPinsPlayForItsTransactionsAloneAndItsDeleteRemovesItsOwnAlone() async throws {
        try await withHarness { harness in
            let pin = { (scenario: String) in Array(#"{"pan": "\#(Self.pan)", "scenario": "\#(scenario)", "count": 5}"#.utf8) }
            #expect(try await harness.post("/teams/red/admin/pins", pin("frictionless-n")).status == .created)
            #expect(try await harness.post("/teams/blue/admin/pins", pin("frictionless-r")).status == .created)
            #expect(try await transStatus(harness, team: "red") == "N")
            #expect(try await transStatus(harness, team: "blue") == "R")
            #expect(try await transStatus(harness, team: nil) == "Y", "no team: no team's pin")
            #expect(try await transStatus(harness, team: "green") == "Y", "a team without pins: none of the others'")
            // Each lists its own; the shared scope lists none of theirs.
            let red = try JSONReader.parse(try await harness.get("/teams/red/admin/pins").body).value["pins"]?.arrayValue ?? []
            #expect(red.count == 1 && red.first?["scenario"]?.stringValue == "frictionless-n" && red.first?["team"]?.stringValue == "red"
                    && red.first?["remaining"]?.numberText == "4", "\(red)")
            #expect(try JSONReader.parse(try await harness.get("/admin/pins").body).value["pins"]?.arrayValue?.isEmpty == true)
            // The shared scope's DELETE removes no team's pin; the red team's (by header) removes red's alone.
            #expect(try await delete(harness, "/admin/pins")["removed"]?.numberText == "0")
            #expect(try await delete(harness, "/admin/pins", headers: ["X-Harness-Team": "red"])["removed"]?.numberText == "1")
            #expect(try await transStatus(harness, team: "red") == "Y")
            #expect(try await transStatus(harness, team: "blue") == "R")
        }
    }

    /// An app's backend that names its team to the harness's 3DS Server: the team goes on with the AReq, and its pin plays.
    @Test func theHarnesss3DSServerPassesItsRequestorsTeamOnWithTheAReq() async throws {
        try await withHarness { harness in
            let pin = try await harness.post("/teams/red/admin/pins", Array(#"{"pan": "\#(Self.pan)", "scenario": "frictionless-n", "count": 5}"#.utf8))
            #expect(pin.status == .created)
            #expect(try await authenticated(harness, under: harness.baseURL + "/teams/red") == "N")
            #expect(try await authenticated(harness, under: harness.baseURL + "/teams/blue") == "Y")
            #expect(try await authenticated(harness, under: harness.baseURL) == "Y")
        }
    }

    /// Two pipelines on one harness get the verdicts they get alone: red pins the frictionless-y card to N for its own
    /// tests, and blue's run case of frictionless-y on that card passes; red's own run of the case fails, as a pin does.
    @Test func aPipelinesPinChangesItsOwnVerdictsAndNotAnothers() async throws {
        try await withHarness { harness in
            let card = "4000000000001000"  // frictionless-y's
            let pin = try await harness.post("/teams/red/admin/pins", Array(#"{"pan": "\#(card)", "scenario": "frictionless-n", "count": 10}"#.utf8))
            #expect(pin.status == .created, "\(pin.bodyText)")
            func verdict(of team: String) async throws -> String? {
                let suite = #"{"suite": {"name": "one case", "party": "sdk", "scenarios": ["frictionless-y"], "versions": ["2.2.0"]}}"#
                let run = try JSONReader.parse(try await harness.post("/teams/\(team)/admin/runs", Array(suite.utf8)).body).value
                let id = try #require(run["id"]?.stringValue, "\(run)")
                var simulator = Simulator(client: harness.client, baseURL: harness.baseURL + "/teams/\(team)")
                simulator.harnessCase = id
                let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
                _ = try await simulator.authenticate(sdk, pan: card)
                let graded = try JSONReader.parse(try await harness.post("/admin/runs/\(id)/finish", []).body).value
                return graded["cases"]?.arrayValue?.first?["status"]?.stringValue
            }
            #expect(try await verdict(of: "blue") == "passed")
            #expect(try await verdict(of: "red") == "failed", "red's pin applies to red's run")
        }
    }

    @Test func aTeamsLoadMixDrawsItsTransactionsAloneAndEndsWithoutTouchingAnother() async throws {
        try await withHarness { harness in
            let mix = { (scenario: String) in Array(#"{"mix": [{"scenario": "\#(scenario)", "weight": 1}]}"#.utf8) }
            #expect(try await harness.post("/teams/red/admin/load-mix", mix("frictionless-n")).status == .created)
            #expect(try await harness.post("/teams/blue/admin/load-mix", mix("frictionless-r")).status == .created)
            for _ in 0..<3 {
                #expect(try await transStatus(harness, team: "red") == "N")
                #expect(try await transStatus(harness, team: "blue") == "R")
                #expect(try await transStatus(harness, team: nil) == "Y")
            }
            let red = try JSONReader.parse(try await harness.get("/teams/red/admin/load-mix").body).value
            #expect(red["team"]?.stringValue == "red" && red["drawn"]?.numberText == "3" && red["byScenario"]?["frictionless-n"]?.numberText == "3", "\(red)")
            #expect(try JSONReader.parse(try await harness.get("/admin/load-mix").body).value["active"] == .bool(false))
            let metrics = try await harness.get("/metrics").bodyText
            #expect(metrics.contains(#"threeds_load_mix_draws_total{team="blue",scope="default",scenario="frictionless-r"} 3"#), "\(metrics.suffix(1500))")
            // The gauges of each team's mix in force, beside those of no team's.
            #expect(metrics.contains(#"threeds_load_mix_drawn_transactions{team="red",scenario="frictionless-n"} 3"#), "\(metrics.suffix(1500))")
            #expect(metrics.contains(#"threeds_load_mix_drawn_transactions{team="blue",scenario="frictionless-r"} 3"#))
            // Red's end leaves blue's mix drawing, and red's gauge at 0.
            #expect(try await delete(harness, "/teams/red/admin/load-mix")["drawn"]?.numberText == "3")
            #expect(try await harness.get("/metrics").bodyText.contains(#"threeds_load_mix_drawn_transactions{team="red",scenario="frictionless-n"} 0"#))
            #expect(try await transStatus(harness, team: "red") == "Y")
            #expect(try await transStatus(harness, team: "blue") == "R")
            // Red's reset takes its series out of /metrics, gauges and counter alike: a pipeline's own team name leaves no
            // series behind it. Blue's stay.
            _ = try await delete(harness, "/teams/red/admin/team")
            let afterReset = try await harness.get("/metrics").bodyText
            let redSeries = afterReset.split(separator: "\n").filter { $0.contains(#"team="red""#) }
            #expect(redSeries.isEmpty, "\(redSeries)")
            #expect(afterReset.contains(#"threeds_load_mix_draws_total{team="blue",scope="default",scenario="frictionless-r"} 4"#), "\(afterReset.suffix(1500))")
            // A mix of red's after its reset counts anew.
            #expect(try await harness.post("/teams/red/admin/load-mix", mix("frictionless-n")).status == .created)
            #expect(try await transStatus(harness, team: "red") == "N")
            #expect(try await harness.get("/metrics").bodyText.contains(#"threeds_load_mix_draws_total{team="red",scope="default",scenario="frictionless-n"} 1"#))
        }
    }

    @Test func aTeamsResetUndoesWhatItSetAndNothingOfAnothers() async throws {
        try await withHarness { harness in
            for team in ["red", "blue"] {
                #expect(try await harness.post("/teams/\(team)/admin/pins", Array(#"{"pan": "4000000000001000", "scenario": "frictionless-n"}"#.utf8)).status == .created)
                #expect(try await harness.post("/teams/\(team)/admin/load-mix", Array(#"{"mix": [{"scenario": "frictionless-r", "weight": 1}]}"#.utf8)).status == .created)
                let faults = #"{"faults": [{"fault": "missing-field", "value": "dsEndProtocolVersion"}], "count": 3}"#
                #expect(try await harness.post("/teams/\(team)/admin/ds/pres-faults", Array(faults.utf8)).status == .created)
            }
            let reset = try await delete(harness, "/teams/red/admin/team")
            #expect(reset["team"]?.stringValue == "red" && reset["pinsRemoved"]?.numberText == "1" && reset["presFaultsDisarmed"] == .bool(true)
                    && reset["loadMix"]?["active"] == .bool(true), "\(JSONWriter.string(reset))")
            #expect(try await transStatus(harness, team: "red", pan: "4000000000001000") != "N")
            #expect(try await transStatus(harness, team: "red") == "Y")
            #expect(try JSONReader.parse(try await harness.get("/teams/red/admin/ds/pres-faults").body).value["remaining"]?.numberText == "0")
            // Blue's are all there.
            #expect(try await transStatus(harness, team: "blue", pan: "4000000000001000") == "N")
            #expect(try await transStatus(harness, team: "blue") == "R")
            #expect(try JSONReader.parse(try await harness.get("/teams/blue/admin/ds/pres-faults").body).value["remaining"]?.numberText == "3")
            // A PReq of no team takes none of blue's faults.
            let pres = try JSONReader.parse(try await harness.post("/ds/preq", JSONWriter.write(PreparationTests.preq())).body).value
            #expect(pres["messageType"]?.stringValue == "PRes" && pres["dsEndProtocolVersion"] != nil, "\(JSONWriter.string(pres).prefix(300))")
            let spoilt = try JSONReader.parse(try await harness.post("/teams/blue/ds/preq", JSONWriter.write(PreparationTests.preq())).body).value
            #expect(spoilt["messageType"]?.stringValue == "PRes" && spoilt["dsEndProtocolVersion"] == nil)
        }
    }

    /// A team that deletes a card range deletes it for its own PReqs and AReqs alone: its PRes lists the change under its
    /// serial, its AReq on a card of that range fails `areq.card-range`; another team's and no team's PReqs get every range
    /// at serial 0, and their AReqs pass. The team's reset gives it the configured ranges again.
    @Test func aTeamsCardRangeChangesAreItsPReqsAloneAndGoWithItsReset() async throws {
        try await withHarness { harness in
            let listing = try JSONReader.parse(try await harness.get("/admin/ds/card-ranges").body).value
            let visa = try #require(listing["cardRangeData"]?.arrayValue?.first { range in
                (range["startRange"]?.stringValue).map { $0 <= "4111111111111111" } == true
                    && (range["endRange"]?.stringValue).map { "4111111111111111" <= $0 } == true
            })
            let change = JSONValue.object([("actionInd", .string("D")), ("startRange", visa["startRange"] ?? .null), ("endRange", visa["endRange"] ?? .null)])
            let changed = try await harness.post("/teams/red/admin/ds/card-ranges", JSONWriter.write(change))
            #expect(changed.status == .created, "\(changed.bodyText)")
            let redSerial = try JSONReader.parse(changed.body).value["serialNum"]?.stringValue
            #expect(redSerial?.hasSuffix("-1") == true)
            func preq(_ team: String?, serialNum: String? = nil) async throws -> JSONValue {
                try await harness.postMessage((team.map { "/teams/\($0)" } ?? "") + "/ds/preq", PreparationTests.preq("3DS_LOA_SER_TEST_020200_0000\(team?.count ?? 0)", serialNum: serialNum))
            }
            // Red's PRes since its serial 0 is its deletion; blue's and no team's have nothing new since theirs, whose epoch is
            // not red's: red's serial is none of theirs (307, every range again).
            let zero = String(redSerial?.dropLast() ?? "") + "0", shared = try #require(listing["serialNum"]?.stringValue)
            #expect(zero != shared)
            let redChanges = try await preq("red", serialNum: zero)
            #expect(redChanges["serialNum"]?.stringValue == redSerial && redChanges["cardRangeData"]?.arrayValue?.map { $0["actionInd"] } == [.string("D")],
                    "\(JSONWriter.string(redChanges))")
            for team in ["blue", nil] as [String?] {
                let other = try await preq(team, serialNum: shared)
                #expect(other["serialNum"]?.stringValue == shared && other["cardRangeData"] == nil, "\(team ?? "no team"): \(JSONWriter.string(other))")
                #expect(try await preq(team, serialNum: redSerial)["errorCode"]?.stringValue == "307")
            }
            // The AReqs: red's card is in no range of red's; blue's is.
            func cardRangeVerdict(_ team: String?) async throws -> String? {
                _ = try await transStatus(harness, team: team)
                let newest = try JSONReader.parse(try await harness.get("/inspector/transactions?limit=1").body).value
                return try await harness.checkVerdicts(try #require(newest["transactions"]?.arrayValue?.first?["dsTransID"]?.stringValue))["areq.card-range"]?.verdict
            }
            #expect(try await cardRangeVerdict("red") == "fail")
            #expect(try await cardRangeVerdict("blue") == "pass")
            #expect(try await cardRangeVerdict(nil) == "pass")
            // Red's reset drops its change: its listing is the configured ranges at serial 0 again.
            #expect(try await delete(harness, "/teams/red/admin/team")["cardRangeChangesDropped"]?.numberText == "1")
            let after = try JSONReader.parse(try await harness.get("/teams/red/admin/ds/card-ranges").body).value
            #expect(after["serialNum"]?.stringValue == shared && after["cardRangeData"]?.arrayValue?.count == listing["cardRangeData"]?.arrayValue?.count)
            #expect(try await cardRangeVerdict("red") == "pass")
            // A change after the reset numbers anew under another epoch: the serial red gave before it is refused.
            #expect(try await harness.post("/teams/red/admin/ds/card-ranges", JSONWriter.write(change)).status == .created)
            #expect(try await preq("red", serialNum: redSerial)["errorCode"]?.stringValue == "307")
        }
    }

    @Test(arguments: ["/teams/Red/admin/pins", "/teams/-x/admin/pins", "/teams/Red/ds/preq", "/teams/Red/health", "/admin/team"])
    func aNameThatIsNoTeamNameOrAResetWithoutATeamIs400WithTheReason(_ path: String) async throws {
        try await withHarness { harness in
            let answer = try await harness.client.execute(HTTPRequest(method: .delete, target: path), url: harness.baseURL + path)
            #expect(answer.status == .badRequest, "\(answer.bodyText)")
            #expect(answer.bodyText.contains(path == "/admin/team" ? "name the team to reset" : "is not a team name"), "\(answer.bodyText)")
        }
    }
}
