import ArgumentParser
import EMV3DS
import EMVCrypto
import Foundation
import JOSE
import JSON
import SDKSimulator
import Synchronization

/// Helpers for `bench/run`: a ready AReq body, and the crypto-bound rate of the DS.
struct BenchSupportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-support",
        abstract: "Benchmark helpers (used by bench/run).",
        shouldDisplay: false,
        subcommands: [AReqBody.self, CryptoRate.self]
    )

    static func deviceData(pki directory: String, style: DeviceDataStyle) throws -> (SimulatedSDKTransaction, DirectoryServerKeys) {
        let pki = TestPKI(directory: directory)
        let rid = "A000000003"
        let directoryServer = DirectoryServerConfiguration(rid: rid, certificate: try pki.dsCertificate(rid, style.keyVariant))
        let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer, messageVersion: .v2_2_0, style: style)
        let keys = DirectoryServerKeys(rsa: try pki.dsPrivateKey(rid, .rsa), ec: try pki.dsPrivateKey(rid, .ec))
        return (sdk, keys)
    }

    /// Prints a complete app-channel AReq for the Visa DS with device data in `style`.
    struct AReqBody: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "areq")
        @OptionGroup var parent: BenchSupportCommandOptions
        @Option var style = "rsa"

        func run() throws {
            guard let style = DeviceDataStyle(rawValue: style) else { throw ValidationError("unknown style \(style)") }
            let (sdk, _) = try BenchSupportCommand.deviceData(pki: parent.pki, style: style)
            var areq = sdk.authenticateRequest(pan: "4000000000001000")
            let fixed: [(String, JSONValue)] = [
                ("messageType", .string("AReq")), ("deviceChannel", .string("01")),
                ("threeDSServerTransID", .string("8a880dc0-d2d2-4067-bcb1-b08d1690b26e")),
                ("threeDSServerRefNumber", .string("3DS_LOA_SER_BENCH_020200_00001")), ("threeDSServerURL", .string("http://127.0.0.1:9/rreq")),
                ("threeDSRequestorID", .string("bench")), ("threeDSRequestorName", .string("Bench")),
                ("threeDSRequestorURL", .string("https://bench.example")), ("threeDSRequestorAuthenticationInd", .string("01")),
                ("acquirerBIN", .string("400551")), ("acquirerMerchantID", .string("bench")), ("mcc", .string("5411")),
                ("merchantCountryCode", .string("840")), ("merchantName", .string("Bench")), ("purchaseExponent", .string("2")),
                ("purchaseDate", .string("20261121120000")), ("sdkMaxTimeout", .string("05")),
                ("sdkEphemPubKey", sdk.ephemeralPublicKeyJSON),
                ("sdkEncData", .string(sdk.deviceData)),
                ("deviceRenderOptions", .object([("sdkInterface", .string("03")), ("sdkUiType", .array([.string("01")]))])),
            ]
            areq.set("deviceData", nil)
            for (key, value) in fixed { areq.set(key, value) }
            print(JSONWriter.string(areq))
        }
    }

    /// Decrypts the same device data on N threads for a while; prints operations per second.
    struct CryptoRate: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "crypto")
        @OptionGroup var parent: BenchSupportCommandOptions
        @Option var style = "rsa"
        @Option var threads = 2
        @Option var seconds = 3.0

        func run() throws {
            guard let style = DeviceDataStyle(rawValue: style) else { throw ValidationError("unknown style \(style)") }
            let (sdk, keys) = try BenchSupportCommand.deviceData(pki: parent.pki, style: style)
            let deadline = Date().addingTimeInterval(seconds)
            let total = Mutex(0)
            let deviceData = sdk.deviceData
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                var done = 0
                while Date() < deadline {
                    _ = try? DeviceData.decrypt(deviceData, keys: keys, directoryServerID: "A000000003")
                    done += 1
                }
                total.withLock { $0 += done }
            }
            print(String(format: "%.0f", Double(total.withLock { $0 }) / seconds))
        }
    }
}

struct BenchSupportCommandOptions: ParsableArguments {
    @Option(name: .long, help: "Test PKI directory.")
    var pki = "certs"
}
