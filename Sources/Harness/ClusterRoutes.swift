import AccessControlServer
import Foundation
import DirectoryServer
import EMV3DS
import JOSE
import JSON
import Logging
import Messaging
import Net
import Runs
import Scenarios
import Store
import Synchronization
import ThreeDSServer

/// Several instances behind a load balancer (`cluster.enabled`): a transaction lives in the memory of the
/// instance that began it (its home), and the store names that home with each record before the answer
/// that makes a later message due (`store.durability` at least `answered`). A later message that the
/// balancer brings to another instance (a CReq, an RReq, a 3DS Method notification, a challenge page) is
/// passed on to the home and its answer relayed, so one instance applies each step of a transaction, in
/// order: two CReqs of one challenge sent to two instances at once are answered there one after the other.
/// A home that cannot be reached leaves the request to this instance, which answers as the specification
/// says for a transaction it does not know; one that fails after it had the request has its failure passed on (docs/scale.md).
struct ClusterRoutes {
    /// Where a request names its transaction.
    enum TransactionKey: Sendable {
        case pathParameter(String)
        /// A member of the JSON body (an RReq's `threeDSServerTransID` or `dsTransID`, a browser authentication's).
        case jsonMember(String)
        /// An app CReq: a JWE whose protected header's `kid` is the acsTransID (EMV 3DS Core specification, 6.2.3.3).
        case jweKeyID
        /// A form field of base64url JSON (`threeDSMethodData`, `creq`, `cres`), and the member of it.
        case formJSON(field: String, member: String)
        /// An AReq that follows an earlier one up (2.3.1): SPC's second AReq (an SPC result, and a prior authentication of
        /// method 05) or a decoupled fallback's 3RI AReq (`threeRIInd` 19, method 02): that entry's `threeDSReqPriorRef`,
        /// the acsTransID it names, whose home holds what the follow-up needs (the SPC offer, the challenge that fell back).
        /// Any other AReq, whatever prior authentication it names, stays where it came.
        case followedUpTransaction
        /// The first of several keys the request has.
        case first([TransactionKey])

        func value(in request: HTTPRequest, _ context: RequestContext) -> String? {
            switch self {
            case .pathParameter(let name):
                return context.parameters[name]
            case .jsonMember(let name):
                // Most bodies of such a route have no such member (an AReq has no dsTransID yet): found in the bytes first.
                guard ByteSearch.contains(request.body, "\"\(name)\"") else { return nil }
                return (try? JSONReader.parse(request.body).value)?[name]?.stringValue
            case .jweKeyID:
                return JWE.keyID(compact: request.body)
            case .formJSON(let field, let member):
                guard let value = request.formFields?[field], let object = try? Base64URL.decodeObject(value).object else { return nil }
                return object[member]?.stringValue
            case .followedUpTransaction:
                guard ByteSearch.contains(request.body, "\"threeDSReqPriorRef\""), let areq = try? JSONReader.parse(request.body).value,
                      areq["messageVersion"]?.stringValue == MessageVersion.v2_3_1.rawValue else { return nil }
                let method: String
                if areq["deviceChannel"]?.stringValue == DeviceChannel.threeRI.rawValue, areq["threeRIInd"]?.stringValue == DecoupledFallback.threeRIInd {
                    method = DecoupledFallback.priorAuthMethod
                } else if areq["spcIncompInd"] != nil
                            || (areq["threeDSRequestorAuthenticationInfo"]?.arrayValue ?? []).contains(where: { $0["threeDSReqAuthMethod"]?.stringValue == "09" }) {
                    method = "05"
                } else {
                    return nil
                }
                let entries = areq["threeDSRequestorPriorAuthenticationInfo"]?.arrayValue ?? []
                return entries.last { $0["threeDSReqPriorAuthMethod"]?.stringValue == method }?["threeDSReqPriorRef"]?.stringValue
            case .first(let keys):
                for key in keys { if let value = key.value(in: request, context) { return value } }
                return nil
            }
        }
    }

