import Testing
@testable import Net

@Suite("Router")
struct RouterTests {
    private func router() -> Router {
        var router = Router()
        router.get("/health") { _, _ in .text("health") }
        router.get("/3ds-server/transactions/{id}") { _, _ in .text("tx") }
        router.delete("/admin/pins/{pan}") { _, _ in .text("pin") }
        router.post("/ds/areq") { _, _ in .text("areq") }
        return router
    }

    @Test func resolvesStaticAndParameterRoutes() {
        let router = router()
        guard case .found(_, let none, let health) = router.resolve(.get, path: "/health") else { Issue.record("health"); return }
        #expect(none.isEmpty && health == "/health")
        guard case .found(_, let parameters, let route) = router.resolve(.get, path: "/3ds-server/transactions/8a880dc0-d2d2-4067-bcb1-b08d1690b26e") else {
            Issue.record("transactions"); return
        }
        #expect(parameters == ["id": "8a880dc0-d2d2-4067-bcb1-b08d1690b26e"])
        #expect(route == "/3ds-server/transactions/{id}")  // metrics name a route by its pattern, never by the path
        guard case .found = router.resolve(.get, path: "/health/") else { Issue.record("trailing slash"); return }
    }

    /// A module that registers `/admin/runs/{id}/known` after another registered `/admin/runs/{id}/{report}` still has its
    /// route: at the first segment where two routes differ, a literal wins over a parameter.
    @Test(arguments: [false, true]) func aLiteralSegmentWinsOverAParameterWhateverTheOrderOfRegistration(literalFirst: Bool) {
        var router = Router()
        let literal: (inout Router) -> Void = { $0.post("/admin/runs/{id}/known") { _, _ in .text("known") } }
        let parameter: (inout Router) -> Void = { $0.get("/admin/runs/{id}/{report}") { _, _ in .text("report") } }
        if literalFirst { literal(&router); parameter(&router) } else { parameter(&router); literal(&router) }
        guard case .found(_, let parameters, let route) = router.resolve(.post, path: "/admin/runs/r1/known") else {
            Issue.record("POST …/known not found"); return
        }
        #expect(route == "/admin/runs/{id}/known" && parameters == ["id": "r1"])
        guard case .found(_, let reportParameters, _) = router.resolve(.get, path: "/admin/runs/r1/report.xml") else {
            Issue.record("GET …/report.xml not found"); return
        }
        #expect(reportParameters == ["id": "r1", "report": "report.xml"])
    }

    @Test func distinguishesNotFoundFromMethodNotAllowed() {
        let router = router()
        guard case .notFound = router.resolve(.get, path: "/3ds-server/transactions") else { Issue.record("prefix"); return }
        guard case .notFound = router.resolve(.get, path: "/3ds-server/transactions/a/b") else { Issue.record("longer"); return }
        guard case .methodNotAllowed(let allowed) = router.resolve(.get, path: "/ds/areq") else { Issue.record("405"); return }
        #expect(allowed == [.post])
        guard case .found = router.resolve(.head, path: "/health") else { Issue.record("HEAD falls back to GET"); return }
    }
}
