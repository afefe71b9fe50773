import ArgumentParser
import Configuration
import Foundation
import Harness
import JOSE

/// `urls --host HOST`: what an app, its backend and its SDK must be given to use the harness
/// reached at HOST (a phone's view of this machine), and the settings that make it so.
struct URLsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "urls",
        abstract: "Print the URLs an app must use with the harness reached at HOST, and the settings that go with them.",
        discussion: """
            HOST is how the device reaches this machine: its LAN address (192.168.1.20), 10.0.2.2 from the Android \
            emulator, localhost with `adb reverse` or in the iOS simulator. See docs/devices.md.
            """)

    @Option(name: .long, help: "How the device reaches this machine: an IP address or a DNS name.")
    var host: String

    @Option(name: .long, help: "YAML configuration file (for the ports; default: config/harness.yaml here or in the binary's checkout).")
    var config: String?

    func validate() throws {
        guard TestPKI.acceptsTLSName(host) else {
            throw ValidationError("--host \(host) is not an IP address or a DNS name")
        }
    }

    func run() throws {
        let location = try ConfigurationLocation.find(commandLine: config)
        let server = location.configuration.server
        let address = host.contains(":") ? "[\(host)]" : host
        let http = server.httpPort.map { "http://\(address):\($0)" }
        let https = server.httpsPort.map { "https://\(address):\($0)" }
        let isLocal = ["localhost", "127.0.0.1", "::1"].contains(host)
        // The Android emulator's 10.0.2.2 is the host's loopback: no need to listen on every interface.
        let reachesLoopback = isLocal || host == "10.0.2.2"
        var lines = ["# The harness as a device reaches it at \(host)", ""]
        func row(_ what: String, _ value: String) { lines.append(what.padding(toLength: 34, withPad: " ", startingAt: 0) + value) }
        if let https { row("HTTPS base URL", https) }
        if let http { row("HTTP base URL", http) }
        let base = https ?? http ?? ""
        row("3DS Server (app's backend)", base + "/3ds-server/authenticate")
        row("transaction result", base + "/3ds-server/transactions/{threeDSServerTransID}")
        row("Directory Server (3DS Server)", base + "/ds/areq")
        row("ACS challenge URL (SDK)", (https ?? base) + "/acs/challenge")
        row("health", base + "/health")
        row("TLS root to trust", location.resolve(location.configuration.pkiDirectory) + "/tls/root-ca.pem")
        lines += ["", "# Settings in \(location.path ?? "config/harness.yaml") for this host:"]
        if !reachesLoopback {
            lines.append("server:\n  host: 0.0.0.0                      # reachable from other devices (then /admin needs admin.token)")
        }
        if !isLocal {
            lines.append("tls:\n  names: [\"\(host)\"]                # serve re-issues the TLS certificate with this name")
        }
        lines.append("accessControlServer:\n  challengeURL: \((https ?? base) + "/acs/challenge")")
        if https == nil { lines.append("# HTTPS is off: most SDKs refuse a plain-HTTP acsURL; set server.httpsPort.") }
        print(lines.joined(separator: "\n"))
    }
}
