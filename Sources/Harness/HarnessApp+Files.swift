import AccessControlServer
import Configuration
import EMVCrypto
import Foundation
import JOSE
import Logging
import Net
import Runs
import Store

// What the app reads from its files as it is built: the store, the browser challenge's pages, the test PKI's keys and
// the SDKs' configurations, and the client side of its TLS.
extension HarnessApp {
    /// The store, opened (file and folder made when missing) or a start-up error saying why not.
    static func openArchive(_ configuration: HarnessConfiguration, path: String, clock: HarnessClock, logger: Logger) throws -> (any TransactionArchive)? {
        guard configuration.store.enabled else { return nil }
        let retention = SQLiteArchive.Retention(maxRecords: configuration.store.maxRecords,
                                                maxAgeSeconds: Int64(configuration.store.maxAgeDays * 86_400), keptRoles: [RunRegistry.role])
        var durability = configuration.store.durability
        if configuration.cluster.enabled, durability == .behind {
            // A later message may reach another instance at once: what it needs is in the store before the answer.
            logger.info("store.durability behind is answered in a cluster: each record is written before the answer that makes it needed")
            durability = .answered
        }
        let onLoss: @Sendable (Int, String) -> Void = { lost, reason in
            logger.error("transaction records not stored", metadata: ["lost": "\(lost)", "reason": "\(reason)"])
        }
        if configuration.store.backend == .postgres, let url = configuration.store.url?.value {
            do {
                return try PostgresArchive(url: url, retention: retention, durability: durability, clock: clock, onLoss: onLoss)
            } catch {
                throw ConfigurationError.invalid(source: "store.url", reason: "cannot open the store: \(error) (start the database, "
                                                 + "correct store.url, or set store.backend: sqlite)")
            }
        }
        do {
            return try SQLiteArchive(path: path, retention: retention, durability: durability, clock: clock, onLoss: onLoss)
        } catch {
            throw ConfigurationError.invalid(source: "dataDirectory",
                                             reason: "cannot open the store \(path): \(error) (make the folder writable, choose another dataDirectory, or set store.enabled: false)")
        }
    }

    /// The browser challenge's page templates, from their folder.
    static func browserPages(_ folder: String) throws -> BrowserChallengePages {
        func read(_ name: String) throws -> String {
            do { return try String(contentsOfFile: folder + "/" + name, encoding: .utf8) } catch {
                throw ConfigurationError.invalid(source: "accessControlServer.pageTemplates", reason: "cannot read \(folder)/\(name): the browser challenge's page templates")
            }
        }
        return BrowserChallengePages(challenge: try read("acs-challenge.html"), final: try read("acs-final.html"))
    }

    /// What an SDK is configured with for each scheme (DS id, keys, roots), from the test PKI.
    static func sdkConfigurations(_ schemes: [SchemeConfiguration], pki: TestPKI) throws -> [String: SDKConfiguration] {
        var configurations: [String: SDKConfiguration] = [:]
        for scheme in schemes {
            do {
                configurations[scheme.rid] = try SDKConfiguration(pki: pki, profile: DirectoryServerProfile(rid: scheme.rid, name: scheme.name))
            } catch {
                throw ConfigurationError.invalid(source: "directoryServers", reason: "\(scheme.rid): the SDK configuration under \(pki.profileDirectory(scheme.rid)): \(error) (run `threeds-harness pki generate`)")
            }
        }
        return configurations
    }

    /// Each scheme's DS keys (to decrypt device data) and ACS signing identity, from the test PKI.
    static func schemeKeys(_ schemes: [SchemeConfiguration], pki: TestPKI) throws
        -> ([String: DirectoryServerKeys], [String: ACSSigningIdentity]) {
        var keys: [String: DirectoryServerKeys] = [:]
        var signers: [String: ACSSigningIdentity] = [:]
        for scheme in schemes {
            do {
                keys[scheme.rid] = DirectoryServerKeys(rsa: try pki.dsPrivateKey(scheme.rid, .rsa), ec: try pki.dsPrivateKey(scheme.rid, .ec),
                                                       caRoot: try pki.rootCertificate(scheme.rid))
                let variant = scheme.acsSigning
                signers[scheme.rid] = ACSSigningIdentity(key: try pki.acsPrivateKey(scheme.rid, variant),
                                                         chain: [try pki.acsCertificate(scheme.rid, variant), try pki.rootCertificate(scheme.rid)],
                                                         rootKey: try? pki.rootPrivateKey(scheme.rid))
            } catch {
                throw ConfigurationError.invalid(source: "directoryServers", reason: "\(scheme.rid): DS and ACS keys under \(pki.profileDirectory(scheme.rid)): \(error) (run `threeds-harness pki generate`)")
            }
        }
        return (keys, signers)
    }

    /// What the roles' client trusts and presents: a harness that requires mutual TLS must pass
    /// it to itself. Configured files must load; the test PKI's are used when they are there.
    static func clientTLS(_ tls: HarnessConfiguration.TLS, pki: TestPKI, resolve: (String) -> String) -> TLSConfiguration {
        var identity = (tls.clientCertificate.map(resolve), tls.clientPrivateKey.map(resolve))
        if identity.0 == nil, FileManager.default.fileExists(atPath: pki.directory + "/tls/client-chain.pem") {
            identity = (pki.directory + "/tls/client-chain.pem", pki.directory + "/tls/client-key.pem")
        }
        return TLSConfiguration(certificateChainFile: identity.0, privateKeyFile: identity.1, trustRootsFile: pki.directory + "/tls/root-ca.pem")
    }
}