    /// A route whose requests belong to a transaction that has a home.
    struct HomedRoute: Sendable {
        let method: HTTPMethod
        let path: String
        /// The store's name of the records the key names.
        let role: String
        let key: TransactionKey
        /// True when this instance holds the transaction in memory: served here without asking the store.
        let holds: @Sendable (String) -> Bool
    }

    /// The header a passed-on request carries: its home serves it, whatever it finds.
    static let forwardedHeader = "X-Harness-Forwarded-From"
    /// The longest a home may take to answer a passed-on request: longer than any role waits for a peer
    /// (the DS's ACS timeout, a scripted latency), so the home's own answer comes back, not this one's.
    static let forwardTimeoutMilliseconds: UInt64 = 120_000

    /// This instance's URL as the others reach it, set once its listener is bound.
    final class InstanceURL: Sendable {
        private let url = Mutex<String?>(nil)
        func set(_ value: String) { url.withLock { $0 = value } }
        var value: String? { url.withLock { $0 } }
    }

    let routes: [HomedRoute]
    let archive: any TransactionArchive
    let client: HTTPClient
    let instanceURL: InstanceURL
    let metrics: HarnessMetrics
    let logger: Logger

    /// The routes of the three roles whose later messages find their transaction's home.
    static func routes(threeDSServer: ThreeDSServer, directoryServer: DirectoryServer, accessControlServer: AccessControlServer) -> [HomedRoute] {
        let server: @Sendable (String) -> Bool = { threeDSServer.holds($0) }
        let ds: @Sendable (String) -> Bool = { directoryServer.holds($0) }
        let acs: @Sendable (String) -> Bool = { accessControlServer.holds($0) }
        let (serverRole, prepared, dsRole, acsRole) = (ThreeDSServer.role, ThreeDSServer.preparedRole, DirectoryServer.role, AccessControlServer.role)
        return [
            // A CReq names its challenge in the JWE's kid; an SDK's Erro is plain JSON with its acsTransID.
            HomedRoute(method: .post, path: "/acs/challenge", role: acsRole, key: .first([.jweKeyID, .jsonMember("acsTransID")]), holds: acs),
            HomedRoute(method: .post, path: AccessControlServer.browserChallengePath, role: acsRole,
                       key: .formJSON(field: "creq", member: "acsTransID"), holds: acs),
            HomedRoute(method: .post, path: AccessControlServer.browserChallengePath + "/{acsTransID}", role: acsRole,
                       key: .pathParameter("acsTransID"), holds: acs),
            HomedRoute(method: .get, path: "/admin/acs/transactions/{id}", role: acsRole, key: .pathParameter("id"), holds: acs),
            // An Erro from the DS about an ARes; an AReq that follows an earlier one up goes where that one is (any other AReq,
            // which carries no acsTransID, stays where it came).
            HomedRoute(method: .post, path: ACSPaths.aReq, role: acsRole, key: .first([.jsonMember("acsTransID"), .followedUpTransaction]), holds: acs),
            HomedRoute(method: .post, path: "/ds/rreq", role: dsRole, key: .jsonMember("dsTransID"), holds: ds),
            // A 3DS Server's Erro about an ARes, graded where the transaction is (an AReq carries no dsTransID).
            HomedRoute(method: .post, path: "/ds/areq", role: dsRole, key: .jsonMember("dsTransID"), holds: ds),
            HomedRoute(method: .get, path: "/admin/ds/transactions/{id}", role: dsRole, key: .pathParameter("id"), holds: ds),
            HomedRoute(method: .post, path: "/3ds-server/rreq", role: serverRole, key: .jsonMember("threeDSServerTransID"), holds: server),
            HomedRoute(method: .post, path: ThreeDSServer.notificationPath, role: serverRole,
                       key: .formJSON(field: "cres", member: "threeDSServerTransID"), holds: server),
            HomedRoute(method: .get, path: "/3ds-server/transactions/{id}", role: serverRole, key: .pathParameter("id"), holds: server),
            // The page's SPC result goes on where the ARes S came (its ACS holds what the assertion must sign).
            HomedRoute(method: .post, path: ThreeDSServer.spcResultPath, role: serverRole, key: .pathParameter("id"), holds: server),
            HomedRoute(method: .get, path: "/profiles/emvco/result/{id}", role: serverRole, key: .pathParameter("id"), holds: server),
            HomedRoute(method: .post, path: ThreeDSServer.methodNotificationPath, role: prepared,
                       key: .formJSON(field: "threeDSMethodData", member: "threeDSServerTransID"), holds: server),
            // A browser authentication that names its prepared transaction goes on where it was prepared.
            HomedRoute(method: .post, path: "/3ds-server/authenticate", role: prepared, key: .jsonMember("threeDSServerTransID"), holds: server),
        ]
    }

