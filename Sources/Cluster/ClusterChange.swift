import EMV3DS
import Foundation
import JSON
import Logging
import Messaging
import Net
import Scenarios
import Store
import Synchronization

/// A change of what the harness plays, made on every live instance of a cluster: a pin (whose uses the store
/// counts for all), the load mix, the scenario file read again, a card-range change (each instance numbering it
/// alike, from the cluster's epoch). The instance that takes the request applies it,
/// then passes it on to the others with one change id; the answer says on how many it was applied.
struct ClusterChange {
    /// "3 of 3": the instances that applied the change, of those alive.
    static let appliedHeader = "X-Harness-Instances"
    /// Each route, what it changes, and which earlier changes a change of it makes pointless (an instance started later skips
    /// them). A team's change is of its team's kind (``kind(_:team:)``): it makes pointless the earlier ones of its team alone.
    static let routes: [(method: HTTPMethod, path: String, kind: String, supersedes: [String])] = [
        (.post, "/admin/pins", "pins", []), (.delete, "/admin/pins", "pins", ["pins"]), (.delete, "/admin/pins/{target}", "pins", []),
        (.post, "/admin/load-mix", "load-mix", ["load-mix"]), (.delete, "/admin/load-mix", "load-mix", ["load-mix"]),
        (.post, "/admin/reload", "reload", ["reload"]), (.post, "/admin/ds/card-ranges", "card-ranges", []),
        (.post, "/admin/ds/pres-faults", "pres-faults", ["pres-faults"]),
        (.delete, "/admin/team", "team", ["pins", "load-mix", "pres-faults", "card-ranges", "team"]),
    ]

    /// The kind a change is kept under: a team's pins are not the shared ones ("pins:ci-7").
    static func kind(_ kind: String, team: String?) -> String { team.map { kind + ":" + $0 } ?? kind }
    /// The kinds of change a team makes for itself alone; the others change the whole harness.
    static let teamScopedKinds: Set<String> = ["pins", "load-mix", "pres-faults", "card-ranges", "team"]
    /// A pin lives 1 day at most (`expiresIn`), and the store counts armed PRes faults' uses as long: their changes are kept that long.
    static let countedKeptMilliseconds = Int64(PinBoard.maxLifetime.components.seconds) * 1000

    /// What this instance knows of the changes: the ids it applied (a change spread to it while it made the same one
    /// again at start is applied once), and whether it has made those made before it started.
    final class Applied: Sendable {
        private struct State {
            var ids: Set<String> = []
            var order: [String] = []
            var replayed = false
            /// Requests waiting for the replay, each resumed once: by the replay's end, or by its own time running out.
            var waiting: [UUID: CheckedContinuation<Void, Never>] = [:]
        }

        private let state = Mutex(State())
        /// The newest ids remembered: changes come one at a time, by hand or by a pipeline.
        static let remembered = 1_000

        /// True the first time `id` comes.
        func first(_ id: String) -> Bool {
            state.withLock { state in
                guard state.ids.insert(id).inserted else { return false }
                state.order.append(id)
                if state.order.count > Self.remembered { state.ids.remove(state.order.removeFirst()) }
                return true
            }
        }

        var replayed: Bool { state.withLock { $0.replayed } }

        func setReplayed() {
            let waiting = state.withLock { state in
                state.replayed = true
                defer { state.waiting = [:] }
                return state.waiting.values
            }
            waiting.forEach { $0.resume() }
        }

        /// Returns once the changes made before this instance started are made (true), or after `limit` (false): never for ever.
        @discardableResult
        func awaitReplay(limit: Duration = .seconds(60)) async -> Bool {
            guard !replayed else { return true }
            return await withTaskGroup(of: Bool.self) { group in
                group.addTask { await self.replay(); return true }
                group.addTask { try? await Task.sleep(for: limit); return false }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
        }

        /// Returns once the replay is done, or when the task is cancelled.
        private func replay() async {
            let id = UUID()
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let now = state.withLock { state in
                        guard !state.replayed, !Task.isCancelled else { return true }
                        state.waiting[id] = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                state.withLock { $0.waiting.removeValue(forKey: id) }?.resume()
            }
        }
    }

    let store: any ClusterStore
    let client: HTTPClient
    let instanceURL: InstanceURL
    let credential: ClusterCredential
    let applied: Applied
    let logger: Logger

    func register(on router: inout Router) {
        for route in Self.routes {
            let registered = router.wrap(route.method, route.path) { handler in
                { request, context in
                    guard request.headers[Cluster.forwardedHeader] == nil, let here = instanceURL.value else {
                        // Passed on by the instance that took it, after the changes made before this instance started (in their
                        // order), or made again at start: once each.
                        if request.headers[Cluster.changeMadeHeader] == nil { await applied.awaitReplay() }
                        if let id = request.headers[HarnessChangeHeader.name], !applied.first(id) { return .text("applied already\n") }
                        return try await handler(request, context)
                    }
                    var request = request
                    let id = UUID().uuidString.lowercased()
                    request.headers.set(HarnessChangeHeader.name, id)
                    _ = applied.first(id)
                    let answer = try await handler(request, context)
                    guard answer.status.code < 300 else { return answer }
                    // A team's change is kept under its team's path and kind, so that it is the team's when made again; a change of
                    // the whole harness (a reload) under its own, whichever team made it.
                    let team = Self.teamScopedKinds.contains(route.kind) ? try? request.team() : nil
                    // Counted uses live as long as a pin at most; so does a team's removal, which the pipelines that name a team
                    // each would otherwise leave behind for every later instance to make.
                    let counted = ["pins", "pres-faults"].contains(route.kind) || (team != nil && route.method == .delete) ? Self.countedKeptMilliseconds : nil
                    var kept = request
                    kept.target = HarnessTeam.prefix(team) + request.target
                    await keep(kept, id: id, kind: Self.kind(route.kind, team: team), supersedes: route.supersedes.map { Self.kind($0, team: team) },
                               keptMilliseconds: counted)
                    return await spread(request, from: here, answered: answer)
                }
            }
            precondition(registered, "no route \(route.method) \(route.path) to spread over the cluster")
        }
    }

