public import EMV3DS
public import Foundation
public import JOSE
public import Net
public import Store
public import ThreeDSServer
import Yams

/// The harness configuration file (`config/harness.yaml`). Every key is optional;
/// what is missing takes the documented default.
public struct HarnessConfiguration: Sendable, Equatable {
    public struct Server: Sendable, Equatable, Encodable {
        public var host = "127.0.0.1"
        public var httpPort: Int? = 8080
        public var httpsPort: Int? = 8443
        /// Event loops (threads); 0 means one per core.
        public var loops = 0
        public var maxHeaderBytes = ServerConfiguration().maxHeaderBytes
        public var maxBodyBytes = ServerConfiguration().maxBodyBytes
        public var requestTimeoutMs = ServerConfiguration().requestTimeoutMilliseconds
        public var idleTimeoutMs = ServerConfiguration().idleTimeoutMilliseconds
        public var shutdownGraceMs = ServerConfiguration().shutdownGraceMilliseconds
        /// On SIGTERM, how long the instance stays up not ready (`GET /health/ready` 503) and serving, before it stops
        /// taking connections: longer than a balancer's health checks take to move traffic away. 0: stop at once.
        public var drainSeconds: Double = 0
        /// How the roles of this process call each other: `in-process` (no socket: the same route, bytes and
        /// faults) or `http` (over the loopback, as to any peer). A role at an outside URL uses HTTP either way.
        public var roleCalls = RoleCalls.inProcess
        /// The base URL the harness names itself by to other parties (the acsURL, 3DS Method and notification URLs):
        /// behind a load balancer, the balancer's (`https://harness.example:8443`). None: the address it is bound to.
        public var publicURL: String?
        public init() {}
    }

    public struct TLS: Sendable, Equatable, Encodable {
        public var certificate = "certs/tls/server-chain.pem"
        public var privateKey = "certs/tls/server-key.pem"
        /// DNS names and IP addresses the TLS server certificate must carry besides localhost,
        /// 127.0.0.1 and ::1 (the address a phone reaches the harness at); `serve` issues the
        /// certificate anew under the test PKI's TLS root when it lacks one.
        public var names: [String] = []
        /// CA file for client certificates (mutual TLS); none by default.
        public var clientCA: String?
        public var requireClientCertificate = false
        /// What the roles present when they call each other (or another party) over HTTPS and
        /// the server asks for a certificate: with mutual TLS required, their own calls need it.
        /// By default the test PKI's client certificate (`<pkiDirectory>/tls/client-chain.pem`), if there.
        public var clientCertificate: String?
        public var clientPrivateKey: String?
        /// Plain HTTP beside required mutual TLS serves every route, `/admin` too, without a
        /// certificate: "warn" at start-up (default) or "refuse" to start.
        public var plainHTTPBesideMutualTLS = "warn"
        public init() {}

        /// Mutual TLS is required, yet plain HTTP serves every route without a certificate.
        public func plainHTTPBypassesMutualTLS(_ server: Server) -> Bool {
            requireClientCertificate && server.httpsPort != nil && server.httpPort != nil
        }
    }

    /// Who may use `/admin`: open on loopback; elsewhere a token, or an explicit opt-out.
    public struct Admin: Sendable, Equatable, Encodable {
        /// When set, `/admin` asks for `Authorization: Bearer <token>` on every address.
        /// The environment variable THREEDS_HARNESS_ADMIN_TOKEN overrides it (`serve`).
        public var token: String?
        /// Serve `/admin` without a token on a non-loopback address (a network you trust).
        public var openOnNetwork = false
        public init() {}

