import AccessControlServer
import DirectoryServer
import JSON
import Logging
import Net
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

        func value(in request: HTTPRequest, _ context: RequestContext) -> String? {
            switch self {
            case .pathParameter(let name):
                return context.parameters[name]
            case .jsonMember(let name):
                return (try? JSONReader.parse(request.body).value)?[name]?.stringValue
            case .jweKeyID:
                guard let dot = request.body.firstIndex(of: UInt8(ascii: ".")),
                      let header = try? Base64URL.decode(String(decoding: request.body[..<dot], as: UTF8.self)) else { return nil }
                return (try? JSONReader.parse(header).value)?["kid"]?.stringValue
            case .formJSON(let field, let member):
                guard let value = request.formFields?[field], let object = try? Base64URL.decodeObject(value).object else { return nil }
                return object[member]?.stringValue
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
            HomedRoute(method: .post, path: "/acs/challenge", role: acsRole, key: .jweKeyID, holds: acs),
            HomedRoute(method: .post, path: AccessControlServer.browserChallengePath, role: acsRole,
                       key: .formJSON(field: "creq", member: "acsTransID"), holds: acs),
            HomedRoute(method: .post, path: AccessControlServer.browserChallengePath + "/{acsTransID}", role: acsRole,
                       key: .pathParameter("acsTransID"), holds: acs),
            HomedRoute(method: .get, path: "/admin/acs/transactions/{id}", role: acsRole, key: .pathParameter("id"), holds: acs),
            HomedRoute(method: .post, path: "/ds/rreq", role: dsRole, key: .jsonMember("dsTransID"), holds: ds),
            HomedRoute(method: .get, path: "/admin/ds/transactions/{id}", role: dsRole, key: .pathParameter("id"), holds: ds),
            HomedRoute(method: .post, path: "/3ds-server/rreq", role: serverRole, key: .jsonMember("threeDSServerTransID"), holds: server),
            HomedRoute(method: .post, path: ThreeDSServer.notificationPath, role: serverRole,
                       key: .formJSON(field: "cres", member: "threeDSServerTransID"), holds: server),
            HomedRoute(method: .get, path: "/3ds-server/transactions/{id}", role: serverRole, key: .pathParameter("id"), holds: server),
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
        var forwarded = request
        for hopByHop in ["Connection", "Keep-Alive", "Transfer-Encoding"] { forwarded.headers.remove(hopByHop) }
        forwarded.headers.set(Self.forwardedHeader, here)
        do {
            var answer = try await client.execute(forwarded, url: home + request.target)
            answer.headers.remove("Transfer-Encoding")
            metrics.passedOn(route: route.path, outcome: "answered")
            return answer
        } catch {
            switch error {
            case .invalidURL, .nameResolutionFailed, .connectFailed, .connectTimedOut, .tlsFailed, .clientShutDown:
                // The home is gone, and never had the request: this instance answers as for a transaction it does not hold.
                metrics.passedOn(route: route.path, outcome: "home-unreachable")
                logger.warning("a transaction's home cannot be reached; served here", metadata: [
                    "route": "\(route.path)", "id": "\(id)", "home": "\(home)", "reason": "\(error)"])
                return nil
            case .readTimedOut, .connectionClosed, .malformedResponse, .responseTooLarge:
                // The home had it, and may have acted on it: its failure is passed on as it came (a connection
                // closed mid-response, a scripted fault, is closed here too), never served a second time here.
                metrics.passedOn(route: route.path, outcome: "home-failed")
                var failed = HTTPResponse.text("the instance that holds transaction \(id) failed: \(error.summary)", status: .badGateway)
                if case .connectionClosed = error { failed.delivery = .cut(keepingBodyBytes: 0) }
                return failed
            }
        }
    }
}

/// The jobs of instances that died (a decoupled result due from one): every instance looks each second for jobs
/// overdue by ``graceMilliseconds`` (their own instance would have claimed them at their time) and runs each it claims,
/// once in the whole cluster (`FOR UPDATE SKIP LOCKED`, then deleted).
enum OrphanedJobs {
    static let graceMilliseconds: Int64 = 3_000
    static let interval = Duration.seconds(1)

    /// Runs until the task is cancelled (at shutdown).
    static func watch(_ archive: any TransactionArchive, runner: @escaping @Sendable (ScheduledJob) async -> Void) async {
        while (try? await Task.sleep(for: interval)) != nil {
            for job in await archive.claimOverdueJobs(dueBefore: SQLiteArchive.wallClock() - graceMilliseconds, limit: 20) {
                await runner(job)
            }
        }
    }
}
