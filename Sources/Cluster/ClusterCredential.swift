import Net
import Store

/// How the instances of a cluster know each other's requests: by the secret of their store (``ClusterStore/clusterSecret()``),
/// which whoever can read the store has, carried in a header. A request without it is an outside party's, whatever it says:
/// the headers only another instance may send are removed from it before it is routed, so a client that reaches an
/// instance directly cannot have a request served as passed on, a change made as replayed, or a run's cases attached.
struct ClusterCredential: Sendable {
    static let header = "X-Harness-Cluster-Secret"
    /// What only another instance may send.
    static let instanceHeaders = [Cluster.forwardedHeader, Cluster.changeMadeHeader]

    let secret: String

    /// `request` marked as passed on by the instance at `here`.
    func sign(_ request: inout HTTPRequest, from here: String) {
        request.headers.set(Cluster.forwardedHeader, here)
        request.headers.set(Self.header, secret)
    }

    /// The router's admission: the secret checked and removed, and without it, the instances' headers removed too.
    func admit(_ request: inout HTTPRequest) {
        let presented = request.headers[Self.header]
        if presented != nil { request.headers.remove(Self.header) }
        guard presented.map({ Self.same($0, secret) }) != true else { return }
        for name in Self.instanceHeaders where request.headers[name] != nil { request.headers.remove(name) }
    }

    /// Compared in time that does not depend on where they differ.
    static func same(_ presented: String, _ secret: String) -> Bool {
        let (a, b) = (Array(presented.utf8), Array(secret.utf8))
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
