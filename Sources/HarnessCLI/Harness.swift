import ArgumentParser
import Configuration
import Foundation
import Harness

@main
struct HarnessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "threeds-harness",
        abstract: "EMV 3-D Secure 2 test harness: 3DS Server, Directory Server and ACS in one process.",
        version: HarnessVersion.current,
        subcommands: [ServeCommand.self, PKICommand.self, SimulateCommand.self, RunCommand.self, URLsCommand.self, ScenariosCommand.self, SpecCommand.self,
                      BenchSupportCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}

extension ConfigurationLocation {
    /// The configuration of `--config` (nil when not given), or an error that names the file and key.
    static func find(commandLine path: String?) throws -> ConfigurationLocation {
        do { return try find(explicit: path) } catch { throw ValidationError(error.description) }
    }
}

/// Every line the commands print is written at once, also into a pipe or a file: a CI job
/// reads a run's id and progress as they come, not in 4 KiB blocks at exit (the C library
/// buffers standard output that is not a terminal). Shadows the standard library's `print`.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let line = items.map { "\($0)" }.joined(separator: separator) + terminator
    FileHandle.standardOutput.write(Data(line.utf8))
}
