import EventLoops
import Foundation
import Net
import Testing
import TestSupport

/// Three `serve` processes sharing a PostgreSQL of Debian's package, behind HAProxy in round robin, so
/// that consecutive messages of one transaction land on different instances; stopped by `stop()`.
final class HarnessCluster: @unchecked Sendable {
    let database: TemporaryPostgres
    let balancer: ChildProcess
    /// What SDKs, browsers and 3DS Servers are given: the balancer.
    let publicURL: String
    private(set) var instances: [(process: ChildProcess, url: String)] = []
    private let folder: String
    private let clientGroup = EventLoopGroup(loopCount: 1)
    /// A client of the test's own, for the cluster's instances and balancer.
    let client: HTTPClient

    /// Why the cluster tests are skipped here, or nil when they can run.
    static let missing: String? = TemporaryPostgres.missing
        ?? (FileManager.default.isExecutableFile(atPath: haproxy) ? nil : "HAProxy (Debian's haproxy) is not installed: the cluster tests are skipped")
    private static let haproxy = "/usr/sbin/haproxy"

    /// Starts a cluster off the cooperative pool (its start blocks for seconds). `configuration`: YAML added to every
    /// instance's configuration file.
    /// `balanced`: false leaves `server.publicURL` unset, so each instance names itself to the parties (the balancer
    /// still runs; the parties under test talk to the instances directly).
    /// `server`: YAML added to the `server` section (`drainSeconds: 1`).
    static func start(instances count: Int = 3, configuration: String = "", server: String = "", balanced: Bool = true) async throws -> HarnessCluster {
        try await offThePool { try HarnessCluster(instances: count, configuration: configuration, server: server, balanced: balanced) }
    }

