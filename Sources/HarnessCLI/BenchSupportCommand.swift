import ArgumentParser
import Bench
import EMV3DS
import Foundation
import JSON

/// Helpers for `bench/run` (the `Bench` module's measures): a ready AReq body, and the rates of the parts of a transaction.
struct BenchSupportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-support",
        abstract: "Benchmark helpers (used by bench/run).",
        shouldDisplay: false,
        subcommands: [AReqBody.self, CryptoRate.self, ChallengeCryptoRate.self, ChallengeLoadCommand.self, ReadRate.self]
    )

    /// Prints operations per second and the CPU microseconds each cost.
    static func printRate(threads: Int, seconds: Double, _ operation: @escaping @Sendable () throws -> Void) {
        let rate = RateMeter.measure(threads: threads, seconds: seconds, operation)
        print(String(format: "%.0f %.1f", rate.perSecond, rate.cpuMicroseconds))
    }

    /// Prints a complete app-channel AReq for the Visa DS with device data in `style`.
    struct AReqBody: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "areq")
        @OptionGroup var parent: BenchSupportCommandOptions
        @Option var style = "rsa"

        func run() throws {
            print(JSONWriter.string(try BenchTransaction.appAReq(pki: parent.pki, style: BenchTransaction.style(style))))
        }
    }

    /// Reads the same AReq on one thread for a while, as the DS reads one from the wire: parsed alone (`--parse-only`), or
    /// parsed and checked by every field rule: the figure of a change to the reader or the rules.
    struct ReadRate: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "read")
        @Option(help: "A file holding the AReq (bench-support areq writes one).") var file: String
        @Flag var parseOnly = false
        @Option var seconds = 3.0

        func run() throws {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            _ = try AReq(bytes: bytes, rules: AReqRules.fromThreeDSServer)  // a valid AReq, or say why not
            let parseOnly = parseOnly
            BenchSupportCommand.printRate(threads: 1, seconds: seconds) {
                if parseOnly { _ = try JSONReader.parse(bytes) } else { _ = try AReq(bytes: bytes, rules: AReqRules.fromThreeDSServer) }
            }
        }
    }

    /// Decrypts the same device data on N threads for a while.
    struct CryptoRate: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "crypto")
        @OptionGroup var parent: BenchSupportCommandOptions
        @OptionGroup var rate: RateOptions
        @Option var style = "rsa"

        func run() throws {
            let operation = try ServerCrypto.deviceDataDecryption(pki: parent.pki, style: BenchTransaction.style(style))
            BenchSupportCommand.printRate(threads: rate.threads, seconds: rate.seconds, operation)
        }
    }

    /// The server-side crypto of one app challenge, on N threads (``ServerCrypto/challenge(pki:style:)``).
    struct ChallengeCryptoRate: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "challenge-crypto")
        @OptionGroup var parent: BenchSupportCommandOptions
        @OptionGroup var rate: RateOptions
        @Option var style = "android"

        func run() throws {
            let operation = try ServerCrypto.challenge(pki: parent.pki, style: BenchTransaction.style(style))
            BenchSupportCommand.printRate(threads: rate.threads, seconds: rate.seconds, operation)
        }
    }

    /// Full app challenges at a fixed concurrency (``ChallengeLoad``): prints transactions/s, then p50 and p99 in ms of the
    /// authentication, CReq 1 and CReq 2 (with the RReq).
    struct ChallengeLoadCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "challenge")
        @OptionGroup var parent: BenchSupportCommandOptions
        @Option var url = "http://127.0.0.1:8080"
        @Option var concurrency = 32
        @Option var seconds = 8.0
        @Option var style = "android"

        func run() async throws {
            let load = ChallengeLoad(url: url, pki: parent.pki, concurrency: concurrency, seconds: seconds, style: try BenchTransaction.style(style))
            print(try await load.run().line)
        }
    }
}

struct BenchSupportCommandOptions: ParsableArguments {
    @Option(name: .long, help: "Test PKI directory.")
    var pki = "certs"
}

/// How a rate is measured: on how many threads at once, for how long.
struct RateOptions: ParsableArguments {
    @Option(help: "Threads measuring at once.") var threads = 2
    @Option(help: "Seconds to measure for.") var seconds = 3.0
}
