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

    @Test func distinguishesNotFoundFromMethodNotAllowed() {
        let router = router()
        guard case .notFound = router.resolve(.get, path: "/3ds-server/transactions") else { Issue.record("prefix"); return }
        guard case .notFound = router.resolve(.get, path: "/3ds-server/transactions/a/b") else { Issue.record("longer"); return }
        guard case .methodNotAllowed(let allowed) = router.resolve(.get, path: "/ds/areq") else { Issue.record("405"); return }
        #expect(allowed == [.post])
        guard case .found = router.resolve(.head, path: "/health") else { Issue.record("HEAD falls back to GET"); return }
    }
}
