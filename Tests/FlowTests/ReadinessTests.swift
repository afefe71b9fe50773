import Configuration
import Foundation
import Harness
import JSON
import Net
import Store
import Testing
import TestSupport

/// `GET /health` is liveness (the process answers), `GET /health/ready` readiness (what a balancer checks): an instance
/// whose store does not answer is alive and not ready, says why, and shows it in `/metrics`; it is ready again once the
/// store answers.
@Suite("Readiness apart from liveness", .serialized)
struct ReadinessTests {
    /// A harness on a PostgreSQL of its own, which `body` may stop and start.
    func withHarnessOnPostgres(durability: StoreDurability? = nil, _ body: (RunningHarness, TemporaryPostgres) async throws -> Void) async throws {
        let database = try TemporaryPostgres()
        defer { database.stop() }
        try await withHarness(configure: { configuration in
            configuration.store.backend = .postgres
            configuration.store.url = ConfigurationSecret(database.url)
            if let durability { configuration.store.durability = durability }
        }) { harness in try await body(harness, database) }
    }

    @Test func anInstanceOnTheDefaultStoreIsReady() async throws {
        try await withHarness { harness in
            let ready = try await harness.get("/health/ready")
            #expect(ready.status == .ok && ready.bodyText == #"{"status":"ready"}"#, "\(ready.bodyText)")
            #expect(try await harness.get("/metrics").bodyText.contains("threeds_store_up 1"))
        }
    }

    @Test(.enabled(if: TemporaryPostgres.missing == nil, Comment(rawValue: TemporaryPostgres.missing ?? "")))
    func aStoreOutageMakesTheInstanceNotReadyAndItsEndReadyAgain() async throws {
        try await withHarnessOnPostgres { harness, database in
            #expect(try await harness.get("/health/ready").status == .ok)
            try database.pause()
            let down = try await harness.get("/health/ready")
            let reasons = try JSONReader.parse(down.body).value["reasons"]?.arrayValue?.compactMap(\.stringValue) ?? []
            #expect(down.status == .serviceUnavailable && reasons.first?.hasPrefix("store: PostgreSQL") == true, "\(down.bodyText)")
            // Alive all the same: liveness says the process answers.
            #expect(try await harness.get("/health").status == .ok)
            let metrics = try await harness.get("/metrics").bodyText
            #expect(metrics.contains("threeds_store_up 0") && metrics.contains("threeds_ready_info 0"), "\(metrics.suffix(800))")
            try database.resume()
            // The read connection is made anew: ready at once.
            let up = try await harness.get("/health/ready")
            #expect(up.status == .ok, "\(up.bodyText)")
            #expect(try await harness.get("/metrics").bodyText.contains("threeds_store_up 1"))
        }
    }

    /// With `store.durability` answered, an answer whose records the store did not take is not given: an AReq gets the
    /// Erro 403 (Transient System Failure) instead of an ARes while PostgreSQL is down, and nothing acknowledged then
    /// is missing after it is back.
    @Test(.enabled(if: TemporaryPostgres.missing == nil, Comment(rawValue: TemporaryPostgres.missing ?? "")))
    func withAnsweredDurabilityAStoreOutageAcknowledgesNothing() async throws {
        try await withHarnessOnPostgres(durability: .answered) { harness, database in
            #expect(try await harness.postMessage("/ds/areq", try appAReq(pan: "4000000000001000"))["transStatus"]?.stringValue == "Y")
            try database.pause()
            for _ in 0..<3 {
                let answer = try await harness.postMessage("/ds/areq", try appAReq(pan: "4000000000001000"))
                #expect(answer["messageType"]?.stringValue == "Erro" && answer["errorCode"]?.stringValue == "403"
                        && answer["errorComponent"]?.stringValue == "D" && answer["errorMessageType"]?.stringValue == "AReq", "\(answer)")
            }
            // An API request is answered 503 with the reason.
            let api = try await harness.post("/3ds-server/authenticate", Array(#"{}"#.utf8))
            #expect(api.status == .serviceUnavailable && api.bodyText.contains("store.durability"), "\(api.status.code) \(api.bodyText)")
            try database.resume()
            // Back: acknowledged again, and what was acknowledged is in the store.
            var acknowledged: [String] = []
            for _ in 0..<3 {
                let ares = try await harness.postMessage("/ds/areq", try appAReq(pan: "4000000000001000"))
                #expect(ares["transStatus"]?.stringValue == "Y", "\(ares)")
                if let id = ares["dsTransID"]?.stringValue { acknowledged.append(id) }
            }
            for id in acknowledged {
                #expect(try database.psql("SELECT count(*) FROM transactions WHERE role = 'ds' AND id = '\(id)'") == "1", "\(id)")
            }
        }
    }
}
