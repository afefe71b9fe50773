import EMV3DS
import Foundation
import JOSE
import JSON
import Logging
import Messaging
import Net
import Runs
import Store
import Synchronization

/// Several instances behind a load balancer (`cluster.enabled`): a transaction lives in the memory of the
/// instance that began it (its home), and the store names that home with each record before the answer
/// that makes a later message due (`store.durability` at least `answered`). A later message that the
/// balancer brings to another instance (a CReq, an RReq, a 3DS Method notification, a challenge page) is
/// passed on to the home and its answer relayed, so one instance applies each step of a transaction, in
/// order: two CReqs of one challenge sent to two instances at once are answered there one after the other.
/// A home that refuses the connection is dead: this instance takes the transaction over (``ClusterStore/claimHome(role:id:from:)``)
/// and serves it; a home that fails after it had the request has its failure passed on (docs/scale.md).
struct ClusterRoutes {
    /// The longest a home may take to answer a passed-on request: longer than any role waits for a peer
    /// (the DS's ACS timeout, a scripted latency), so the home's own answer comes back, not this one's.
    static let forwardTimeoutMilliseconds: UInt64 = 120_000

    /// The client that passes requests on: it waits as long as a home may take, and takes an answer as large as any an
    /// instance gives (a run's report, which the runs' routes pass on to the run's home).
    static func passingOn(tls: TLSConfiguration) -> HTTPClientConfiguration {
        HTTPClientConfiguration(tls: tls, readTimeoutMilliseconds: forwardTimeoutMilliseconds, maxResponseBytes: RunRegistry.maxReportBytes)
    }

    let store: any ClusterStore
    let client: HTTPClient
    let instanceURL: InstanceURL
    let credential: ClusterCredential
    let metrics: any ClusterMetrics
    let logger: Logger

    /// Wraps every route whose owner said which transaction its requests belong to (``TransactionRoute``, its tag).
    func register(on router: inout Router) {
        for (method, path, transaction) in router.tagged(TransactionRoute.self) {
            let route = HomedRoute(path: path, transaction: transaction)
            router.wrap(method, path) { handler in
                { request, context in
                    if let answer = await passOn(request, context, route) { return answer }
                    return try await handler(request, context)
                }
            }
        }
    }

    /// A route whose requests belong to a transaction that has a home.
    struct HomedRoute: Sendable {
        /// As registered: what metrics name it by.
        let path: String
        let transaction: TransactionRoute
        var role: String { transaction.role }
    }

    /// The home's answer when the transaction lives elsewhere and its home answered; nil to serve here, the transaction
    /// taken up from the store first when this instance does not hold it (its home gone, or its record no longer in memory).
    private func passOn(_ request: HTTPRequest, _ context: RequestContext, _ route: HomedRoute) async -> HTTPResponse? {
        guard let id = route.transaction.key.value(in: request, context), !route.transaction.holds(id) else { return nil }
        if request.headers[Cluster.forwardedHeader] == nil, let here = instanceURL.value {
            let home: String?
            do { home = try await store.home(role: route.role, id: id) } catch {
                // Served here, the transaction might be unknown where its home holds it: a verdict of nothing.
                metrics.passedOn(route: route.path, outcome: "store-unavailable")
                return .text("the shared store cannot say which instance holds transaction \(id): \(error.reason)", status: .serviceUnavailable)
            }
            if let home, home != here, let answer = await pass(request, id: id, route: route, to: home, from: here) { return answer }
        }
        await route.transaction.takeUp(id)
        return nil
    }

    /// The answer of `home` to `request`; nil to serve here: `home` is gone and this instance took the transaction from it.
    /// `again`: false once another instance took it first and was tried.
    private func pass(_ request: HTTPRequest, id: String, route: HomedRoute, to home: String, from here: String,
                      again: Bool = true) async -> HTTPResponse? {
        do {
            var answer = try await client.execute(Self.passable(request, from: here, credential: credential), url: home + request.target)
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
                if (try? await store.claimHome(role: route.role, id: id, from: home)) == true {
                    logger.warning("\(route.role == RunRegistry.role ? "a test run's" : "a transaction's") home cannot be reached; taken over here", metadata: [
                        "route": "\(route.path)", "id": "\(id)", "home": "\(home)", "reason": "\(error)"])
                    return nil
                }
                guard again, let taker = try? await store.home(role: route.role, id: id), taker != here, taker != home else { return nil }
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
    static func passable(_ request: HTTPRequest, from here: String, credential: ClusterCredential) -> HTTPRequest {
        var passed = request
        let named = (request.headers["Connection"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for header in ["Connection", "Keep-Alive", "Transfer-Encoding", "Expect", "TE", "Upgrade", "Proxy-Connection"] + named {
            passed.headers.remove(header)
        }
        credential.sign(&passed, from: here)
        return passed
    }
}
