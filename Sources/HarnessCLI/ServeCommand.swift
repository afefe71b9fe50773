import ArgumentParser
import Configuration
import Foundation
import Harness
import JOSE
import Logging
import Synchronization

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the harness until SIGINT or SIGTERM (then stop gracefully and exit 0)."
    )

    @Option(name: .long, help: "YAML configuration file (default: config/harness.yaml here or in the binary's checkout).")
    var config: String?

    @Option(name: .long, help: "Event loops (threads); 0 = one per core. Overrides server.loops.")
    var loops: Int?

    @Option(name: .long, help: "Plain HTTP port (0 = any free port). Overrides server.httpPort.")
    var httpPort: Int?

    @Option(name: .long, help: "HTTPS port (0 = any free port). Overrides server.httpsPort.")
    var httpsPort: Int?

    @Option(name: .long, help: "Where the store is kept (a CI job's own folder). Overrides dataDirectory.")
    var dataDirectory: String?

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String?

    @Flag(name: .long, help: "Log JSON lines instead of text.")
    var jsonLogs = false

    func run() throws {
        let location = try ConfigurationLocation.find(commandLine: config)
        var configuration = location.configuration
        if let loops { configuration.server.loops = loops }
        if let httpPort { configuration.server.httpPort = httpPort }
        if let httpsPort { configuration.server.httpsPort = httpsPort }
        if let dataDirectory { configuration.dataDirectory = dataDirectory }
        if let logLevel { configuration.logging.level = logLevel }
        if jsonLogs { configuration.logging.format = .json }
        // A secret is better in the environment than in a file or on the command line.
        if let token = HarnessConfiguration.environmentAdminToken { configuration.admin.token = token }
        if let token = HarnessConfiguration.environmentSDKConfigToken { configuration.sdkConfigToken = ConfigurationSecret(token) }
        if let url = HarnessConfiguration.environmentStoreURL { configuration.store.url = ConfigurationSecret(url) }
        if let url = HarnessConfiguration.environmentInstanceURL { configuration.cluster.instanceURL = url }
        if let url = HarnessConfiguration.environmentPublicURL { configuration.server.publicURL = url }
        try configuration.validate(source: "\(location.path ?? "the embedded defaults") with THREEDS_HARNESS_* from the environment")
        guard let level = LogLevelName.parse(configuration.logging.level) else {
            throw ValidationError("log level \(configuration.logging.level) is not one of \(LogLevelName.all.joined(separator: ", "))")
        }
        bootstrapLogging(format: configuration.logging.format, level: level)
        let logger = Logger(label: "harness")

        // Signals arrive on a dispatch queue, never on an event loop.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        let stop = DispatchSemaphore(value: 0)
        let sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }

        renewTLSServerCertificate(configuration, location: location, logger: logger)
        let app = try HarnessApp(configuration: configuration, baseDirectory: location.baseDirectory, logger: logger)
        try app.start()
        if let problem = Self.wait(for: { await app.clusterInstanceProblem() }) {
            let reason = problem + "; set it to the URL the other instances reach this one at (THREEDS_HARNESS_INSTANCE_URL)"
            logger.critical("refusing to start", metadata: ["reason": "\(reason)"])
            app.shutdown()
            FileHandle.standardError.write(Data("Error: \(reason)\n".utf8))
            // As at a stop: no exit() cleanup while a thread of the runtime may still hold OpenSSL's state.
            fflush(nil)
            _exit(1)
        }
        // SIGHUP reloads the scenario file; a bad one is logged and changes nothing.
        signal(SIGHUP, SIG_IGN)
        let hangup = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        hangup.setEventHandler {
            do { try app.reloadScenarios() } catch { logger.error("scenario reload refused", metadata: ["reason": "\(error)"]) }
        }
        hangup.resume()
        defer { hangup.cancel() }
        stop.wait()
        logger.info("signal received; stopping")
        // Not ready first, still serving, while the balancer's checks move traffic away; then no new connection.
        if configuration.server.drainSeconds > 0 {
            app.beginDrain()
            Thread.sleep(forTimeInterval: configuration.server.drainSeconds)
        }
        app.shutdown()
        sources.forEach { $0.cancel() }
        // Every connection is answered or closed and the loops are joined: end here, without
        // exit()'s destructors and atexit handlers (OpenSSL's cleanup among them), which would
        // free shared state while a thread of the Swift runtime may still hold some of it.
        fflush(nil)
        _exit(0)
    }
}

extension ServeCommand {
    /// What `body` answers, waited for on this thread (the command's, no event loop's).
    static func wait(for body: @escaping @Sendable () async -> String?) -> String? {
        let done = DispatchSemaphore(value: 0)
        let answer = Mutex<String?>(nil)
        Task {
            let value = await body()
            answer.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return answer.withLock { $0 }
    }

    /// Issues the TLS server certificate anew under the test PKI's TLS root when it is missing,
    /// expired or near expiry, valid longer than devices accept, or lacks a name of `tls.names`:
    /// what a phone needs to reach the harness, without regenerating any other key. A
    /// certificate not issued under the test root is never overwritten.
    func renewTLSServerCertificate(_ configuration: HarnessConfiguration, location: ConfigurationLocation, logger: Logger) {
        guard configuration.server.httpsPort != nil else { return }
        let certificate = location.resolve(configuration.tls.certificate), key = location.resolve(configuration.tls.privateKey)
        guard let reason = TestPKI.tlsServerCertificateProblem(at: certificate, names: configuration.tls.names) else { return }
        let pki = TestPKI(directory: location.resolve(configuration.pkiDirectory))
        // A certificate the user brought is theirs to replace: only one of the test root's is renewed.
        if FileManager.default.fileExists(atPath: certificate), !pki.issuedTLSServerCertificate(at: certificate) {
            return logger.warning("the TLS server certificate does not suit devices; it is not the test PKI's, so it stays", metadata: [
                "reason": "\(reason)", "certificate": "\(certificate)"])
        }
        do {
            _ = try pki.issueTLSServerCertificate(names: configuration.tls.names, certificatePath: certificate, keyPath: key)
            logger.notice("re-issued the TLS server certificate", metadata: [
                "reason": "\(reason)", "certificate": "\(certificate)", "names": "\((TestPKI.tlsServerBaseNames + configuration.tls.names).joined(separator: ", "))",
                "validDays": "\(TestPKI.tlsServerValidityDays)",
            ])
        } catch {
            logger.warning("the TLS server certificate needs re-issuing, and cannot be", metadata: [
                "reason": "\(reason)", "certificate": "\(certificate)", "error": "\(error)",
                "fix": "threeds-harness pki tls --name HOST, or set tls.certificate and tls.privateKey",
            ])
        }
    }
}
