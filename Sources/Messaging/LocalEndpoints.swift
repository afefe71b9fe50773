import Synchronization

/// The base URL of this harness, known once its listeners are bound (a port of 0 is chosen
/// by the system). Roles build the URLs of each other from it unless configured otherwise.
public final class LocalEndpoints: Sendable {
    private let base = Mutex("http://127.0.0.1")
    private let secureBase = Mutex<String?>(nil)
    private let ownBase = Mutex<String?>(nil)

    public init() {}

    /// Sets the base, e.g. "http://127.0.0.1:8080".
    public func setBaseURL(_ url: String) { base.withLock { $0 = url } }

    public var baseURL: String { base.withLock { $0 } }

    /// The URL of `path` on this harness.
    public func url(_ path: String) -> String { baseURL + path }

    /// Sets the HTTPS base, e.g. "https://localhost:8443", when an HTTPS listener is bound.
    public func setSecureBaseURL(_ url: String?) { secureBase.withLock { $0 = url } }

    /// The HTTPS URL of `path` when the harness listens on HTTPS, else the plain one: what
    /// SDKs are given (a real acsURL is always HTTPS).
    public func secureURL(_ path: String) -> String { (secureBase.withLock { $0 } ?? baseURL) + path }

    /// Sets the base at which this instance itself answers, when another base (a load balancer's) names it to others.
    public func setOwnBaseURL(_ url: String?) { ownBase.withLock { $0 = url } }

    /// The URL of `path` at this instance itself, not at a balancer before it: where a role sends a message that begins its
    /// leg of a transaction to another role of this harness, so that the roles of a transaction stay on the instance that
    /// began it, which keeps its journal entry. Later messages, which may come after this instance is gone, go to ``url(_:)``.
    public func ownURL(_ path: String) -> String { (ownBase.withLock { $0 } ?? baseURL) + path }
}

/// The harness's own ACS paths that another role sends to: the DS relays AReqs there and gives
/// its 3DS Method URL to 3DS Servers in the PRes.
public enum ACSPaths {
    public static let aReq = "/acs/areq"
    /// The 3DS Method page (`threeDSMethodURL`); `?scenario=` names a card whose method is scripted.
    public static let threeDSMethod = "/acs/3ds-method"
}