    func register(on router: inout Router) {
        for route in routes {
            let registered = router.wrap(route.method, route.path) { handler in
                { request, context in
                    if let answer = await passOn(request, context, route) { return answer }
                    return try await handler(request, context)
                }
            }
            precondition(registered, "no route \(route.method) \(route.path) to find transactions' homes for")
        }
    }

    /// The home's answer when the transaction lives elsewhere and its home answered; nil to serve here.
    private func passOn(_ request: HTTPRequest, _ context: RequestContext, _ route: HomedRoute) async -> HTTPResponse? {
        guard request.headers[Self.forwardedHeader] == nil, let id = route.key.value(in: request, context), !route.holds(id),
              let here = instanceURL.value, let home = await archive.home(role: route.role, id: id), home != here else { return nil }
        return await pass(request, id: id, route: route, to: home, from: here)
    }

    /// The answer of `home` to `request`; nil to serve here: `home` is gone and this instance took the transaction from it.
    /// `again`: false once another instance took it first and was tried.
    private func pass(_ request: HTTPRequest, id: String, route: HomedRoute, to home: String, from here: String,
                      again: Bool = true) async -> HTTPResponse? {
        do {
            var answer = try await client.execute(Self.passable(request, from: here), url: home + request.target)
            // The server writes its own framing and date.
            for header in ["Transfer-Encoding", "Date"] { answer.headers.remove(header) }
            metrics.passedOn(route: route.path, outcome: "answered")
            return answer
        } catch {
            switch error {
            case .invalidURL, .nameResolutionFailed, .connectFailed, .clientShutDown:
                // The home is gone (its connection refused), and never had the request: this instance takes the transaction
                // from it (its role goes on from the store, docs/scale.md), unless another took it first: that one is the home now.
                metrics.passedOn(route: route.path, outcome: "home-unreachable")
                if await archive.claimHome(role: route.role, id: id, from: home) {
                    logger.warning("\(route.role == RunRegistry.role ? "a test run's" : "a transaction's") home cannot be reached; taken over here", metadata: [
                        "route": "\(route.path)", "id": "\(id)", "home": "\(home)", "reason": "\(error)"])
                    return nil
                }
                guard again, let taker = await archive.home(role: route.role, id: id), taker != here, taker != home else { return nil }
                return await pass(request, id: id, route: route, to: taker, from: here, again: false)
            case .connectTimedOut, .tlsFailed, .readTimedOut, .connectionClosed, .malformedResponse, .responseTooLarge:
                // The home may be alive (slow, or it had the request and acted on it): its failure is passed on, never
                // served a second time here. Silence stays silence; a connection it closed mid-response is closed here too.
                metrics.passedOn(route: route.path, outcome: "home-failed")
                var failed = HTTPResponse.text("the instance that holds transaction \(id) failed: \(error.summary)", status: .badGateway)
                switch error {
                case .readTimedOut: failed.delivery = .withheld
                case .connectionClosed: failed.delivery = .cut(keepingBodyBytes: 0)
                default: break
                }
                return failed
            }
        }
    }

