import Net
import Testing
@testable import Harness

@Suite("Metrics: every answer counted under its route, method and status")
struct HarnessMetricsTests {
    private func answer(_ route: String, _ status: HTTPStatus, _ method: HTTPMethod = .get) -> AnsweredRequest {
        AnsweredRequest(route: route, method: method, status: status, duration: .milliseconds(1), annotation: nil)
    }

    /// The `threeds_http_requests_total` line of one series, as the exposition writes it.
    private func count(_ metrics: HarnessMetrics, _ route: String, _ method: String, _ status: Int) -> String? {
        let text = String(decoding: metrics.exposition(storedTransactions: [], archive: nil), as: UTF8.self)
        return text.split(separator: "\n").first {
            $0.hasPrefix("threeds_http_requests_total{") && $0.contains("route=\"\(route)\"") && $0.contains("method=\"\(method)\"")
                && $0.contains("status=\"\(status)\"")
        }.map { String($0.split(separator: " ").last ?? "") }
    }

    @Test func runsAndChangesOfSeriesOnOneThreadAreEachCountedWhereTheyBelong() {
        // A run of the same answer, then another route, status or method, then back: each under its own series.
        let metrics = HarnessMetrics(version: "test")
        for _ in 0..<3 { metrics.answered(answer("/health", .ok)) }
        metrics.answered(answer("/health", .notFound))
        metrics.answered(answer("/ds/areq", .ok, .post))
        metrics.answered(answer("/ds/areq", .ok, .get))
        metrics.answered(answer("/health", .ok))
        #expect(count(metrics, "/health", "GET", 200) == "4")
        #expect(count(metrics, "/health", "GET", 404) == "1")
        #expect(count(metrics, "/ds/areq", "POST", 200) == "1")
        #expect(count(metrics, "/ds/areq", "GET", 200) == "1")
    }

    @Test func twoHarnessesAnsweringOnOneThreadKeepTheirOwnCounts() {
        // Two instances in one process (the tests run many): one's series are never the other's.
        let first = HarnessMetrics(version: "test"), second = HarnessMetrics(version: "test")
        first.answered(answer("/health", .ok))
        second.answered(answer("/health", .ok))
        second.answered(answer("/health", .ok))
        first.answered(answer("/health", .ok))
        #expect(count(first, "/health", "GET", 200) == "2")
        #expect(count(second, "/health", "GET", 200) == "2")
    }
}
