#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import Foundation

/// The repository's root, for fixtures, scripts and the built binary.
public let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// A child process for tests, started with `posix_spawn`; its output and errors go to a file.
///
/// Not Foundation's `Process`: on Linux its `run()` copies each `/proc/self/fd` entry's
/// whole 256-byte name, which reads past glibc's buffer and crashes once a parallel test
/// run holds over a thousand sockets; and its pipe reads trap on EINTR.
public final class ChildProcess: @unchecked Sendable {
    public struct SpawnError: Error, CustomStringConvertible {
        public let description: String
    }

    public let pid: pid_t
    private let outputPath: String
    private let lock = NSLock()
    private var status: Int32?

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `input` on its stdin.
    public init(_ executable: String, _ arguments: [String], directory: String? = nil, input: String = "") throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)").path
        outputPath = scratch + ".out"
        let inputPath = scratch + ".in"
        guard FileManager.default.createFile(atPath: inputPath, contents: Data(input.utf8)) else {
            throw SpawnError(description: "cannot write \(inputPath)")
        }
        defer { unlink(inputPath) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // glibc's posix_spawn_file_actions_addchdir_np is not imported into Swift; env -C changes directory.
        let command = directory.map { ["env", "-C", $0, executable] } ?? [executable]
        let argv = (command + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let result = posix_spawnp(&pid, command[0], &actions, nil, argv, environ)
        guard result == 0 else {
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        self.pid = pid
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: 5)
        }
        unlink(outputPath)
    }

    /// Everything the child has written so far.
    public var output: String {
        (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }

    public var isRunning: Bool { exitStatus == nil }

    public func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    /// The exit code (or 128 + signal), once the child has ended; reaps it.
    public var exitStatus: Int32? {
        lock.withLock {
            if status == nil {
                var raw: Int32 = 0
                if waitpid(pid, &raw, WNOHANG) == pid {
                    let signal = raw & 0x7f
                    status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
                }
            }
            return status
        }
    }

    /// Waits for the end (killing the child after `timeout` seconds) and returns the exit status.
    @discardableResult
    public func wait(timeout: TimeInterval = 30) -> Int32 {
        if let status = waitUntil(timeout: timeout, { self.exitStatus }) { return status }
        kill(pid, SIGKILL)
        return waitUntil(timeout: 5) { self.exitStatus } ?? 128 + SIGKILL
    }

    /// Polls the output until `extract` finds something in it, the child ends, or `timeout` passes.
    public func awaitOutput<T>(timeout: TimeInterval = 20, _ extract: (String) -> T?) -> T? {
        var found: T?
        _ = waitUntil(timeout: timeout) { () -> Bool? in
            let ended = !isRunning  // read before the output, so a last write is not missed
            found = extract(output)
            return found != nil || ended ? true : nil
        }
        return found
    }

    /// The `index`th complete line of output (from 0), once written.
    public func line(_ index: Int, timeout: TimeInterval = 20) -> String? {
        awaitOutput(timeout: timeout) { text in
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            return lines.count > index ? String(lines[lines.startIndex + index]) : nil
        }
    }

    /// Runs a command to its end and returns its exit status and combined output.
    public static func run(_ executable: String, _ arguments: [String], directory: String? = nil,
                           input: String = "", timeout: TimeInterval = 60) throws -> (status: Int32, output: String) {
        let child = try ChildProcess(executable, arguments, directory: directory, input: input)
        let status = child.wait(timeout: timeout)
        return (status, child.output)
    }

    private func waitUntil<T>(timeout: TimeInterval, _ probe: () -> T?) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let value = probe() { return value }
            if Date() >= deadline { return nil }
            usleep(10_000)
        }
    }
}

/// The built `threeds-harness` next to this test bundle.
public var harnessBinary: String {
    let bundle = Bundle.main.bundleURL.deletingLastPathComponent()
    let candidates = [bundle.appendingPathComponent("threeds-harness").path,
                      repositoryRoot + "/.build/debug/threeds-harness"]
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[1]
}

/// A copy of the committed test PKI in a fresh temporary folder, for a test that changes it
/// (a harness started on it may issue its TLS certificate anew); the caller removes it.
public func copyOfTheTestPKI(_ purpose: String) throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pki-\(purpose)-\(UUID().uuidString)").path
    try FileManager.default.copyItem(atPath: repositoryRoot + "/certs", toPath: directory)
    return directory
}