    /// `request` as another instance of the cluster takes it: without what belongs to this hop (its framing, an
    /// `Expect: 100-continue` this instance answered, upgrades, what `Connection` names), marked as passed on.
    static func passable(_ request: HTTPRequest, from here: String) -> HTTPRequest {
        var passed = request
        let named = (request.headers["Connection"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for header in ["Connection", "Keep-Alive", "Transfer-Encoding", "Expect", "TE", "Upgrade", "Proxy-Connection"] + named {
            passed.headers.remove(header)
        }
        passed.headers.set(forwardedHeader, here)
        return passed
    }
}

/// What every instance of a cluster does in the background until shutdown: says it is alive (every
/// ``announceEvery``), and runs the jobs of instances that died (a decoupled result due from one): each second
/// it claims jobs overdue by ``graceMilliseconds`` (their own instance would have claimed them at their time) and
/// runs them, once in the whole cluster (`FOR UPDATE SKIP LOCKED` under a lease, deleted once run; a runner
/// that dies mid-run leaves the job to be claimed again when its lease ends).
enum ClusterHousekeeping {
    static let graceMilliseconds: Int64 = 3_000
    static let interval = Duration.seconds(1)
    static let announceEvery = 5
    /// An instance not heard of for this long is not sent changes: 3 announcements missed.
    static let liveWindowMilliseconds: Int64 = 15_000

    /// Runs until the task is cancelled (at shutdown).
    /// `runner` says whether it ran the job (then it is gone), or left it for later (then it is claimable again).
    static func run(_ archive: any TransactionArchive, instanceURL: String, runner: @escaping @Sendable (ScheduledJob) async -> Bool) async {
        let cluster = archive as? any ClusterStore
        var tick = 0
        repeat {
            if tick % announceEvery == 0 { await cluster?.announce(instanceURL) }
            tick += 1
            // Side by side: each may wait for a peer (an RReq, its RRes) up to its time limit.
            let jobs = await archive.claimOverdueJobs(dueBefore: SQLiteArchive.wallClock() - graceMilliseconds, limit: 20)
            await withTaskGroup(of: Void.self) { group in
                for job in jobs {
                    group.addTask {
                        if await runner(job) { await archive.finishJob(id: job.id) } else { await archive.releaseJob(id: job.id) }
                    }
                }
            }
        } while (try? await Task.sleep(for: interval)) != nil
    }
}

/// A change of what the harness plays, made on every live instance of a cluster: a pin (whose uses the store
/// counts for all), the load mix, the scenario file read again, a card-range change (each instance numbering it
/// alike, from the cluster's epoch). The instance that takes the request applies it,
/// then passes it on to the others with one change id; the answer says on how many it was applied.
struct ClusterChange {
    static let idHeader = RecordedChange.idHeader
    /// When a change was made (milliseconds since 1970), on a change made again by an instance started later: a pin lives
    /// as long as where it was set. Read only with ``ClusterRoutes/forwardedHeader``, which the balancer removes.
    static let madeHeader = "X-Harness-Change-Made"
    /// "3 of 3": the instances that applied the change, of those alive.
    static let appliedHeader = "X-Harness-Instances"
    /// Each route, what it changes, and which earlier changes a change of it makes pointless (an instance started later skips them).
    static let routes: [(method: HTTPMethod, path: String, kind: String, supersedes: [String])] = [
        (.post, "/admin/pins", "pins", []), (.delete, "/admin/pins", "pins", ["pins"]), (.delete, "/admin/pins/{target}", "pins", []),
        (.post, "/admin/load-mix", "load-mix", ["load-mix"]), (.delete, "/admin/load-mix", "load-mix", ["load-mix"]),
        (.post, "/admin/reload", "reload", ["reload"]), (.post, "/admin/ds/card-ranges", "card-ranges", []),
        (.post, "/admin/ds/pres-faults", "pres-faults", ["pres-faults"]),
    ]
    /// A pin lives 1 day at most (`expiresIn`), and the store counts armed PRes faults' uses as long: their changes are kept that long.
    static let countedKeptMilliseconds = Int64(PinBoard.maxLifetime.components.seconds) * 1000

    /// What this instance knows of the changes: the ids it applied (a change spread to it while it made the same one
    /// again at start is applied once), and whether it has made those made before it started.
    final class Applied: Sendable {
        private struct State {
            var ids: Set<String> = []
            var order: [String] = []
            var replayed = false
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
        func setReplayed() { state.withLock { $0.replayed = true } }

        /// Returns once the changes made before this instance started are made (or after a minute: never for ever).
        func awaitReplay() async {
            for _ in 0..<1_200 where !replayed { try? await Task.sleep(for: .milliseconds(50)) }
        }
    }

    let store: any ClusterStore
    let client: HTTPClient
    let instanceURL: ClusterRoutes.InstanceURL
    let applied: Applied
    let logger: Logger

    func register(on router: inout Router) {
        for route in Self.routes {
            let registered = router.wrap(route.method, route.path) { handler in
                { request, context in
                    guard request.headers[ClusterRoutes.forwardedHeader] == nil, let here = instanceURL.value else {
                        // Passed on by the instance that took it, after the changes made before this instance started (in their
                        // order), or made again at start: once each.
                        if request.headers[Self.madeHeader] == nil { await applied.awaitReplay() }
                        if let id = request.headers[Self.idHeader], !applied.first(id) { return .text("applied already\n") }
                        return try await handler(request, context)
                    }
                    var request = request
                    let id = UUID().uuidString.lowercased()
                    request.headers.set(Self.idHeader, id)
                    _ = applied.first(id)
                    let answer = try await handler(request, context)
                    guard answer.status.code < 300 else { return answer }
                    let counted = ["pins", "pres-faults"].contains(route.kind) ? Self.countedKeptMilliseconds : nil
                    await keep(request, id: id, kind: route.kind, supersedes: route.supersedes, keptMilliseconds: counted)
                    return await spread(request, from: here, answered: answer)
                }
            }
            precondition(registered, "no route \(route.method) \(route.path) to spread over the cluster")
        }
    }

    /// Keeps a change before it is answered: an instance started from now on makes it too.
    /// `keptMilliseconds`: how long it is kept (nil: until a later change makes it pointless).
    private func keep(_ request: HTTPRequest, id: String, kind: String, supersedes: [String], keptMilliseconds: Int64?) async {
        let made = SQLiteArchive.wallClock()
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
        var headers: HTTPHeaders = [Self.idHeader: id, "Content-Type": "application/json", "Content-Length": String(body.count)]
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
            var headers: HTTPHeaders = [ClusterRoutes.forwardedHeader: here, Self.idHeader: change.id, Self.madeHeader: String(change.made),
                                        "Content-Length": String(change.body.count)]
            if let type = change.contentType { headers.set("Content-Type", type) }
            if let adminToken { headers.set("Authorization", "Bearer " + adminToken) }
            let answer = await server.answer(HTTPRequest(method: HTTPMethod(rawValue: change.method), target: change.target, headers: headers,
                                                         body: change.body), isSecure: false)
            if answer.status.code < 300 { made += 1 } else {
                logger.info("a change made before this instance started does not apply any more", metadata: [
                    "change": "\(change.method) \(change.target)", "answer": "\(answer.status.code) \(answer.bodyText.prefix(200))"])
            }
        }
        if !changes.isEmpty { logger.info("changes made before this instance started, made here", metadata: ["made": "\(made) of \(changes.count)"]) }
    }

    /// The change passed on to every other live instance; the local answer when all took it (or were gone), else 502 naming those that did not.
    private func spread(_ request: HTTPRequest, from here: String, answered: HTTPResponse) async -> HTTPResponse {
        guard let live = await store.instances(seenSince: SQLiteArchive.wallClock() - ClusterHousekeeping.liveWindowMilliseconds) else {
            return .text("applied on this instance only: the store cannot say which others are alive; send the change to each instance's own URL",
                         status: .badGateway)
        }
        let peers = live.filter { $0 != here }
        let forwarded = ClusterRoutes.passable(request, from: here), target = request.target
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
