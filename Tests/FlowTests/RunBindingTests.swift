import EMV3DS
import EMVCrypto
import Foundation
import JSON
import Net
import SDKSimulator
import Testing

/// How transactions are attached to a run's cases: by the `X-Harness-Case` header the party
/// under test sends, else one transaction per case by its scenario; retries and subsets.
@Suite("Test runs: transactions bound to cases exactly")
struct RunBindingTests {
    static func suite(_ scenarios: [String], only: [String] = []) -> JSONValue {
        .object(omittingAbsent: [
            ("name", .string("binding")), ("party", .string("sdk")), ("scenarios", .array(scenarios.map(JSONValue.string))),
            ("versions", .array([.string("2.2.0")])), ("only", only.isEmpty ? nil : .array(only.map(JSONValue.string))),
        ])
    }

    func start(_ harness: RunningHarness, _ suite: JSONValue) async throws -> String {
        let response = try await harness.post("/admin/runs", JSONWriter.write(.object([("suite", suite)])))
        #expect(response.status == .created, "\(response.bodyText)")
        return try #require(try JSONReader.parse(response.body).value["id"]?.stringValue)
    }

    func run(_ harness: RunningHarness, _ id: String) async throws -> JSONValue {
        try JSONReader.parse(try await harness.get("/admin/runs/\(id)").body).value
    }

