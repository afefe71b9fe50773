import Foundation
import Net

/// Whether `cluster.instanceURL` names this instance: at start the instance asks the URL for a token only this process
/// holds. A URL another instance answers (two replicas given one URL, or the balancer's), that nothing answers (a wrong
/// port or host), or that no harness answers would have the other instances pass requests on to the wrong place, so such a
/// start is refused with the reason. A name that does not resolve yet is let be: a container platform may publish an
/// instance's name only once it is ready.
struct InstanceProbe: Sendable {
    static let path = "/health/instance"
    /// Asked this many times, so that a balancer's URL is told from this instance's even when it picks this instance once.
    static let attempts = 3

    private let token = UUID().uuidString

    func register(on router: inout Router) {
        router.get(Self.path) { [token] _, _ in .text(token) }
    }

    /// Nil when `url` answers as this instance (or does not resolve yet); else what it is instead.
    func problem(with url: String, client: HTTPClient) async -> String? {
        for _ in 0..<Self.attempts {
            let answer: HTTPResponse
            do { answer = try await client.get(url + Self.path) } catch {
                if case .nameResolutionFailed = error { return nil }
                return "cannot be reached from this instance (\(error.summary))"
            }
            guard answer.status == .ok, answer.bodyText == token else {
                let another = answer.status == .ok && UUID(uuidString: answer.bodyText) != nil
                return another ? "is answered by another instance (each instance needs a URL of its own)"
                               : "is answered by something else than this instance (HTTP \(answer.status.code) at \(Self.path))"
            }
        }
        return nil
    }
}
