import Configuration
import EMV3DS
import Foundation
import JSON
import Net
@testable import SDKSimulator
import TestSupport
import Testing
import EMVCrypto
import Harness

@Suite("Admin controls: pins and scenario reload")
struct AdminControlTests {
    func post(_ harness: RunningHarness, _ path: String, _ body: String) async throws -> (Int, JSONValue?) {
        let response = try await harness.post(path, Array(body.utf8))
        return (response.status.code, try? JSONReader.parse(response.body).value)
    }

    @Test func pinsGoToTheRightTransactionsUnderConcurrency() async throws {
        try await withHarness { harness in
            let pan = "4111111111111111"  // no scenario of its own: frictionless-y
            let (status, pin) = try await post(harness, "/admin/pins", #"{"pan":"4111111111111111","scenario":"frictionless-n","count":3}"#)
            #expect(status == 201)
            #expect(pin?["remaining"] == .number("3"))
            let statuses = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<12 {
                    group.addTask { try await runTransaction(harness, pan: pan, answers: []).final.transStatus }
                }
                return try await group.reduce(into: [String?]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == "N" }.count == 3)
            #expect(statuses.filter { $0 == "Y" }.count == 9)
            let listed = try JSONReader.parse(try await harness.get("/admin/pins").body).value
            #expect(listed["pins"] == .array([]))
        }
    }

    @Test func pinBySDKTransactionWithAnInlineScenario() async throws {
        try await withHarness { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
            let body = #"{"sdkTransID":"\#(sdk.sdkTransID)","scenario":{"name":"inline-r","description":"rejected","transStatus":"R","transStatusReason":"11"}}"#
            #expect(try await post(harness, "/admin/pins", body).0 == 201)
            let result = try await harness.simulator.authenticate(sdk, pan: "4000000000001000")
            #expect(result.transStatus == "R")
            #expect(result.transStatusReason == "11")
            // Used once: the next transaction on that PAN is the file's again.
            #expect(try await runTransaction(harness, pan: "4000000000001000", answers: []).final.transStatus == "Y")
        }
    }

    @Test func listAndClearPins() async throws {
        try await withHarness { harness in
            _ = try await post(harness, "/admin/pins", #"{"pan":"4111111111111111","scenario":"challenge-text"}"#)
            _ = try await post(harness, "/admin/pins", #"{"pan":"4000000000001000","scenario":"frictionless-u","count":5}"#)
            guard case .array(let pins)? = try JSONReader.parse(try await harness.get("/admin/pins").body).value["pins"] else {
                Issue.record("no pins list")
                return
            }
            #expect(pins.count == 2)
            let one = try await harness.client.execute(HTTPRequest(method: .delete, target: "/admin/pins/4111111111111111"), url: harness.baseURL + "/admin/pins/4111111111111111")
            #expect(try JSONReader.parse(one.body).value["removed"] == .number("1"))
            let all = try await harness.client.execute(HTTPRequest(method: .delete, target: "/admin/pins"), url: harness.baseURL + "/admin/pins")
            #expect(try JSONReader.parse(all.body).value["removed"] == .number("1"))
        }
    }

    @Test(arguments: [
        (#"{"scenario":"frictionless-n"}"#, "give exactly one of pan and sdkTransID"),
        (#"{"pan":"4111111111111112","scenario":"frictionless-n"}"#, "is not a Luhn-valid card number"),
        (#"{"pan":"4111111111111111","scenario":"nope"}"#, "no scenario nope"),
        (#"{"pan":"4111111111111111","scenario":"frictionless-n","count":0}"#, "count must be"),
        (#"{"pan":"4111111111111111","scenario":{"name":"x","description":"d","transStatus":"N"}}"#, "transStatusReason: required"),
        (#"not json"#, "body is not JSON"),
        // A delay a Duration cannot hold would trap the process on the first AReq.
        (#"{"pan":"4111111111111111","scenario":{"name":"x","description":"d","decoupled":{"delay":1e19}}}"#, "decoupled.delay: 1e+19 is not 0-86400"),
        (#"{"pan":"4111111111111111","scenario":"frictionless-n","expiresIn":0}"#, "expiresIn must be 1-86400 seconds"),
        (#"{"pan":"4111111111111111","scenario":"frictionless-n","expiresIn":1e300}"#, "expiresIn must be 1-86400 seconds"),
    ])
    func badPinsAre400(body: String, reason: String) async throws {
        try await withHarness { harness in
            let response = try await harness.post("/admin/pins", Array(body.utf8))
            #expect(response.status.code == 400)
            #expect(response.bodyText.contains(reason), "\(response.bodyText)")
        }
    }

    @Test func pinsAreBoundedInSizeAndCountAndExpire() async throws {
        try await withHarness { harness in
            // A body over 64 KiB is 413, whatever it holds.
            let big = #"{"pan":"4111111111111111","scenario":"frictionless-n","padding":""# + String(repeating: "x", count: 70_000) + #""}"#
            #expect(try await harness.post("/admin/pins", Array(big.utf8)).status.code == 413)
            let listed = try await harness.get("/admin/pins")
            #expect(try JSONReader.parse(listed.body).value["pins"] == .array([]))
            let set = try await harness.post("/admin/pins", Array(#"{"pan":"4111111111111111","scenario":"frictionless-n","expiresIn":60}"#.utf8))
            guard case .number(let seconds)? = try JSONReader.parse(set.body).value["expiresIn"] else { Issue.record("no expiresIn"); return }
            #expect((Int(seconds) ?? 0) > 50)
        }
    }

    @Test func reloadKeepsTransactionsInFlightAndRefusesABadFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("scenarios-\(UUID().uuidString).yaml").path
        let original = try String(contentsOfFile: repositoryRoot + "/config/scenarios.yaml", encoding: .utf8)
        try original.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await withHarness(configure: { $0.scenarios = file }) { harness in
            // Challenges under way while the file changes under them, and is reloaded again and again.
            let changed = original.replacingOccurrences(of: "pan: \"4000000000001000\"", with: "pan: \"4000000000001018\"")
            try changed.write(toFile: file, atomically: true, encoding: .utf8)
            let outcomes = try await withThrowingTaskGroup(of: SDKOutcome?.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        if index % 4 == 0 {
                            let response = try await harness.post("/admin/reload", [])
                            #expect(response.status.code == 200)
                        }
                        return try await runTransaction(harness, pan: "4000000000110009", answers: ["1234"]).challenge?.outcome
                    }
                }
                return try await group.reduce(into: [SDKOutcome?]()) { $0.append($1) }
            }
            #expect(outcomes.count == 16)
            #expect(outcomes.allSatisfy { $0 == .completed(.authenticated) })
            let list = try JSONReader.parse(try await harness.get("/admin/scenarios").body).value
            #expect("\(list)".contains("4000000000001018"))

            // A broken file is refused with its reason; the scenarios stay as they were.
            try "defaultScenario: nope\nscenarios: []".write(toFile: file, atomically: true, encoding: .utf8)
            let refused = try await harness.post("/admin/reload", [])
            #expect(refused.status.code == 400)
            #expect(refused.bodyText.contains("defaultScenario nope is not a defined scenario"))
            #expect(try await runTransaction(harness, pan: "4000000000110009", answers: ["1234"]).final.transStatus == "Y")
        }
    }
}
