import Messaging
import AccessControlServer
import AccessControlServer
import DirectoryServer
import EMV3DS
import Foundation
import JOSE
import JSON
import Logging
import Net
import Runs
import Store
import Synchronization
import ThreeDSServer

/// Several instances behind a load balancer (`cluster.enabled`): a transaction lives in the memory of the
/// instance that began it (its home), and the store names that home with each record before the answer
/// that makes a later message due (`store.durability` at least `answered`). A later message that the
/// balancer brings to another instance (a CReq, an RReq, a 3DS Method notification, a challenge page) is
/// passed on to the home and its answer relayed, so one instance applies each step of a transaction, in
/// order: two CReqs of one challenge sent to two instances at once are answered there one after the other.
/// A home that refuses the connection is dead: this instance takes the transaction over (``TransactionArchive/claimHome(role:id:from:)``)
/// and serves it; a home that fails after it had the request has its failure passed on (docs/scale.md).
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
