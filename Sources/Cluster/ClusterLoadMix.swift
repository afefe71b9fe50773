import Foundation
import JSON
import Logging
import Messaging
import Net
import Store

/// `GET /admin/load-mix` for the whole cluster: each instance draws from the mix (its own sequence of the seed), so what one
/// instance drew is a share. Asked by a client (through the balancer or at an instance), the instance asks every other live
/// one and answers the sums; each instance's own figures, the latencies it added among them, are listed under `instances`.
struct ClusterLoadMix {
    static let path = "/admin/load-mix"

    let store: any ClusterStore
    let client: HTTPClient
    let instanceURL: InstanceURL
    let credential: ClusterCredential
    let logger: Logger

    func register(on router: inout Router) {
        let registered = router.wrap(.get, Self.path) { [self] handler in
            { request, context in
                let answered = try await handler(request, context)
                // Asked by another instance: this one's own figures.
                guard request.headers[Cluster.forwardedHeader] == nil, let here = instanceURL.value, answered.status == .ok,
                      let local = try? JSONReader.parse(answered.body).value else { return answered }
                guard let live = await store.liveInstances() else {
                    // Not "1 of 1": the others may be drawing too, and this instance cannot ask them.
                    logger.info("a load mix summary of this instance alone: the store cannot say which others are alive")
                    var alone = answered
                    alone.headers.set(ClusterChange.appliedHeader, "1 of unknown")
                    return alone
                }
                let peers = live.filter { $0 != here }
                let asked = ClusterRoutes.passable(request, from: here, credential: credential)
                let others = await withTaskGroup(of: (String, JSONValue?).self) { group in
                    for peer in peers {
                        group.addTask { [client] in
                            let answer = try? await client.execute(asked, url: peer + Self.path)
                            return (peer, answer.flatMap { $0.status == .ok ? try? JSONReader.parse($0.body).value : nil })
                        }
                    }
                    return await group.reduce(into: [(String, JSONValue?)]()) { $0.append($1) }
                }
                let answering = others.compactMap { peer, summary in summary.map { (peer, $0) } }
                if answering.count < others.count {
                    logger.info("a load mix summary without some instances", metadata: ["answered": "\(answering.count + 1) of \(others.count + 1)"])
                }
                var response = HTTPResponse.emv(Self.merged(local, at: here, with: answering.sorted { $0.0 < $1.0 }))
                response.headers.set(ClusterChange.appliedHeader, "\(answering.count + 1) of \(others.count + 1)")
                return response
            }
        }
        precondition(registered, "no route GET \(Self.path) to answer for the cluster")
    }

    /// `local` with `drawn` and `byScenario` summed over every instance's summary, and each instance's own figures under
    /// `instances` (its URL, `drawn`, `byScenario`, `latencyAdded`); the latencies are no sum, so the top level has none.
    static func merged(_ local: JSONValue, at here: String, with others: [(url: String, summary: JSONValue)]) -> JSONValue {
        let all = [(url: here, summary: local)] + others
        var drawn = 0
        var byScenario: [String: Int] = [:]
        for (_, summary) in all {
            drawn += summary["drawn"]?.numberText.flatMap { Int($0) } ?? 0
            for (name, count) in summary["byScenario"]?.objectMembers ?? [] { byScenario[name, default: 0] += count.numberText.flatMap { Int($0) } ?? 0 }
        }
        var merged = local
        merged.set("drawn", .number(String(drawn)))
        merged.set("byScenario", .object(byScenario.sorted { $0.key < $1.key }.map { ($0.key, .number(String($0.value))) }))
        merged.set("latencyAdded", nil)
        merged.set("instances", .array(all.map { url, summary in
            .object(omittingAbsent: [("instance", .string(url)), ("active", summary["active"]), ("drawn", summary["drawn"]),
                                     ("byScenario", summary["byScenario"]), ("latencyAdded", summary["latencyAdded"])])
        }))
        return merged
    }
}
