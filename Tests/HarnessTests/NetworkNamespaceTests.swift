#if canImport(Glibc)
import Glibc
#endif
import Foundation
import JOSE
import TestSupport
import Testing

/// The path a phone takes: a client on another host reaches the harness at an
/// address of the host's network, and the SDK posts its CReqs to the `acsURL` the ACS signed,
/// which names that address. Here the other host is a network namespace of this test's own,
/// joined to this one by a veth pair; nothing else is addressed.
@Suite("Reached from another host (network namespace)", .serialized)
struct NetworkNamespaceTests {
    /// A copy of the committed test PKI in a temporary folder: the harness re-issues its TLS
    /// leaf there for the veth address, under the committed root.
    /// The SDK and the app, in the namespace, complete a text challenge at the veth address.
    /// Where namespaces cannot be made (not root, no iproute2, a container without CAP_SYS_ADMIN
    /// and CAP_NET_ADMIN) there is nothing to test: a condition trait skips it, and the probe
    /// writes the failing command and its output to stderr.
    @Test(.enabled(if: NetworkNamespace.problem == nil,
                   "cannot make a network namespace with a veth pair here (needs iproute2's ip at /usr/sbin/ip or /sbin/ip, and root with CAP_SYS_ADMIN and CAP_NET_ADMIN); the reason is on stderr"))
    func aClientInAnotherNetworkNamespaceCompletesAChallengeAtTheVethAddress() throws {
        let namespace = try NetworkNamespace.make()
        defer { namespace.remove() }
        let host = namespace.hostAddress
        let directory = try copyOfTheTestPKI("netns")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The challenge URL names the HTTPS port, so the port is chosen first: free on an
        // address that only this test's veth carries.
        let https = try NetworkNamespace.freePort(on: host)
        let challengeURL = "https://\(host):\(https)/acs/challenge"
        let config = directory + "/harness.yaml"
        // Off loopback /admin needs a token; this test does not use /admin.
        try """
            server: {host: \(host), httpPort: 0, httpsPort: \(https)}
            admin: {token: \(UUID().uuidString)}
            pkiDirectory: \(directory)
            tls: {certificate: \(directory)/tls/server-chain.pem, privateKey: \(directory)/tls/server-key.pem, names: [\(host)]}
            accessControlServer: {challengeURL: \(challengeURL)}
            scenarios: \(repositoryRoot)/config/scenarios.yaml
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let serve = try ChildProcess(harnessBinary, ["serve", "--config", config, "--loops", "1"])
        defer { if serve.isRunning { serve.signal(SIGKILL); _ = serve.wait(timeout: 5) } }
        let log = serve.awaitOutput { $0.contains("listening") ? $0 : nil } ?? ""
        try #require(log.contains("https=\(host):\(https)"), "\(serve.output)")
        #expect(log.contains("re-issued the TLS server certificate") && log.contains("reason=it does not name \(host)"), "\(log)")
        let http = log.range(of: "http=\(host):").map { Int(log[$0.upperBound...].prefix { $0.isNumber }) ?? 0 } ?? 0
        try #require(http > 0, "\(log)")

        // Inside, 127.0.0.1 is the namespace's own loopback, where nothing listens: the client
        // below can only reach the harness across the veth.
        let root = repositoryRoot + "/certs/tls/root-ca.pem"
        for url in ["http://127.0.0.1:\(http)/health", "https://127.0.0.1:\(https)/health"] {
            let loopback = try namespace.run("/usr/bin/curl", ["-sS", "--max-time", "10", "--cacert", root, url])
            #expect(loopback.status == 7, "curl \(url) in the namespace: \(loopback.output)")  // 7: could not connect
        }
        let health = try namespace.run("/usr/bin/curl", ["-sS", "--max-time", "10", "--cacert", root, "https://\(host):\(https)/health"])
        #expect(health.output.hasPrefix(#"{"status":"ok""#), "\(health.output)")

        // The SDK and the app, in the namespace, trusting the committed TLS root: a text
        // challenge answered 1234 (config/scenarios.yaml, challenge-text). With --pan, simulate
        // exits 0 whatever the SDK's outcome (only --all checks it), so the outcome is read
        // from its output.
        let simulate = try namespace.run(harnessBinary, ["simulate", "--config", repositoryRoot + "/config/harness.yaml",
                                                         "--url", "https://\(host):\(https)", "--pan", "4000000000110009", "--answers", "1234"],
                                         directory: repositoryRoot, timeout: 90)
        #expect(simulate.status == 0, "\(simulate.output)")
        #expect(simulate.output.contains("screen 1: acsUiType 01"), "\(simulate.output)")
        let final = try #require(simulate.output.split(separator: "\n").first { $0.contains(": SDK ") && $0.contains("3DS Server") },
                                 "\(simulate.output)")
        #expect(final.contains("SDK completed transStatus Y; 3DS Server completed: Y"), "\(simulate.output)")

        // The acsURL the SDK posted to is the one signed into acsSignedContent, kept in the 3DS
        // Server's record of the transaction.
        let transactionID = final.prefix { $0 != ":" }.trimmingCharacters(in: .whitespaces)
        let answer = try namespace.run("/usr/bin/curl", ["-sS", "--max-time", "10", "--cacert", root,
                                                         "https://\(host):\(https)/3ds-server/transactions/\(transactionID)"])
        let record = try #require(try JSONSerialization.jsonObject(with: Data(answer.output.utf8)) as? [String: Any], "\(answer.output)")
        #expect(record["state"] as? String == "completed" && record["transStatus"] as? String == "Y", "\(answer.output.prefix(400))")
        let signed = try #require((record["challenge"] as? [String: Any])?["acsSignedContent"] as? String, "\(answer.output.prefix(400))")
        let parts = signed.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3, "\(signed)")
        let payload = try JSONSerialization.jsonObject(with: Data(try JOSEError.decodingBase64URL(parts[1], part: "acsSignedContent payload")))
        #expect((payload as? [String: Any])?["acsURL"] as? String == challengeURL, "\(payload)")

        serve.signal(SIGTERM)
        #expect(serve.wait() == 0, "\(serve.output)")
    }
}

/// A network namespace joined to the host by a veth pair with a /30 on it: the host's end
/// 10.231.X.1, the namespace's 10.231.X.2, X from this process's id (the first free one from
/// there), so parallel runs do not collide. Named after the process too.
struct NetworkNamespace {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// iproute2's `ip`, where Debian puts it.
    static let ip: String? = ["/usr/sbin/ip", "/sbin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }

    let name: String
    let hostInterface: String
    let hostAddress: String
    let clientAddress: String

    /// Why a namespace with a veth pair cannot be made here, or nil when it can: tried once,
    /// on a throwaway namespace, which is deleted again.
    static let problem: String? = {
        let problem = probe()
        if let problem { FileHandle.standardError.write(Data("NetworkNamespaceTests skipped: \(problem)\n".utf8)) }
        return problem
    }()

    private static func probe() -> String? {
        guard let ip else { return "no iproute2: neither /usr/sbin/ip nor /sbin/ip" }
        removeLeftovers()
        let name = "threeds-probe-\(getpid())", interface = "tdsp\(getpid())"
        defer {
            _ = try? ChildProcess.run(ip, ["link", "del", interface], timeout: 10)
            _ = try? ChildProcess.run(ip, ["netns", "del", name], timeout: 10)
        }
        do {
            try command(["netns", "add", name])
            try command(["link", "add", interface, "type", "veth", "peer", "name", "tdsq\(getpid())", "netns", name])
            try command(["netns", "exec", name, ip, "link", "set", "lo", "up"])
            return nil
        } catch {
            return "\(error) (effective user id \(geteuid()))"
        }
    }

    /// Makes the namespace and the veth pair, addresses and links up; undoes what it made
    /// when a step fails.
    static func make() throws -> NetworkNamespace {
        guard let ip else { throw Failure(description: "no iproute2: neither /usr/sbin/ip nor /sbin/ip") }
        let pid = Int(getpid())
        // A /30 that no interface of the host holds yet.
        var subnet: Int?
        for offset in 0..<256 where subnet == nil {
            let candidate = (pid + offset) % 256
            if try ChildProcess.run(ip, ["-o", "addr", "show", "to", "10.231.\(candidate).0/30"], timeout: 10).output
                .trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { subnet = candidate }
        }
        guard let subnet else { throw Failure(description: "every 10.231.X.0/30 is taken on this host") }
        let namespace = NetworkNamespace(name: "threeds-test-\(pid)", hostInterface: "tdsh\(pid)",
                                         hostAddress: "10.231.\(subnet).1", clientAddress: "10.231.\(subnet).2")
        let inside = "tdsn\(pid)"
        do {
            try command(["netns", "add", namespace.name])
            try command(["link", "add", namespace.hostInterface, "type", "veth", "peer", "name", inside, "netns", namespace.name])
            try command(["addr", "add", namespace.hostAddress + "/30", "dev", namespace.hostInterface])
            try command(["link", "set", namespace.hostInterface, "up"])
            try command(["-n", namespace.name, "addr", "add", namespace.clientAddress + "/30", "dev", inside])
            try command(["-n", namespace.name, "link", "set", inside, "up"])
            try command(["-n", namespace.name, "link", "set", "lo", "up"])
        } catch {
            namespace.remove()
            throw error
        }
        return namespace
    }

    /// Deletes the host's end of the veth (which takes the other end with it at once) and the namespace.
    func remove() {
        guard let ip = Self.ip else { return }
        _ = try? ChildProcess.run(ip, ["link", "del", hostInterface], timeout: 10)
        _ = try? ChildProcess.run(ip, ["netns", "del", name], timeout: 10)
    }

    /// Runs a command inside the namespace (`ip netns exec`), to its end or `timeout`.
    func run(_ executable: String, _ arguments: [String], directory: String? = nil,
             timeout: TimeInterval = 30) throws -> (status: Int32, output: String) {
        guard let ip = Self.ip else { throw Failure(description: "no iproute2") }
        return try ChildProcess.run(ip, ["netns", "exec", name, executable] + arguments, directory: directory, timeout: timeout)
    }

    /// A TCP port free on `address` now: bound to port 0 there, read, released.
    static func freePort(on address: String) throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var bound = sockaddr_in()
        bound.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, address, &bound.sin_addr) == 1 else { throw Failure(description: "\(address) is not an IPv4 address") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &bound) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 ? getsockname(descriptor, raw, &length) : -1
            }
        }
        guard result == 0 else { throw Failure(description: "bind \(address):0: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: bound.sin_port))
    }

    /// What a run of this test left when it was killed (its process is gone): the host's end of
    /// its veth (the other end goes with it) and its namespace.
    private static func removeLeftovers() {
        guard let ip, let list = try? ChildProcess.run(ip, ["netns", "list"], timeout: 10).output else { return }
        for line in list.split(separator: "\n") {
            let name = String(line.prefix { $0 != " " })
            for prefix in ["threeds-test-", "threeds-probe-"] where name.hasPrefix(prefix) {
                guard let pid = pid_t(name.dropFirst(prefix.count)), kill(pid, 0) != 0, errno == ESRCH else { continue }
                _ = try? ChildProcess.run(ip, ["link", "del", (prefix == "threeds-test-" ? "tdsh" : "tdsp") + "\(pid)"], timeout: 10)
                _ = try? ChildProcess.run(ip, ["netns", "del", name], timeout: 10)
            }
        }
    }

    private static func command(_ arguments: [String]) throws {
        guard let ip else { throw Failure(description: "no iproute2") }
        let result = try ChildProcess.run(ip, arguments, timeout: 10)
        guard result.status == 0 else {
            throw Failure(description: "`ip \(arguments.joined(separator: " "))` exited \(result.status): \(result.output.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }
}
