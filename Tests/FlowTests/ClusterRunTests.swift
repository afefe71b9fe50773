import Foundation
import Testing
import TestSupport

/// `simulate --all` through three instances behind HAProxy: the cluster's longest test, and one that waits on the
/// simulator's requests more than on the CPU, so a suite apart from ``ClusterTests``, whose tests run one at a time,
/// and it runs beside them.
@Suite("Every scenario through a cluster", .enabled(if: HarnessCluster.missing == nil, Comment(rawValue: HarnessCluster.missing ?? "")))
struct ClusterRunTests {
    /// `simulate --all --version 2.3.1 --junit` through the balancer: every scenario in both channels passes, and so does
    /// every case of its run, each transaction attached by whichever instance it reached (an SDK's Erro reaching the
    /// challenge's home too). In 2.3.1: a request names its transaction the same way in every version, but for the
    /// follow-up AReqs only 2.3.1 has (SPC's second, a decoupled fallback's 3RI), and every scenario of every version runs
    /// in one instance in `simulate --all`'s flow tests. With the roles calling each other over HTTP (the second pass of
    /// `./harness test`) too: a role begins its leg at its own instance, not through the balancer, so the ACS of a
    /// transaction is where its DS keeps the journal entry, and each case is graded whole (an SDK's Erro, which the ACS
    /// records, among what it grades). One device data style: a DS decrypts with the same PKI files at every instance,
    /// and the flow tests play each style.
    @Test func everyScenarioPassesInBothChannelsThroughThreeInstancesInRoundRobin() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let junit = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-\(UUID().uuidString).xml").path
        defer { try? FileManager.default.removeItem(atPath: junit) }
        let simulate = try await offThePool {
            try ChildProcess.run(harnessBinary, ["simulate", "--url", cluster.publicURL, "--all", "--version", "2.3.1", "--style", "android", "--junit", junit], timeout: 900)
        }
        #expect(simulate.status == 0, "\(simulate.output.suffix(3000))")
        #expect(simulate.output.contains("all passed (118 transactions"), "\(simulate.output.suffix(500))")
        let report = (try? String(contentsOfFile: junit, encoding: .utf8)) ?? ""
        #expect(report.contains("failures=\"0\"") && report.contains("tests=\"118\""), "\(report.prefix(600))")
        #expect(try await cluster.psql("SELECT count(DISTINCT home) FROM transactions WHERE role = 'ds'") == "3")
        // No check of any transaction failed: those of the parties the harness plays itself (its 3DS Server, the simulated
        // SDK) too, which the run shows as warnings at most, as no run here grades them.
        let failedChecks = try await cluster.psql("SELECT count(*) FROM transactions WHERE role = 'journal' AND record LIKE '%\"verdict\":\"fail\"%'")
        #expect(failedChecks == "0", "\(failedChecks) journal entries with a failed check")
        // Not all on one instance: hundreds of CReqs, RReqs and notifications went to the instance that held their transaction.
        let passedOn = try await cluster.metric("threeds_cluster_passed_on_total", labels: "outcome=\"answered\"")
        #expect(passedOn > 200, "\(passedOn) requests passed on")
        #expect(try await cluster.metric("threeds_cluster_passed_on_total", labels: "outcome=\"home-unreachable\"") == 0)
        // Each scrape names the instance it read.
        for instance in cluster.instances {
            #expect(try await cluster.get(instance.url + "/metrics").body.contains(#"threeds_cluster_instance_info{instance_url="\#(instance.url)"} 1"#))
        }
    }
}
