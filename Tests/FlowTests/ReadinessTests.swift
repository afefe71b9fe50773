import Foundation
import Harness
import JSON
import Net
import Testing
import TestSupport

/// `GET /health` is liveness (the process answers), `GET /health/ready` readiness (what a balancer checks): an instance
/// whose store does not answer is alive and not ready, says why, and shows it in `/metrics`; it is ready again once the
/// store answers.
@Suite("Readiness apart from liveness", .serialized)
struct ReadinessTests {
    @Test func anInstanceOnTheDefaultStoreIsReady() async throws {
        try await withHarness { harness in
            let ready = try await harness.get("/health/ready")
            #expect(ready.status == .ok && ready.bodyText == #"{"status":"ready"}"#, "\(ready.bodyText)")
            #expect(try await harness.get("/metrics").bodyText.contains("threeds_store_up 1"))
        }
    }

    @Test(.enabled(if: TemporaryPostgres.missing == nil, Comment(rawValue: TemporaryPostgres.missing ?? "")))
    func aStoreOutageMakesTheInstanceNotReadyAndItsEndReadyAgain() async throws {
        let database = try TemporaryPostgres()
        defer { database.stop() }
        try await withHarness(configure: { configuration in
            configuration.store.backend = "postgres"
            configuration.store.url = ConfigurationSecret(database.url)
        }) { harness in
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
}
