import Configuration
import EMV3DS
import Foundation
import Harness
import Journal
import JSON
import Runs
import Synchronization
import Testing
import TestSupport

/// A run always ends: a case whose transaction never ends is graded at its deadline, and a run
/// that takes nothing for its idle time finishes itself. Driven by a clock, not by waiting.
@Suite("Test runs: deadlines and the idle end")
struct RunTimingTests {
    final class Clock: Sendable {
        private let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var date: Date { now.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { now.withLock { $0 += seconds } }
    }

    let clock = Clock()
    let journal = Journal()
    let catalog = try! ScenarioFile.load(path: repositoryRoot + "/config/scenarios.yaml")

    func registry() -> RunRegistry {
        let clock = clock
        let runs = RunRegistry(archive: nil) { clock.date }
        journal.setListener(runs)
        return runs
    }

    func suite(_ scenario: String, party: ConformanceCheck.Party = .threeDSServer) -> Suite {
        Suite(name: "timing", party: party, scenarios: [scenario], versions: [.v2_2_0])
    }

    /// A transaction of `scenario` in 2.2.0 that begins and is left open (an ARes D whose RReq never comes).
    func openTransaction(_ scenario: String, channel: String = "01") async -> String {
        let id = UUID().uuidString.lowercased()
        await journal.open(JournalEntry(dsTransID: id, ids: TransactionIDs(), pan: nil, version: "2.2.0", channel: channel, scenario: scenario))
        return id
    }

    @Test func aDecoupledCaseWhoseRReqNeverComesIsGradedAtItsDeadline() async throws {
        let runs = registry()
        let run = try runs.start(suite("fault-decoupled-never"), name: nil, catalog: catalog,
                                 timing: TestRun.Timing(idle: 600, caseDeadline: 30))
        _ = await openTransaction("fault-decoupled-never")
        let attached = try #require(runs.run(run.id))
        #expect(GradedRun(attached, journal: journal, now: clock.date).cases.first?.status == .running)
        clock.advance(30)
        #expect(GradedRun(attached, journal: journal, now: clock.date).cases.first?.status == .passed)
    }

    /// A case under way says what it waits for and when it is graded as it stands: what `run --finish` prints.
    @Test func aCaseUnderWayNamesWhatItWaitsForAndItsDeadline() async throws {
        let runs = registry()
        let run = try runs.start(suite("fault-decoupled-never"), name: nil, catalog: catalog,
                                 timing: TestRun.Timing(idle: 600, caseDeadline: 30))
        let id = await openTransaction("fault-decoupled-never")
        let attached = try #require(runs.run(run.id))
        let running = try #require(GradedRun(attached, journal: journal, now: clock.date).cases.first)
        #expect(running.status == .running && running.waitingFor == ["transaction \(id) to end"], "\(running.waitingFor)")
        #expect(running.json["deadlineAt"]?.stringValue == UTCTime.iso8601(clock.date.addingTimeInterval(30)))
        clock.advance(30)
        let settled = try #require(GradedRun(attached, journal: journal, now: clock.date).cases.first)
        #expect(settled.json["waitingFor"] == nil && settled.json["deadlineAt"] == nil)
    }

    /// A run is told of a transaction as its entry opens, a moment before the journal holds the entry (seen under load: a
    /// run read in that moment failed its case). A record not found is one still coming until the case's deadline.
    @Test func aTransactionAttachedBeforeItsEntryIsKeptIsRunningUntilTheDeadline() async throws {
        let runs = registry()
        let run = try runs.start(suite("frictionless-y"), name: nil, catalog: catalog, timing: TestRun.Timing(idle: 600, caseDeadline: 30))
        // Attached through another journal: this one does not hold the entry.
        let elsewhere = Journal()
        elsewhere.setListener(runs)
        await elsewhere.open(JournalEntry(dsTransID: "d-coming", ids: TransactionIDs(), pan: nil, version: "2.2.0", channel: "01", scenario: "frictionless-y"))
        let attached = try #require(runs.run(run.id))
        let running = try #require(GradedRun(attached, journal: journal, now: clock.date).cases.first)
        #expect(running.status == .running && running.problems.isEmpty, "\(running.problems)")
        clock.advance(30)
        let settled = try #require(GradedRun(attached, journal: journal, now: clock.date).cases.first)
        #expect(settled.status == .failed && settled.problems == ["transaction d-coming: its record is neither in memory nor in the store"], "\(settled.problems)")
    }

    @Test func aChallengeStillOpenAtTheDeadlineFailsWhatWasDue() async throws {
        let runs = registry()
        let run = try runs.start(suite("challenge-text", party: .sdk), name: nil, catalog: catalog,
                                 timing: TestRun.Timing(idle: 600, caseDeadline: 30))
        _ = await openTransaction("challenge-text")
        clock.advance(31)
        let attached = try #require(runs.run(run.id))
        let verdict = try #require(GradedRun(attached, journal: journal, now: clock.date).cases.first)
        #expect(verdict.status == .failed && verdict.failures == ["challenge.end: the challenge had not ended by the case's deadline"], "\(verdict.failures)")
    }