    func onlyCase(_ run: JSONValue) throws -> JSONValue { try #require(run["cases"]?.arrayValue?.first) }

    /// One frictionless transaction of `pan` through the 3DS Server, tagged with `tag` when given.
    func transaction(_ harness: RunningHarness, pan: String = "4000000000001000", tag: String? = nil) async throws -> SimulationResult {
        var simulator = harness.simulator
        simulator.harnessCase = tag
        let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
        return try await simulator.authenticate(sdk, pan: pan)
    }

    @Test func theScenarioFallbackTakesOneTransactionPerCaseAndATagTakesMore() async throws {
        try await withHarness { harness in
            let id = try await start(harness, Self.suite(["frictionless-y"]))
            _ = try await transaction(harness)
            _ = try await transaction(harness)  // a second untagged one: the case has its transaction already
            #expect(try onlyCase(try await run(harness, id))["transactions"]?.arrayValue?.count == 1)
            _ = try await transaction(harness, tag: "\(id)/frictionless-y/2.2.0/app")
            _ = try await transaction(harness, tag: id)  // the run alone: the case its scenario, version and channel match
            let graded = try onlyCase(try await run(harness, id))
            #expect(graded["transactions"]?.arrayValue?.count == 3 && graded["status"]?.stringValue == "passed", "\(JSONWriter.string(graded))")
            // Every tagged transaction's record names its case.
            let list = try JSONReader.parse(try await harness.get("/inspector/transactions?run=\(id)").body).value
            #expect(list["transactions"]?.arrayValue?.count == 3)
            #expect(list["transactions"]?.arrayValue?.first?["caseTag"]?.stringValue == id)
        }
    }

    @Test func aTagThatNamesNoOpenCaseAttachesNothingAndSaysWhy() async throws {
        try await withHarness { harness in
            let id = try await start(harness, Self.suite(["frictionless-y"]))
            for (tag, reason) in [("no-such-run", "names no run"), ("\(id)/challenge-text/2.2.0/app", "has no case challenge-text/2.2.0/app")] {
                _ = try await transaction(harness, tag: tag)
                let list = try JSONReader.parse(try await harness.get("/inspector/transactions?limit=1").body).value
                let summary = try #require(list["transactions"]?.arrayValue?.first)
                #expect(summary["run"] == nil && summary["caseTagProblem"]?.stringValue?.contains(reason) == true, "\(JSONWriter.string(summary))")
            }
            // The run alone names no case of an N card's scenario.
            _ = try await transaction(harness, pan: "4000000000003006", tag: id)
            let unmatched = try JSONReader.parse(try await harness.get("/inspector/transactions?limit=1").body).value
            #expect(unmatched["transactions"]?.arrayValue?.first?["caseTagProblem"]?.stringValue?.contains("has no case of scenario frictionless-n") == true)
            _ = try await harness.post("/admin/runs/\(id)/finish", [])
            _ = try await transaction(harness, tag: id)
            let list = try JSONReader.parse(try await harness.get("/inspector/transactions?limit=1").body).value
            #expect(list["transactions"]?.arrayValue?.first?["caseTagProblem"]?.stringValue?.contains("finished") == true)
            #expect(try onlyCase(try await run(harness, id))["transactions"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test func aTransactionTaggedForAnotherScenarioFailsTheCaseAndARetryCountsInstead() async throws {
        try await withHarness { harness in
            let id = try await start(harness, Self.suite(["frictionless-y"]))
            // An N card tagged as the Y case: the party bound the wrong transaction.
            _ = try await transaction(harness, pan: "4000000000003006", tag: "\(id)/frictionless-y/2.2.0/app")
            let failed = try onlyCase(try await run(harness, id))
            #expect(failed["status"]?.stringValue == "failed")
            let card = try #require(failed["card"]?.stringValue)
            #expect(failed["problems"]?.arrayValue?.first?.stringValue?.contains("use the case's card \(card)") == true, "\(JSONWriter.string(failed))")

            // No body: every failed case is retried; the retry's verdict counts, the first attempt is kept.
            let retried = try await harness.post("/admin/runs/\(id)/retry", [])
            #expect(retried.status == .ok, "\(retried.bodyText)")
            let pending = try onlyCase(try JSONReader.parse(retried.body).value)
            #expect(pending["status"]?.stringValue == "pending" && pending["attempt"]?.numberText == "2")
            _ = try await transaction(harness)
            let passed = try onlyCase(try await run(harness, id))
            #expect(passed["status"]?.stringValue == "passed" && passed["transactions"]?.arrayValue?.count == 1, "\(JSONWriter.string(passed))")
            // Nothing failed: a retry of every failed case has nothing to do.
            let nothing = try await harness.post("/admin/runs/\(id)/retry", [])
            #expect(nothing.status.code == 409 && nothing.bodyText.contains("no failed case"), "\(nothing.bodyText)")

            // A finished run opens again for a retry of a named case; a case it does not have is refused.
            _ = try await harness.post("/admin/runs/\(id)/finish", [])
            let named = try await harness.post("/admin/runs/\(id)/retry", Array(#"{"cases":["frictionless-y/2.2.0/app"]}"#.utf8))
            #expect(try JSONReader.parse(named.body).value["state"]?.stringValue == "open")
            let unknown = try await harness.post("/admin/runs/\(id)/retry", Array(#"{"cases":["nope/2.2.0/app"]}"#.utf8))
            #expect(unknown.status == .badRequest && unknown.bodyText.contains("no case nope/2.2.0/app"))
            // A request may name a case thousands of times (schemathesis generated one of 9,504 ids): one retry of it.
            // (With a search of the case list per id it held the answer past a client's 10 s under CI load.)
            let many = JSONWriter.write(.object([("cases", .array(Array(repeating: .string("frictionless-y/2.2.0/app"), count: 2_000)))]))
            let repeated = try await harness.post("/admin/runs/\(id)/retry", many)
            #expect(repeated.status == .ok, "\(repeated.bodyText)")
            #expect(try await harness.post("/admin/runs/missing/retry", []).status == .notFound)
        }
    }

    @Test func aCardIssuedToACaseBindsItsTransactionsToThatCaseAlone() async throws {
        try await withHarness { harness in
            let older = try await start(harness, Self.suite(["frictionless-y"]))
            let newer = try await start(harness, Self.suite(["frictionless-y"]))
            let olderCase = try onlyCase(try await run(harness, older))
            let card = try #require(olderCase["card"]?.stringValue)
            // Like the scenario's card: its first six digits and length, and a valid check digit.
            #expect(card != "4000000000001000" && card.hasPrefix("400000") && card.count == 16 && CardNumber.isLuhnValid(card))
            // The scenario's card would go to the newest run; the issued one goes to its case, every time.
            let first = try await transaction(harness, pan: card)
            #expect(first.transStatus == "Y", "the card stands for its case's scenario")
            _ = try await transaction(harness, pan: card)
            #expect(try onlyCase(try await run(harness, older))["transactions"]?.arrayValue?.count == 2)
            #expect(try onlyCase(try await run(harness, newer))["transactions"]?.arrayValue?.isEmpty == true)
            // A scenario that scripts the 3DS Method has it from its own card's range: no card is issued to it.
            let methodRun = try await start(harness, .object([("name", .string("method")), ("party", .string("3ds-server")),
                                                              ("scenarios", .array([.string("method-slow"), .string("frictionless-y")])),
                                                              ("versions", .array([.string("2.2.0")])), ("channels", .array([.string("browser")]))]))
            let cards = try #require(try await run(harness, methodRun)["cases"]?.arrayValue).map { ($0["scenario"]?.stringValue, $0["card"]?.stringValue) }
            #expect(cards.count == 2 && cards.allSatisfy { ($0.0 == "method-slow") == ($0.1 == nil) }, "\(cards)")
            // Once the run is finished its card binds nothing; it still plays its scenario.
            _ = try await harness.post("/admin/runs/\(older)/finish", [])
            #expect(try await transaction(harness, pan: card).transStatus == "Y")
            #expect(try onlyCase(try await run(harness, older))["transactions"]?.arrayValue?.count == 2)
            #expect(try onlyCase(try await run(harness, newer))["transactions"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test func anIssuedCardStillBindsItsCaseAfterARestart() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("harness-cards-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        var id = "", card = ""
        try await withHarness(dataDirectory: data) { harness in
            id = try await start(harness, Self.suite(["frictionless-n"]))
            card = try #require(try onlyCase(try await run(harness, id))["card"]?.stringValue)
        }
        try await withHarness(dataDirectory: data) { harness in
            // The run and its card are read back: the card plays N and goes to the case.
            #expect(try await transaction(harness, pan: card).transStatus == "N")
            let attached = try onlyCase(try await run(harness, id))
            #expect(attached["transactions"]?.arrayValue?.count == 1 && attached["status"]?.stringValue == "passed", "\(JSONWriter.string(attached))")
        }
    }

    @Test func aSubsetRunsOnlyTheCasesNamed() async throws {
        try await withHarness { harness in
            let response = try await harness.post("/admin/runs", JSONWriter.write(.object([
                ("suite", Self.suite(["frictionless-y", "frictionless-n", "challenge-text"], only: ["challenge-text", "frictionless-n/2.2.0/app"])),
            ])))
            let cases = (try JSONReader.parse(response.body).value["cases"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
            #expect(cases == ["frictionless-n/2.2.0/app", "challenge-text/2.2.0/app"], "\(response.bodyText)")
            let bad = try await harness.post("/admin/runs", JSONWriter.write(.object([("suite", Self.suite(["frictionless-y"], only: ["frictionless-n"]))])))
            #expect(bad.status == .badRequest && bad.bodyText.contains("suite.only: frictionless-n"))
            let badTiming = try await harness.post("/admin/runs", Array(#"{"suite":"sdk-app","idleSeconds":0}"#.utf8))
            #expect(badTiming.status == .badRequest && badTiming.bodyText.contains("idleSeconds"))
        }
    }
}
