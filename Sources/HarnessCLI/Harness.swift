import ArgumentParser

@main
struct HarnessCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "threeds-harness",
        abstract: "EMV 3-D Secure 2 test harness: 3DS Server, Directory Server and ACS in one process.",
        subcommands: [ServeCommand.self, PKICommand.self, SimulateCommand.self, ScenariosCommand.self, SpecCommand.self, BenchSupportCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}
