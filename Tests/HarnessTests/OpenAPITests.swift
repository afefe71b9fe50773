import Configuration
import EventLoops
import Foundation
import Harness
import Logging
import Testing
import TestSupport
import Yams
import Net

/// openapi.yaml describes every route the harness serves, and nothing else: a route added
/// without its description (or removed with it left behind) fails here.
@Suite("OpenAPI description")
struct OpenAPITests {
    @Test func describesExactlyTheRoutesTheHarnessServes() throws {
        let text = try String(contentsOfFile: repositoryRoot + "/openapi.yaml", encoding: .utf8)
        let document = try #require(try Yams.load(yaml: text) as? [String: Any])
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: Any])
        var described: [String] = []
        for (path, item) in paths {
            let operations = try #require(item as? [String: Any])
            for method in operations.keys where ["get", "post", "put", "delete", "patch"].contains(method) {
                described.append("\(method.uppercased()) \(path)")
            }
        }
        var configuration = try HarnessConfiguration.load(path: repositoryRoot + "/config/harness.yaml")
        configuration.server.httpPort = 0
        configuration.server.httpsPort = nil
        configuration.store.enabled = false  // routes only: nothing to keep
        let app = try HarnessApp(configuration: configuration, baseDirectory: repositoryRoot, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        defer { app.group.shutdown() }
        // Path parameter names may differ ({id} in code, {acsTransID} in the description): compare shapes.
        func shape(_ route: String) -> String { route.replacingOccurrences(of: #"\{[^}]+\}"#, with: "{}", options: .regularExpression) }
        #expect(Set(described.map(shape)) == Set(app.server.routes.map(shape)),
                "described only: \(Set(described.map(shape)).subtracting(app.server.routes.map(shape)).sorted()); served only: \(Set(app.server.routes.map(shape)).subtracting(described.map(shape)).sorted())")
    }
}