    private init(instances count: Int, configuration: String, server: String, balanced: Bool) throws {
        client = try HTTPClient(group: clientGroup)
        database = try TemporaryPostgres()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let balancerPort = try ChildProcessPort.free()
        publicURL = "http://127.0.0.1:\(balancerPort)"
        // The second FlowTests pass of `./harness test` has the roles call each other over HTTP, each at its own instance.
        let roleCalls = ProcessInfo.processInfo.environment["THREEDS_HARNESS_TEST_ROLE_CALLS"] ?? "in-process"
        let config = folder + "/harness.yaml"
        try """
            server:
              \(balanced ? "publicURL: \(publicURL)" : "# no publicURL: each instance names itself")
              roleCalls: \(roleCalls)
              \(server)
            store:
              backend: postgres
              url: \(database.url)
            cluster:
              enabled: true
            \(configuration)
            """.write(toFile: config, atomically: true, encoding: .utf8)
        // Started together (the schema is made under an advisory lock), each taken once it says where it listens. Their
        // ports are drawn before any is bound: each another (and not the balancer's).
        var launched: [ChildProcess] = []
        var ports: Set<Int> = [balancerPort]
        for index in 0..<count {
            var port = try ChildProcessPort.free()
            while !ports.insert(port).inserted { port = try ChildProcessPort.free() }
            launched.append(try Self.launchInstance(folder: folder, index: index, port: port))
        }
        for (index, serve) in launched.enumerated() { instances.append(try Self.started(serve, index: index)) }
        try Self.balancerConfiguration(port: balancerPort, servers: instances.map(\.url)).write(toFile: folder + "/haproxy.cfg", atomically: true, encoding: .utf8)
        balancer = try ChildProcess(Self.haproxy, ["-db", "-f", folder + "/haproxy.cfg"])
        let ready = (0..<100).contains { _ in
            guard balancer.isRunning else { return false }
            if (try? ChildProcess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "2", publicURL + "/health/ready"]).output) == "200" {
                return true
            }
            Thread.sleep(forTimeInterval: 0.1)
            return false
        }
        guard ready else { throw TemporaryPostgres.Failure("HAProxy did not answer on \(publicURL): \(balancer.output)") }
    }

    /// The balancer of the guide (docker/haproxy.cfg, docs/operations.md) as written, but for its addresses: it listens on
    /// `port` of the loopback and balances over `servers`, where the guide's has Docker's names and resolver.
    static func balancerConfiguration(port: Int, servers: [String]) throws -> String {
        let guide = try String(contentsOfFile: repositoryRoot + "/docker/haproxy.cfg", encoding: .utf8)
        var lines: [String] = []
        var replaced = (bind: false, servers: false)
        for line in guide.split(separator: "\n", omittingEmptySubsequences: false) {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("# Docker's embedded DNS") || text.hasPrefix("resolvers docker") { break }
            if text == "bind :8080" {
                lines.append("    bind 127.0.0.1:\(port)")
                replaced.bind = true
            } else if text.hasPrefix("server harness-") {
                if !replaced.servers {
                    lines += servers.enumerated().map { "    server instance-\($0) \($1.dropFirst("http://".count))" }
                    replaced.servers = true
                }
            } else {
                lines.append(String(line))
            }
        }
        guard replaced.bind, replaced.servers else {
            throw TemporaryPostgres.Failure("docker/haproxy.cfg no longer has 'bind :8080' and 'server harness-…' lines to run it on the loopback")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Starts one more instance on the store (not behind the balancer: reach it at its own URL), once it answers `/health/ready`.
    @discardableResult
    func addInstance() async throws -> String { try await offThePool { try self.addInstanceNow() } }

    private func addInstanceNow() throws -> String {
        let instance = try Self.startInstance(folder: folder, index: instances.count)
        instances.append(instance)
        // 503 until it has made the changes made before it started.
        guard (0..<100).contains(where: { _ in
            if (try? fetch(instance.url + "/health/ready").status) == "200" { return true }
            Thread.sleep(forTimeInterval: 0.1)
            return false
        }) else { throw TemporaryPostgres.Failure("instance \(instances.count - 1) did not become healthy: \(instance.process.output)") }
        return instance.url
    }

    /// Stops instance `index` as an upgrade does (SIGTERM), then starts it again on its port, behind the balancer as before,
    /// once it answers `/health/ready`. The old process's exit status.
    func restart(_ index: Int) async throws -> Int32 { try await offThePool { try self.restartNow(index) } }

    private func restartNow(_ index: Int) throws -> Int32 {
        let old = instances[index]
        old.process.signal(SIGTERM)
        let status = old.process.wait()
        let port = Int(old.url.split(separator: ":").last ?? "") ?? 0
        instances[index] = try Self.startInstance(folder: folder, index: index, port: port)
        guard (0..<200).contains(where: { _ in
            if (try? fetch(instances[index].url + "/health/ready").status) == "200" { return true }
            Thread.sleep(forTimeInterval: 0.05)
            return false
        }) else { throw TemporaryPostgres.Failure("instance \(index) did not become ready again: \(instances[index].process.output)") }
        return status
    }

    /// A `serve` process of the cluster's configuration, once it says which port it took: `port`, or a ``ChildProcessPort``,
    /// which no outgoing connection can hold when a restart takes the port again.
    private static func startInstance(folder: String, index: Int, port: Int? = nil) throws -> (process: ChildProcess, url: String) {
        try started(try launchInstance(folder: folder, index: index, port: port), index: index)
    }

    private static func launchInstance(folder: String, index: Int, port: Int? = nil) throws -> ChildProcess {
        try ChildProcess(harnessBinary, ["serve", "--config", folder + "/harness.yaml", "--data-directory", folder + "/data-\(index)",
                                         "--http-port", String(try port ?? ChildProcessPort.free()), "--https-port", "0", "--loops", "1"],
                         directory: repositoryRoot)
    }

    /// The instance `serve` is, once it says where it listens.
    private static func started(_ serve: ChildProcess, index: Int) throws -> (process: ChildProcess, url: String) {
        let log = serve.awaitOutput { $0.contains("one instance of a cluster") ? $0 : nil } ?? ""
        guard let port = log.range(of: "http=127.0.0.1:").map({ Int(log[$0.upperBound...].prefix { $0.isNumber }) ?? 0 }), port > 0 else {
            throw TemporaryPostgres.Failure("instance \(index) did not start: \(serve.output)")
        }
        return (serve, "http://127.0.0.1:\(port)")
    }

    /// A `serve` of the cluster's configuration with `cluster.instanceURL` set to `url`, run until it exits (or 30 s): its
    /// status and output.
    func serve(instanceURL url: String) async throws -> (status: Int32, output: String) {
        let folder = folder
        return try await offThePool {
            let config = folder + "/instance-url.yaml"
            let shared = try String(contentsOfFile: folder + "/harness.yaml", encoding: .utf8)
            try shared.replacingOccurrences(of: "cluster:\n  enabled: true", with: "cluster:\n  enabled: true\n  instanceURL: \(url)")
                .write(toFile: config, atomically: true, encoding: .utf8)
            return try ChildProcess.run(harnessBinary, ["serve", "--config", config, "--data-directory", folder + "/data-instance-url",
                                                        "--http-port", "0", "--https-port", "0", "--loops", "1"], directory: repositoryRoot, timeout: 30)
        }
    }

    /// Kills (`kill -9`) the instance the store names as the home of the record (`role`, `id`).
    func killHome(role: String, id: String) async throws { try await offThePool { try self.killHomeNow(role: role, id: id) } }

    private func killHomeNow(role: String, id: String) throws {
        let home = try database.psql("SELECT home FROM transactions WHERE role = '\(role)' AND id = '\(id)'")
        guard let instance = instances.first(where: { $0.url == home }) else { throw TemporaryPostgres.Failure("no instance at \(home)") }
        instance.process.signal(SIGKILL)
        _ = instance.process.wait()
    }

    /// A query's answer from the cluster's database.
    func psql(_ query: String) async throws -> String { try await offThePool { try self.database.psql(query) } }

    /// True when no instance keeps a job due later (a decoupled result, a challenge's time limit) in the store.
    func noJobsLeft() async throws -> Bool { try await psql("SELECT count(*) FROM harness_jobs") == "0" }

    /// The status code and body of a GET of `url`.
    func get(_ url: String) async throws -> (status: String, body: String) { try await offThePool { try self.fetch(url) } }

    private func fetch(_ url: String) throws -> (status: String, body: String) {
        let result = try ChildProcess.run("/usr/bin/curl", ["-s", "--max-time", "10", "-w", "\n%{http_code}", url])
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
        return (String(lines.last ?? ""), lines.dropLast().joined(separator: "\n"))
    }

    /// The sum over the instances of a counter of `/metrics`, over the series whose labels contain `labels`.
    func metric(_ name: String, labels: String = "") async throws -> Double { try await offThePool { try self.metricNow(name, labels: labels) } }

    private func metricNow(_ name: String, labels: String) throws -> Double {
        try instances.filter { $0.process.isRunning }.reduce(0) { sum, instance in
            sum + (try fetch(instance.url + "/metrics").body.split(separator: "\n").filter { $0.hasPrefix(name + "{") && $0.contains(labels) }
                .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +))
        }
    }

    func stop() {
        clientGroup.shutdown()
        balancer.signal(SIGTERM)
        _ = balancer.wait()
        // All at once: an instance with a request in flight takes its shutdown grace period, the others need not wait for it.
        let running = instances.filter(\.process.isRunning)
        for instance in running { instance.process.signal(SIGTERM) }
        for (index, instance) in running.enumerated() where instance.process.wait() == 128 + SIGKILL {
            Issue.record("instance \(index) did not exit within 30 s of SIGTERM: killed\n\(instance.process.output.suffix(2000))")
        }
        database.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