    /// A decoupled case whose RReq was scripted but whose RRes never reached the DS (a 3DS Server that does not
    /// answer, with a deadline shorter than the DS's wait) fails rres.valid; one whose RReq is never sent passes.
    @Test func aDecoupledCaseWithoutItsRResFailsAtTheDeadline() async throws {
        let runs = registry()
        let run = try runs.start(suite("decoupled"), name: nil, catalog: catalog, timing: TestRun.Timing(idle: 600, caseDeadline: 30))
        _ = await openTransaction("decoupled")
        let attached = try #require(runs.run(run.id))
        #expect(GradedRun(attached, journal: journal, now: clock.date).cases.first?.status == .running)
        clock.advance(31)
        let verdict = try #require(GradedRun(attached, journal: journal, now: clock.date).cases.first)
        #expect(verdict.status == .failed && verdict.failures.first?.hasPrefix("rres.valid: the decoupled authentication had not ended by the case's deadline") == true,
                "\(verdict.failures)")
    }

    @Test func aSpoiltRReqThatNeverReachedThe3DSServerFailsAtTheDeadline() async throws {
        let runs = registry()
        let run = try runs.start(suite("fault-rreq-missing-field"), name: nil, catalog: catalog,
                                 timing: TestRun.Timing(idle: 600, caseDeadline: 30))
        _ = await openTransaction("fault-rreq-missing-field")
        clock.advance(31)
        let attached = try #require(runs.run(run.id))
        let verdict = try #require(GradedRun(attached, journal: journal, now: clock.date).cases.first)
        #expect(verdict.status == .failed && verdict.failures.first?.hasPrefix("rreq.erro: no RReq reached the 3DS Server by the case's deadline") == true,
                "\(verdict.failures)")
    }

    @Test func aRunIdlePastItsTimeFinishesItselfAndAttachesNothingMore() async throws {
        let runs = registry()
        let run = try runs.start(suite("frictionless-y"), name: nil, catalog: catalog, timing: TestRun.Timing(idle: 60, caseDeadline: 30))
        clock.advance(59)
        #expect(runs.run(run.id)?.state == .open)
        clock.advance(1)
        let ended = try #require(runs.run(run.id))
        #expect(ended.state == .finished && ended.finishedBecause == "idle: no transaction for 60 s")
        _ = await openTransaction("frictionless-y")
        #expect(runs.run(run.id)?.cases.first?.transactions.isEmpty == true)
        #expect(GradedRun(ended, journal: journal, now: clock.date).cases.first?.problems.first?.hasPrefix("not attempted") == true)
    }

    @Test func eachTransactionAttachedPutsTheIdleEndBack() async throws {
        let runs = registry()
        let run = try runs.start(Suite(name: "two", party: .threeDSServer, scenarios: ["frictionless-y", "frictionless-n"], versions: [.v2_2_0]),
                                 name: nil, catalog: catalog, timing: TestRun.Timing(idle: 60, caseDeadline: 30))
        clock.advance(50)
        _ = await openTransaction("frictionless-y")
        clock.advance(50)
        _ = await openTransaction("frictionless-n")
        #expect(runs.run(run.id)?.state == .open)
        #expect(runs.run(run.id)?.cases.allSatisfy { $0.transactions.count == 1 } == true)
    }

    @Test func onlyThePartyUnderTestFailsItsCases() async throws {
        let runs = registry()
        for (party, expected) in [(ConformanceCheck.Party.sdk, CaseVerdict.Status.passed), (.threeDSServer, .failed)] {
            let run = try runs.start(suite("frictionless-y", party: party), name: nil, catalog: catalog)
            let id = await openTransaction("frictionless-y")
            // The 3DS Server wrote local time: its failure, not the SDK's.
            journal.check(id, .fail(.purchaseDate, "purchaseDate 2 h ahead"))
            journal.end(id, because: "ARes Y")
            let attached = try #require(runs.run(run.id))
            let verdict = try #require(GradedRun(attached, journal: journal, now: clock.date).cases.first)
            #expect(verdict.status == expected, "\(party): \(verdict.failures) \(verdict.warnings)")
            if party == .sdk { #expect(verdict.warnings.first?.contains("not the party under test") == true) }
            _ = runs.finish(run.id)
        }
    }

    @Test func theNewestOpenRunTakesTheTransactionAndAFullAttemptTakesNoMore() async throws {
        let runs = registry()
        let older = try runs.start(suite("frictionless-y"), name: nil, catalog: catalog)
        clock.advance(1)
        let newer = try runs.start(suite("frictionless-y"), name: nil, catalog: catalog)
        _ = await openTransaction("frictionless-y")
        #expect(runs.run(newer.id)?.cases.first?.transactions.count == 1)
        // The newer run's case has its transaction: the next untagged one goes to the older run.
        _ = await openTransaction("frictionless-y")
        #expect(runs.run(older.id)?.cases.first?.transactions.count == 1)
        // Tagged ones keep coming, up to the bound of an attempt.
        for _ in 0..<(RunCase.maxTransactionsPerAttempt + 2) {
            var entry = JournalEntry(dsTransID: UUID().uuidString, ids: TransactionIDs(), pan: nil, version: "2.2.0", channel: "01", scenario: "frictionless-y")
            entry.caseTag = newer.id
            await journal.open(entry)
        }
        let full = try #require(runs.run(newer.id)?.cases.first)
        #expect(full.transactions.count == RunCase.maxTransactionsPerAttempt && full.overflow == 3)
    }
}
