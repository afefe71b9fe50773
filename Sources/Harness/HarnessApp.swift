import Foundation
import Logging
import Net

/// The running harness: its loops, its server and the routes of every role.
public final class HarnessApp: Sendable {
    public let configuration: HarnessConfiguration
    public let group: EventLoopGroup
    public let server: HTTPServer
    private let logger: Logger

    /// Builds the app; relative file paths in `configuration` are resolved against `baseDirectory`.
    public init(configuration: HarnessConfiguration, baseDirectory: String = FileManager.default.currentDirectoryPath,
                logger: Logger = Logger(label: "harness")) throws {
        self.configuration = configuration
        self.logger = logger
        group = EventLoopGroup(loopCount: configuration.loopCount)
        do {
            server = try HTTPServer(configuration: configuration.serverConfiguration(baseDirectory: baseDirectory),
                                    router: Self.routes(), group: group, logger: logger)
        } catch {
            group.shutdown()
            throw error
        }
    }

    public func start() throws {
        do { try server.start() } catch {
            group.shutdown()
            throw error
        }
    }

    /// Graceful stop: requests in flight finish, then the loops end.
    public func shutdown() {
        server.shutdown()
        group.shutdown()
    }

    static func routes() -> Router {
        var router = Router()
        router.get("/health") { _, _ in
            HTTPResponse(headers: ["Content-Type": "application/json"], body: Array(#"{"status":"ok"}"#.utf8))
        }
        // Parses and re-serialises a JSON body: the cost of JSON on the request path, for benchmarks.
        router.post("/admin/echo") { request, _ in
            guard request.headers.mediaType == "application/json" else {
                throw HTTPError(.unsupportedMediaType, "expected Content-Type application/json")
            }
            let object: Any
            do { object = try JSONSerialization.jsonObject(with: Data(request.body), options: [.fragmentsAllowed]) } catch {
                throw HTTPError(.badRequest, "body is not JSON: \((error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? error)")
            }
            let body = try JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed, .withoutEscapingSlashes])
            return HTTPResponse(headers: ["Content-Type": "application/json"], body: Array(body))
        }
        return router
    }
}
