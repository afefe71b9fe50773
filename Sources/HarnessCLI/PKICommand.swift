public import ArgumentParser
import Foundation
import Harness
import JOSE

struct PKICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pki",
        abstract: "Create and show the test PKI (test keys only).",
        subcommands: [Generate.self, Export.self]
    )

    struct Options: ParsableArguments {
        @Option(name: .long, help: "YAML configuration file (for pkiDirectory and directoryServers).")
        var config = "config/harness.yaml"

        @Option(name: .long, help: "PKI folder; overrides pkiDirectory.")
        var dir: String?

        func load() throws -> (HarnessConfiguration, TestPKI) {
            let configuration: HarnessConfiguration
            do {
                configuration = FileManager.default.fileExists(atPath: config) || config != "config/harness.yaml"
                    ? try HarnessConfiguration.load(path: config) : HarnessConfiguration()
            } catch { throw ValidationError(error.description) }
            return (configuration, TestPKI(directory: dir ?? configuration.pkiDirectory))
        }
    }

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a TLS set and, per Directory Server profile, a DS CA root, DS encryption and ACS signing certificates (RSA 2048 and EC P-256).")

        @OptionGroup var options: Options

        @Flag(name: .long, help: "Overwrite existing files.")
        var force = false

        @Option(name: .long, parsing: .upToNextOption, help: "Extra DNS names or IP addresses for the TLS server certificate.")
        var tlsName: [String] = []

        @Option(name: .long, help: "Validity in years.")
        var years = 20

        func run() throws {
            let (configuration, pki) = try options.load()
            do {
                let written = try pki.generate(profiles: configuration.profiles, tlsNames: tlsName, years: years, overwrite: force)
                print("wrote \(written.count) files under \(pki.directory)/ (valid \(years) years; test keys only)")
            } catch let error as TestPKIError {
                throw CommandFailure(error.description)
            }
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print what an SDK must be configured with for one Directory Server: DS id, key ids, DS certificates, DS CA root.")

        @OptionGroup var options: Options

        @Option(name: .long, help: "The Directory Server's RID, e.g. A000000003.")
        var rid: String

        @Option(name: .long, help: "pem, der (base64), jwk (JWK set) or json (all of it).")
        var format: SDKConfiguration.Format = .pem

        func run() throws {
            let (configuration, pki) = try options.load()
            do {
                let profile = try configuration.directoryServer(rid)
                print(try SDKConfiguration(pki: pki, profile: profile).render(format), terminator: "")
            } catch let error as TestPKIError {
                throw CommandFailure(error.description)
            }
        }
    }
}

extension SDKConfiguration.Format: ExpressibleByArgument {}

/// A failure at run time: printed as "Error: ..." without the usage text, exit code 1.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