    /// Keeps a change before it is answered: an instance started from now on makes it too.
    /// `keptMilliseconds`: how long it is kept (nil: until a later change makes it pointless).
    private func keep(_ request: HTTPRequest, id: String, kind: String, supersedes: [String], keptMilliseconds: Int64?) async {
        let made = store.clock.wallMilliseconds()
        let change = RecordedChange(id: id, kind: kind, method: request.method.rawValue, target: request.target,
                                    contentType: request.headers["Content-Type"], body: request.body, made: made,
                                    expires: keptMilliseconds.map { made + $0 })
        if await !store.record(change, supersedes: supersedes) {
            logger.warning("a change was not kept in the store: an instance started later will not make it", metadata: ["target": "\(request.target)"])
        }
    }

    /// A change this instance makes of itself (what the others must know of a test run it began): kept under `kind`, in place
    /// of the one kept under it before, and sent to every other live instance; false when one of them did not take it.
    func make(kind: String, method: HTTPMethod, target: String, json: JSONValue, keptMilliseconds: Int64?, adminToken: String?) async -> Bool {
        guard let here = instanceURL.value else { return false }
        let id = UUID().uuidString.lowercased(), body = JSONWriter.write(json)
        var headers: HTTPHeaders = [HarnessChangeHeader.name: id, "Content-Type": "application/json", "Content-Length": String(body.count)]
        if let adminToken { headers.set("Authorization", "Bearer " + adminToken) }
        let request = HTTPRequest(method: method, target: target, headers: headers, body: body)
        _ = applied.first(id)
        await keep(request, id: id, kind: kind, supersedes: [kind], keptMilliseconds: keptMilliseconds)
        return await spread(request, from: here, answered: .text("made\n")).status.code < 300
    }

    /// Makes the changes kept in the store (made through the balancer before this instance started) here, oldest first, through
    /// this instance's own routes: it starts as the others are, not from its files alone. `/health` answers 503 until then.
    func replay(on server: HTTPServer, adminToken: String?) async {
        defer { applied.setReplayed() }
        guard let here = instanceURL.value else { return }
        var kept = await store.changes()
        for _ in 0..<4 where kept == nil {
            try? await Task.sleep(for: .seconds(1))
            kept = await store.changes()
        }
        guard let changes = kept else {
            return logger.warning("the changes made through the balancer cannot be read: this instance starts from its files")
        }
        var made = 0
        for change in changes {
            var headers: HTTPHeaders = [HarnessChangeHeader.name: change.id, Cluster.changeMadeHeader: String(change.made), "Content-Length": String(change.body.count)]
            if let type = change.contentType { headers.set("Content-Type", type) }
            if let adminToken { headers.set("Authorization", "Bearer " + adminToken) }
            var request = HTTPRequest(method: HTTPMethod(rawValue: change.method), target: change.target, headers: headers, body: change.body)
            credential.sign(&request, from: here)
            let answer = await server.answer(request, isSecure: false)
            if answer.status.code < 300 { made += 1 } else {
                logger.info("a change made before this instance started does not apply any more", metadata: [
                    "change": "\(change.method) \(change.target)", "answer": "\(answer.status.code) \(answer.bodyText.prefix(200))"])
            }
        }
        if !changes.isEmpty { logger.info("changes made before this instance started, made here", metadata: ["made": "\(made) of \(changes.count)"]) }
    }

    /// The change passed on to every other live instance; the local answer when all took it (or were gone), else 502 naming those that did not.
    private func spread(_ request: HTTPRequest, from here: String, answered: HTTPResponse) async -> HTTPResponse {
        guard let live = await store.liveInstances() else {
            return .text("applied on this instance only: the store cannot say which others are alive; send the change to each instance's own URL",
                         status: .badGateway)
        }
        let peers = live.filter { $0 != here }
        let forwarded = ClusterRoutes.passable(request, from: here, credential: credential), target = request.target
        let outcomes = await withTaskGroup(of: (String, String?, Bool).self) { group in
            for peer in peers {
                group.addTask { [client] in
                    do throws(HTTPClientError) {
                        let answer = try await client.execute(forwarded, url: peer + target)
                        return (peer, answer.status.code < 300 ? nil : "\(answer.status.code) \(answer.bodyText.prefix(200))", false)
                    } catch {
                        switch error {
                        // Gone since its last announcement: it serves nothing; started again, it makes the changes kept (docs/scale.md).
                        case .connectFailed, .nameResolutionFailed: return (peer, nil, true)
                        default: return (peer, error.summary, false)
                        }
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let failed = outcomes.filter { $0.1 != nil }
        let gone = outcomes.filter { $0.2 }.count
        let applied = 1 + peers.count - failed.count - gone
        var answer = answered
        answer.headers.set(Self.appliedHeader, "\(applied) of \(applied + failed.count)")
        guard !failed.isEmpty else { return answer }
        let reasons = failed.map { "\($0.0): \($0.1 ?? "")" }.joined(separator: "; ")
        logger.warning("a change was not applied on every instance", metadata: ["route": "\(request.path)", "not applied": "\(reasons)"])
        var refused = HTTPResponse.text("applied on \(applied) of \(applied + failed.count) instances; not on \(reasons)", status: .badGateway)
        refused.headers.set(Self.appliedHeader, "\(applied) of \(applied + failed.count)")
        return refused
    }
}
