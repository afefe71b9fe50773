import Foundation

/// A PostgreSQL server of Debian's package in a temporary directory, on a free loopback port
/// (``ChildProcessPort``), as an unprivileged user (the `postgres` account when the tests run as root: the server refuses root).
/// Made from a copy of one `initdb`'d folder (or by `initdb`) and `pg_ctl` for one suite; `stop()` removes it.
public final class TemporaryPostgres: @unchecked Sendable {
    public private(set) var url = ""
    private let directory: String
    private let binaries: String
    /// The server's options: its socket folder, address and port.
    private var options = ""

    /// Why the PostgreSQL tests are skipped on this machine, or nil when they can run.
    public static let missing: String? = {
        guard binariesDirectory != nil else { return "PostgreSQL's server (Debian's postgresql) is not installed: the PostgreSQL store tests are skipped" }
        if getuid() == 0, getpwnam("postgres") == nil { return "no postgres account to run the server as (we are root): the PostgreSQL store tests are skipped" }
        return nil
    }()

    /// /usr/lib/postgresql/NN/bin of the newest installed server.
    private static let binariesDirectory: String? = {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        return versions.compactMap(Int.init).sorted().last.map { "/usr/lib/postgresql/\($0)/bin" }
            .flatMap { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") ? $0 : nil }
    }()

    /// Starts a server on a port of `ports`, drawing again while the server finds the port taken; fails with the
    /// failing command's output and the end of the server's log.
    public init(ports: () throws -> Int = ChildProcessPort.free) throws {
        guard let binaries = Self.binariesDirectory else { throw Failure("no PostgreSQL server installed") }
        self.binaries = binaries
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("postgres-\(UUID().uuidString)").path
        try Self.makeServersFolder(at: directory)
        // The template's copy keeps the owner and modes initdb gave them; without one, initdb.
        let copied = Self.template.map { (try? ChildProcess.run("/bin/cp", ["-a", $0, directory + "/data"]))?.status == 0 } ?? false
        if !copied {
            try? FileManager.default.removeItem(atPath: directory + "/data")  // what a failed copy left
            try Self.initdb(binaries, into: directory)
        }
        var attempt = 1
        while true {
            let port = try ports()
            options = "-k \(directory) -c listen_addresses=127.0.0.1 -p \(port) -c fsync=off -c lc_messages=C"
            try? FileManager.default.removeItem(atPath: directory + "/log")
            do {
                try start()
                url = "postgresql://harness@127.0.0.1:\(port)/postgres"
                return
            } catch is Failure where attempt < 5 && log.contains("could not bind") {
                // Another process took the port between the probe and the server's bind: try another.
                attempt += 1
            }
        }
    }

    /// Stops the server (cleanly: its connections are closed, what it acknowledged is kept) and starts
    /// it again on the same port and files.
    public func restart() throws {
        try pause()
        try resume()
    }

    /// Stops the server cleanly and keeps its files: an outage, ended by ``resume()``.
    public func pause() throws {
        try run(binaries + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "stop"])
    }

    /// Starts the server ``pause()`` stopped, on the same port and files.
    public func resume() throws { try start() }

    /// `pg_ctl start`; a failure carries the end of the server's log, which says why it did not start.
    private func start() throws {
        do {
            try run(binaries + "/pg_ctl", ["-D", directory + "/data", "-l", directory + "/log", "-w", "start", "-o", options])
        } catch let failure as Failure {
            throw Failure(failure.description + "\nthe server's log ends:\n" + log.split(separator: "\n").suffix(20).joined(separator: "\n"))
        }
    }

    private var log: String { (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? "" }

    /// Stops the server at once (as a crash would) or cleanly, and removes its files.
    public func stop(immediately: Bool = true) {
        _ = try? run(binaries + "/pg_ctl", ["-D", directory + "/data", "-m", immediately ? "immediate" : "fast", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `psql -c sql` against the server: for a test to look at the database itself.
    public func psql(_ sql: String) throws -> String {
        let result = try ChildProcess.run("/usr/bin/psql", [url, "-A", "-t", "-c", sql])
        guard result.status == 0 else { throw Failure("psql \(sql): \(result.output)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func run(_ executable: String, _ arguments: [String]) throws { try Self.run(executable, arguments, in: directory) }

    private static func run(_ executable: String, _ arguments: [String], in directory: String) throws {
        let command = getuid() == 0 ? ("/usr/sbin/runuser", ["-u", "postgres", "--", executable] + arguments) : (executable, arguments)
        let result = try ChildProcess.run(command.0, command.1, directory: directory, timeout: 60)
        guard result.status == 0 else { throw Failure("\(executable) \(arguments.joined(separator: " ")): \(result.output)") }
    }

    /// A new folder at `path` that the server's account owns (the `postgres` account when the tests run as root).
    private static func makeServersFolder(at path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        if getuid() == 0 { try FileManager.default.setAttributes([.ownerAccountName: "postgres"], ofItemAtPath: path) }
    }

    /// A new cluster's data folder in `directory`/data.
    private static func initdb(_ binaries: String, into directory: String) throws {
        try run(binaries + "/initdb", ["-D", directory + "/data", "-A", "trust", "-U", "harness", "-E", "UTF8", "--no-sync"], in: directory)
    }

    /// A data folder `initdb` made once in this process and copied for each server (initdb is most of a server's
    /// start); removed as the process exits. Nil where it could not be made: each server then runs initdb.
    private static let template: String? = {
        guard let binaries = binariesDirectory else { return nil }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("postgres-template-\(getpid())").path
        do {
            try makeServersFolder(at: folder)
            try initdb(binaries, into: folder)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            return nil
        }
        atexit { TemporaryPostgres.template.map { try? FileManager.default.removeItem(atPath: ($0 as NSString).deletingLastPathComponent) } }
        return folder + "/data"
    }()

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }
}
