public import ArgumentParser
import Configuration
import Foundation
import Harness
import JOSE

struct PKICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pki",
        abstract: "Create and show the test PKI (test keys only).",
        subcommands: [Generate.self, TLS.self, Export.self]
    )

    struct Options: ParsableArguments {
        @Option(name: .long, help: "YAML configuration file (for pkiDirectory and directoryServers; default: config/harness.yaml here or in the binary's checkout).")
        var config: String?

        @Option(name: .long, help: "PKI folder; overrides pkiDirectory.")
        var dir: String?

        func load() throws -> (HarnessConfiguration, TestPKI) {
            let location = try ConfigurationLocation.find(commandLine: config)
            return (location.configuration, TestPKI(directory: dir ?? location.resolve(location.configuration.pkiDirectory)))
        }
    }

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a TLS set and, per Directory Server profile, a DS CA root, DS encryption and ACS signing certificates (RSA 2048 and EC P-256) and a Split-SDK server certificate (EC P-256).")

        @OptionGroup var options: Options

        @Flag(name: .long, help: "Overwrite existing files.")
        var force = false

        @Flag(name: .long, help: "Keep the existing set and write only what it lacks under its DS CA roots (the Split-SDK server certificates of 2.3.1).")
        var missing = false

        @Option(name: .long, parsing: .upToNextOption, help: "Extra DNS names or IP addresses for the TLS server certificate.")
        var tlsName: [String] = []

        @Option(name: .long, help: "Validity in years.")
        var years = 20

        func run() throws {
            let (configuration, pki) = try options.load()
            if missing {
                let written = try pki.generateMissing(profiles: configuration.profiles, years: years)
                return print("wrote \(written.count) missing files under \(pki.directory)/ (test keys only)")
            }
            do {
                let written = try pki.generate(profiles: configuration.profiles, tlsNames: tlsName, years: years, overwrite: force)
                print("wrote \(written.count) files under \(pki.directory)/ (valid \(years) years; test keys only)")
            } catch let error as TestPKIError {
                throw CommandFailure(error.description)
            }
        }
    }

    struct TLS: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a new TLS server certificate under the test PKI's TLS root, for localhost and the given names; nothing else changes.",
            discussion: """
                Names are DNS names or IP addresses: the address a phone or an emulator reaches the harness at \
                (192.168.1.20, 10.0.2.2, harness). The certificate is valid for at most 397 days (iOS refuses TLS server \
                certificates valid for more than 825 days, browsers more than 398). The TLS root and every DS and ACS key stay as they are.
                """)

        @OptionGroup var options: Options

        @Option(name: .long, help: "A DNS name or IP address for the certificate (repeatable).")
        var name: [String] = []

        @Option(name: .long, help: "Validity in days (at most 397).")
        var days = TestPKI.tlsServerValidityDays

        func validate() throws {
            guard (2...TestPKI.tlsServerValidityDays).contains(days) else {
                throw ValidationError("--days \(days) is not 2-\(TestPKI.tlsServerValidityDays)")
            }
            for name in name where !TestPKI.acceptsTLSName(name) {
                throw ValidationError("--name \"\(name)\" is not a DNS name or an IP address")
            }
        }

        func run() throws {
            let (_, pki) = try options.load()
            do {
                let written = try pki.issueTLSServerCertificate(names: name, days: days)
                let names = TestPKI.tlsServerBaseNames + name
                print("wrote \(written.joined(separator: " and ")): valid \(days) days for \(names.joined(separator: ", ")), under \(pki.directory)/tls/root-ca.pem")
            } catch {
                throw CommandFailure("cannot issue the TLS server certificate under \(pki.directory)/tls: \(error)")
            }
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print what an SDK must be configured with for one Directory Server: DS id, key ids, DS certificates, DS CA root.")

        @OptionGroup var options: Options

        @Option(name: .long, help: "The Directory Server's RID, e.g. A000000003.")
        var rid: String

        @Option(name: .long, help: "pem, der (base64), jwk (JWK set), json (all of it), or one SDK family's shape: activesdk (GPayments), token (Adyen's fingerprintToken members), jwk-single (one JWK per key), stripe (docs/sdk-config.md).")
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
