import Foundation
import JOSE

/// A TLS server certificate and key issued for this test run under the committed TLS root
/// (`certs/tls/root-ca.pem`): the committed leaf is valid for 397 days only, and a test must
/// not start failing the day it expires. Falls back to the committed files if issuing fails.
public let testTLSServer: (certificate: String, key: String) = {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("harness-tls-\(getpid())").path
    let paths = (directory + "/server-chain.pem", directory + "/server-key.pem")
    let pki = TestPKI(directory: repositoryRoot + "/certs")
    guard (try? pki.issueTLSServerCertificate(names: [], certificatePath: paths.0, keyPath: paths.1)) != nil else {
        return (pki.tlsServerCertificatePath, pki.tlsServerKeyPath)
    }
    return paths
}()
