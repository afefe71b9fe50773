import Configuration
import EMV3DS
@testable import Runs
import Scenarios
import Testing
import TestSupport

/// A case's transactions that fail a check alike (the three SDK styles of a `simulate` run play one case) make one line of
/// its failures and of its JUnit failure, not three.
@Suite("What a failed case says")
struct CaseVerdictTests {
    @Test func aCheckEveryTransactionFailedAlikeIsSaidOnce() throws {
        let catalog = try ScenarioFile.load(path: repositoryRoot + "/config/scenarios.yaml")
        let scenario = try #require(catalog.scenario(named: "challenge-text"))
        let runCase = RunCase(scenario: scenario, version: .v2_2_0, channel: .app, catalog: catalog)
        let missing = CheckResult.fail(.sdkErro, "Erro 203 not received")
        let verdict = CaseVerdict(runCase: runCase, status: .failed,
                                  checks: [("t1", missing), ("t2", missing), ("t3", missing), ("t3", .fail(.challengeEnd, "completed with transStatus Y"))],
                                  problems: [], transactions: [])
        #expect(verdict.failures == ["sdk.erro: Erro 203 not received", "challenge.end: completed with transStatus Y"])
        #expect(verdict.failedChecks.map(\.check) == [.sdkErro, .challengeEnd])
        // A detail of its own is another line.
        let other = CaseVerdict(runCase: runCase, status: .failed, checks: [("t1", missing), ("t2", .fail(.sdkErro, "Erro 201, not 203"))],
                                problems: [], transactions: [])
        #expect(other.failures.count == 2)
    }
}
