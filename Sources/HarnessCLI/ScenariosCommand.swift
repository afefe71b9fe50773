import ArgumentParser
import Configuration
import Foundation
import Harness
import Scenarios

/// `scenarios list` and `scenarios check FILE`: the scenario file without a running harness.
struct ScenariosCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenarios",
        abstract: "List or check scenario files.",
        subcommands: [List.self, Check.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the scenarios of a file: name, PAN, what it does.")
        @Argument(help: "Scenario file.") var file = "config/scenarios.yaml"

        func run() throws {
            let catalog: ScenarioCatalog
            do { catalog = try ScenarioFile.load(path: file) } catch { throw ValidationError(error.description) }
            for scenario in catalog.scenarios {
                let mark = scenario.name == catalog.fallback.name ? " (default)" : ""
                print("\(scenario.name)\(mark)\t\(scenario.pan ?? "-")\t\(scenario.description)")
            }
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check a scenario file; exits 1 naming the file, scenario and field of the first mistake.")
        @Argument(help: "Scenario file.") var file: String

        func run() throws {
            do {
                let catalog = try ScenarioFile.load(path: file)
                print("\(file): \(catalog.scenarios.count) scenarios, default \(catalog.fallback.name)")
            } catch {
                FileHandle.standardError.write(Data((error.description + "\n").utf8))
                throw ExitCode(1)
            }
        }
    }
}
