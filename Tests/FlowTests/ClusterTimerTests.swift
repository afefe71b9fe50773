import Foundation
import JSON
import Net
import Testing
import TestSupport

/// A cluster's timers whose instance died: another instance runs them once they are overdue and the dead one is no longer
/// heard of. Each waits ten to twenty seconds for the store's clock, not the CPU: a suite apart from ``ClusterTests``, whose
/// tests run one at a time, so that those waits pass while the others run.
@Suite("A cluster's timers after their instance died", .enabled(if: HarnessCluster.missing == nil, Comment(rawValue: HarnessCluster.missing ?? "")))
struct ClusterTimerTests {
    /// A decoupled authentication whose instance dies (`kill -9`) before its result is due: another instance
    /// claims the result's job once it is overdue, takes the DS transaction up from the store, and the RReq
    /// arrives at the 3DS Server once (a 3DS Server under test here, answering at its own URL).
    @Test func aDecoupledResultDueFromAKilledInstanceArrives() async throws {
        let cluster = try await HarnessCluster.start()
        defer { cluster.stop() }
        let threeDSServer = try RReqReceiver()
        defer { threeDSServer.stop() }
        let client = cluster.client
        // Decoupled, the RReq Y 6 seconds after the ARes: time enough to kill its instance first, however slow the machine.
        let pan = "4000000000190001"
        let pin = try await client.post(cluster.publicURL + "/admin/pins", body: Array(#"""
            {"pan":"\#(pan)","scenario":{"name":"slow-decoupled","description":"decoupled, late","decoupled":{"transStatus":"Y","delay":6}}}
            """#.utf8))
        #expect(pin.status == .created, "\(pin.bodyText)")
        let areq = try appAReq(pan: pan, replacing: [
            "threeDSServerURL": .string(threeDSServer.url),
            "threeDSRequestorDecReqInd": .string("Y"), "threeDSRequestorDecMaxTime": .string("00010"),
        ])
        let ares = try JSONReader.parse(try await client.post(cluster.publicURL + "/ds/areq", body: JSONWriter.write(areq)).body).value
        #expect(ares["transStatus"]?.stringValue == "D", "\(ares)")
        let dsTransID = try #require(ares["dsTransID"]?.stringValue)
        let acsTransID = try #require(ares["acsTransID"]?.stringValue)
        // The ACS's instance, as the store names it, dies before the result is due: the DS's too, as a transaction's roles
        // share the instance that began it.
        try await cluster.killHome(role: "acs", id: acsTransID)
        try #require(threeDSServer.received.isEmpty, "the RReq came before the kill")
        // Due 6 s after the ARes, overdue 3 s later, claimed within the next second.
        let results = try await threeDSServer.awaitRReqs(settled: cluster.noJobsLeft)
        #expect(results.count == 1, "\(results.count) RReqs: \(results.map { JSONWriter.string($0) })")
        #expect(results.first?["dsTransID"]?.stringValue == dsTransID && results.first?["transStatus"]?.stringValue == "Y", "\(results)")
        // Sent by a surviving instance's claim of the orphaned job.
        #expect(cluster.instances.contains { $0.process.isRunning && $0.process.output.contains("RReq of a transaction whose instance is gone sent") })
        #expect(try await cluster.psql("SELECT count(*) FROM harness_jobs") == "0")
    }

    /// A challenge whose instance dies before its first CReq still ends at the ACS's time limit: the limit is a job
    /// in the store, which another instance claims once it is overdue and the home is not heard of (15 s); it takes
    /// the challenge up and reports it timed out (RReq challengeCancel 05, no CReq received), once.
    @Test func theTimeLimitOfAChallengeWhoseInstanceDiedEndsIt() async throws {
        let cluster = try await HarnessCluster.start(configuration: "accessControlServer:\n  challengeTimeout: 5")
        defer { cluster.stop() }
        let threeDSServer = try RReqReceiver()
        defer { threeDSServer.stop() }
        let areq = try appAReq(pan: "4000000000110009", replacing: ["threeDSServerURL": .string(threeDSServer.url)])
        let ares = try JSONReader.parse(try await cluster.client.post(cluster.publicURL + "/ds/areq", body: JSONWriter.write(areq)).body).value
        let acsTransID = try #require(ares["acsTransID"]?.stringValue, "\(ares)")
        try await cluster.killHome(role: "acs", id: acsTransID)
        try #require(threeDSServer.received.isEmpty, "the RReq came before the kill")
        let results = try await threeDSServer.awaitRReqs(settled: cluster.noJobsLeft)
        #expect(results.count == 1, "\(results.count) RReqs: \(results.map { JSONWriter.string($0) })")
        #expect(results.first?["acsTransID"]?.stringValue == acsTransID && results.first?["challengeCancel"]?.stringValue == "05", "\(results)")
        #expect(try await cluster.psql("SELECT count(*) FROM harness_jobs") == "0")
    }
}