        private enum CodingKeys: String, CodingKey, CaseIterable { case token, openOnNetwork }
        public func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(token == nil ? nil : "(set)", forKey: .token)  // never the secret itself
            try container.encode(openOnNetwork, forKey: .openOnNetwork)
        }
    }

    public struct Logging: Sendable, Equatable, Encodable {
        public var level = "info"
        /// "text" or "json".
        public var format = LogFormat.text
        public init() {}
    }

    /// The durable store of transaction records: SQLite under `dataDirectory`.
    public struct Store: Sendable, Equatable, Encodable {
        public var enabled = true
        /// Records kept at most (of the three roles together); the oldest go first.
        public var maxRecords = 1_000_000
        /// Records older than this go.
        public var maxAgeDays = 30.0
        /// When a record is on disk against the answer that made it: `behind`, `answered` or `synced` (``StoreDurability``).
        public var durability = StoreDurability.behind
        /// `sqlite` (one instance: `harness.sqlite` in the data directory) or `postgres` (shared by several, at `url`).
        public var backend = StoreBackend.sqlite
        /// The PostgreSQL database of `backend: postgres`: `postgresql://user:password@host:port/database` (libpq's URI or
        /// key=value form); a secret, as it may hold a password. THREEDS_HARNESS_STORE_URL overrides it (`serve`).
        public var url: ConfigurationSecret?
        public init() {}
    }

    /// One of several instances behind a load balancer, sharing a PostgreSQL store (docs/scale.md).
    public struct Cluster: Sendable, Equatable, Encodable {
        public var enabled = false
        /// The URL the other instances reach this one at (`http://harness-2:8080`): where they pass on the later messages
        /// of the transactions it holds. None: its bound plain HTTP address. THREEDS_HARNESS_INSTANCE_URL overrides it (`serve`).
        public var instanceURL: String?
        public init() {}
    }

    public var server = Server()
    public var tls = TLS()
    public var logging = Logging()
    public var admin = Admin()
    /// When set, `GET /sdk/config` and the logos ask for `Authorization: Bearer <token>`;
    /// THREEDS_HARNESS_SDK_CONFIG_TOKEN overrides it (`serve`).
    public var sdkConfigToken: ConfigurationSecret?
    /// Folder of the test PKI (`pki generate` writes it, the roles read it).
    public var pkiDirectory = "certs"
    /// The Directory Servers the harness plays, by RID, with their card ranges.
    public var directoryServers = SchemeConfiguration.defaults
    public var directoryServer = DirectoryServerConfiguration()
    public var accessControlServer = AccessControlServerConfiguration()
    public var threeDSServer = ThreeDSServerSettings()
    /// The scenario file (`config/scenarios.yaml`).
    public var scenarios = "config/scenarios.yaml"
    /// Transactions each role keeps in memory; past this the oldest are dropped.
    public var maxTransactions = StoreDefaults.maxTransactions
    /// Where the harness writes what it keeps (the store's `harness.sqlite`); made at the first start.
    public var dataDirectory = "data"
    public var store = Store()
    public var cluster = Cluster()

    public init() {}

    /// Reads a YAML file; errors name the file and the offending key.
    public static func load(path: String) throws(ConfigurationError) -> HarnessConfiguration {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw .unreadable(path: path)
        }
        return try parse(text, source: path)
    }

    /// Parses YAML text; `source` names it in errors.
    public static func parse(_ text: String, source: String = "configuration") throws(ConfigurationError) -> HarnessConfiguration {
        let configuration: HarnessConfiguration
        do {
            configuration = try YAMLDecoder().decode(HarnessConfiguration.self, from: text)
        } catch let error as DecodingError {
            throw .invalid(source: source, reason: error.readableDescription)
        } catch {
            throw .invalid(source: source, reason: "\(error)")
        }
        try configuration.validate(source: source)
        return configuration
    }

    /// Every rule of the file; `serve` asks again once the environment has overridden what it may.
    public func validate(source: String) throws(ConfigurationError) {
        do throws(Invalid) {
            try checkServer()
            try checkDirectoryServers()
            try checkDurations()
            try checkRolesAndLogging()
            try checkTLS()
        } catch {
            throw .invalid(source: source, reason: error.reason)
        }
        try checkAdminExposure(source: source)
    }

    /// A value the harness cannot run with: the key, the value and what it must be.
    private struct Invalid: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private func checkServer() throws(Invalid) {
        for (key, port) in [("server.httpPort", server.httpPort), ("server.httpsPort", server.httpsPort)] {
            if let port, !(0...65535).contains(port) { throw Invalid("\(key): \(port) is not a port (0-65535)") }
        }
        guard server.httpPort != nil || server.httpsPort != nil else {
            throw Invalid("server: set httpPort or httpsPort (or both)")
        }
        guard server.loops >= 0 else { throw Invalid("server.loops: must be 0 (one per core) or more") }
        guard server.maxHeaderBytes >= 1024 else { throw Invalid("server.maxHeaderBytes: at least 1024") }
        guard server.maxBodyBytes >= 1024 else { throw Invalid("server.maxBodyBytes: at least 1024") }
    }

    private func checkDirectoryServers() throws(Invalid) {
        var seen = Set<String>()
        for (index, profile) in directoryServers.enumerated() {
            guard profile.rid.count == 10, profile.rid.allSatisfy(\.isHexDigit) else {
                throw Invalid("directoryServers[\(index)].rid: \"\(profile.rid)\" is not a RID (10 hex digits)")
            }
            guard seen.insert(profile.rid).inserted else {
                throw Invalid("directoryServers[\(index)].rid: \(profile.rid) is listed twice")
            }
            for range in profile.cardRanges where CardRange(range) == nil {
                throw Invalid("directoryServers[\(index)].cardRanges: \"\(range)\" is not leading digits (\"4\") or a range of them (\"2221-2720\")")
            }
            for (key, eci) in [("authenticatedECI", profile.authenticatedECI), ("attemptedECI", profile.attemptedECI)]
            where eci.count != 2 || !eci.allSatisfy(\.isNumber) {
                throw Invalid("directoryServers[\(index)].\(key): \"\(eci)\" is not two digits")
            }
        }
    }

    private func checkDurations() throws(Invalid) {
        // Every duration of the file, with its range: a day at most, so that no timer or Duration conversion overflows.
        let day = 86_400.0
        let durations: [(key: String, value: Double, range: ClosedRange<Double>, unit: String)] = [
            ("server.requestTimeoutMs", Double(server.requestTimeoutMs), 1...day * 1000, "milliseconds"),
            ("server.idleTimeoutMs", Double(server.idleTimeoutMs), 1...day * 1000, "milliseconds"),
            ("server.shutdownGraceMs", Double(server.shutdownGraceMs), 0...day * 1000, "milliseconds"),
            ("server.drainSeconds", server.drainSeconds, 0...3600, "seconds"),
            ("directoryServer.acsTimeoutMs", Double(directoryServer.acsTimeoutMs), 1...day * 1000, "milliseconds"),
            ("threeDSServer.directoryServerTimeoutMs", Double(threeDSServer.directoryServerTimeoutMs), 1...day * 1000, "milliseconds"),
            ("threeDSServer.cardRangeRefreshSeconds", threeDSServer.cardRangeRefreshSeconds, 0...day, "seconds"),
            ("threeDSServer.spcResultTimeout", threeDSServer.spcResultTimeout, 0.001...day, "seconds"),
            ("accessControlServer.challengeTimeout", accessControlServer.challengeTimeout, 0.001...day, "seconds"),
            ("accessControlServer.rreqRetrySeconds", accessControlServer.rreqRetrySeconds, 0.001...3600, "seconds"),
            ("store.maxAgeDays", store.maxAgeDays, 0.001...36_500, "days"),
        ]
        for duration in durations where !(duration.value.isFinite && duration.range.contains(duration.value)) {
            throw Invalid("\(duration.key): \(duration.value) is not \(duration.range.lowerBound)-\(duration.range.upperBound) \(duration.unit)")
        }
    }

    private func checkRolesAndLogging() throws(Invalid) {
        guard directoryServer.outOfRangeReason.count == 2, directoryServer.outOfRangeReason.allSatisfy(\.isNumber) else {
            throw Invalid("directoryServer.outOfRangeReason: \"\(directoryServer.outOfRangeReason)\" is not two digits")
        }
        guard maxTransactions > 0 else { throw Invalid("maxTransactions: at least 1") }
        guard (0...10).contains(accessControlServer.rreqRetries) else {
            throw Invalid("accessControlServer.rreqRetries: \(accessControlServer.rreqRetries) is not 0-10")
        }
        if let url = accessControlServer.challengeURL, let problem = SignedContentRules.acsURLProblem(url) {
            throw Invalid("accessControlServer.challengeURL: \"\(url)\" \(problem) (it is acsSignedContent's acsURL)")
        }
        guard !dataDirectory.isEmpty else { throw Invalid("dataDirectory: a folder, not empty") }
        guard store.maxRecords > 0 else { throw Invalid("store.maxRecords: at least 1") }
        guard store.backend != .postgres || !(store.url?.value ?? Self.environmentStoreURL ?? "").isEmpty else {
            throw Invalid("store.url: required with store.backend postgres (postgresql://user@host:port/database, or THREEDS_HARNESS_STORE_URL)")
        }
        if cluster.enabled {
            guard store.enabled, store.backend == .postgres else {
                throw Invalid("cluster.enabled: the instances of a cluster share their transactions through the store: set store.backend: postgres")
            }
        }
        for (key, url) in [("server.publicURL", server.publicURL), ("cluster.instanceURL", cluster.instanceURL)] {
            if let url, !(url.hasPrefix("http://") || url.hasPrefix("https://")) || url.hasSuffix("/") {
                throw Invalid("\(key): \"\(url)\" is not a base URL (http:// or https://, host and port, no path or closing /)")
            }
        }
        guard LogLevelName.parse(logging.level) != nil else {
            throw Invalid("logging.level: \"\(logging.level)\" is not one of \(LogLevelName.all)")
        }
    }

    private func checkTLS() throws(Invalid) {
        for name in tls.names where !TestPKI.acceptsTLSName(name) {
            throw Invalid("tls.names: \"\(name)\" is not a DNS name or an IP address")
        }
        if tls.requireClientCertificate && tls.clientCA == nil {
            throw Invalid("tls.requireClientCertificate: set tls.clientCA, the CA that client certificates must chain to")
        }
        if (tls.clientCertificate == nil) != (tls.clientPrivateKey == nil) {
            throw Invalid("tls.clientCertificate and tls.clientPrivateKey: set both or neither")
        }
        guard ["warn", "refuse"].contains(tls.plainHTTPBesideMutualTLS) else {
            throw Invalid("tls.plainHTTPBesideMutualTLS: \"\(tls.plainHTTPBesideMutualTLS)\" is not warn or refuse")
        }
        if tls.plainHTTPBypassesMutualTLS(server) && tls.plainHTTPBesideMutualTLS == "refuse" {
            throw Invalid("server.httpPort: plain HTTP would serve every route without the client certificate that tls.requireClientCertificate asks for; set httpPort to null, or tls.plainHTTPBesideMutualTLS to warn")
        }
    }

    /// `/admin` changes what every transaction gets: on an address other hosts can reach it
    /// needs a token, unless the configuration says plainly that it may stay open. Each token
    /// that is set (the admin token, `sdkConfigToken`) must be long enough to guess poorly.
    /// The token in the environment (`THREEDS_HARNESS_ADMIN_TOKEN`) counts as one in the file:
    /// `serve` puts it there, so a file that binds 0.0.0.0 with the token given only in the
    /// environment (a container's way) is not refused for lack of one.
    public func checkAdminExposure(source: String,
                                   environmentToken: String? = Self.environmentAdminToken) throws(ConfigurationError) {
        for (key, token) in [("admin.token", admin.token), ("sdkConfigToken", sdkConfigToken?.value)] {
            if let token, token.count < 16 || token.contains(where: { $0.isWhitespace }) {
                throw .invalid(source: source, reason: "\(key): at least 16 characters, no spaces")
            }
        }
        guard !Self.isLoopback(server.host), admin.token == nil, environmentToken == nil, !admin.openOnNetwork else { return }
        throw .invalid(source: source, reason: "admin: server.host \(server.host) is reachable from other hosts, and /admin would be open to them; set admin.token (or THREEDS_HARNESS_ADMIN_TOKEN), or admin.openOnNetwork: true on a network you trust")
    }

    /// `THREEDS_HARNESS_ADMIN_TOKEN`, when set and not empty: it overrides `admin.token`.
    public static var environmentAdminToken: String? { environmentValue("THREEDS_HARNESS_ADMIN_TOKEN") }

    /// `THREEDS_HARNESS_SDK_CONFIG_TOKEN`, when set and not empty: it overrides `sdkConfigToken`.
    public static var environmentSDKConfigToken: String? { environmentValue("THREEDS_HARNESS_SDK_CONFIG_TOKEN") }

    /// `THREEDS_HARNESS_STORE_URL`, when set and not empty: it overrides `store.url` (a password is better there than in a file).
    public static var environmentStoreURL: String? { environmentValue("THREEDS_HARNESS_STORE_URL") }

    /// `THREEDS_HARNESS_INSTANCE_URL`, when set and not empty: it overrides `cluster.instanceURL` (each replica its own).
    public static var environmentInstanceURL: String? { environmentValue("THREEDS_HARNESS_INSTANCE_URL") }

    /// `THREEDS_HARNESS_PUBLIC_URL`, when set and not empty: it overrides `server.publicURL` (a balancer's address, known at deployment).
    public static var environmentPublicURL: String? { environmentValue("THREEDS_HARNESS_PUBLIC_URL") }

    private static func environmentValue(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// 127.0.0.0/8, ::1 and localhost: addresses only this machine reaches.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }

    /// The server settings for the Net module, with TLS files resolved against `baseDirectory`.
    public func serverConfiguration(baseDirectory: String = FileManager.default.currentDirectoryPath) -> ServerConfiguration {
        func resolve(_ path: String) -> String { path.hasPrefix("/") ? path : baseDirectory + "/" + path }
        let tlsConfiguration = TLSConfiguration(
            certificateChainFile: resolve(tls.certificate), privateKeyFile: resolve(tls.privateKey),
            trustRootsFile: tls.clientCA.map(resolve), requireClientCertificate: tls.requireClientCertificate)
        return ServerConfiguration(
            host: server.host, httpPort: server.httpPort, httpsPort: server.httpsPort,
            tls: server.httpsPort == nil ? nil : tlsConfiguration,
            maxHeaderBytes: server.maxHeaderBytes, maxBodyBytes: server.maxBodyBytes,
            requestTimeoutMilliseconds: server.requestTimeoutMs, idleTimeoutMilliseconds: server.idleTimeoutMs,
            shutdownGraceMilliseconds: server.shutdownGraceMs)
    }

    /// The profile with `rid`, or an error listing the known ones.
    public func directoryServer(_ rid: String) throws(TestPKIError) -> DirectoryServerProfile {
        guard let profile = directoryServers.first(where: { $0.rid.uppercased() == rid.uppercased() }) else {
            throw .unknownProfile(rid, known: directoryServers.map(\.rid))
        }
        return profile.profile
    }

    /// The PKI profiles of every Directory Server.
    public var profiles: [DirectoryServerProfile] { directoryServers.map(\.profile) }

    /// The scheme whose card ranges hold `pan`.
    public func scheme(for pan: String) -> PaymentScheme? { directoryServers.map(\.scheme).scheme(for: pan) }

    public var loopCount: Int { server.loops == 0 ? ProcessInfo.processInfo.activeProcessorCount : server.loops }
}

// Encodable as read, a secret as "(set)" (``ConfigurationSecret``).
extension HarnessConfiguration: Encodable {}
