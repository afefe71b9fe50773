/// What a TLS endpoint presents and whom it trusts.
public struct TLSConfiguration: Sendable, Equatable {
    /// PEM file with the certificate, then any intermediates (leaf first).
    public var certificateChainFile: String?
    /// PEM file with the private key of the leaf certificate.
    public var privateKeyFile: String?
    /// PEM file of CA certificates: the server verifies client certificates against it
    /// (mutual TLS); the client verifies the server against it.
    public var trustRootsFile: String?
    /// Server only: refuse clients without a certificate that chains to `trustRootsFile`.
    public var requireClientCertificate: Bool
    /// Client only: check the server certificate and host name (on by default).
    public var verifyServer: Bool

    public init(certificateChainFile: String? = nil, privateKeyFile: String? = nil, trustRootsFile: String? = nil,
                requireClientCertificate: Bool = false, verifyServer: Bool = true) {
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
        self.trustRootsFile = trustRootsFile
        self.requireClientCertificate = requireClientCertificate
        self.verifyServer = verifyServer
    }

    /// TLS 1.2 suites in order: those EMVCo names for 3DS (ECDHE, AES-128-GCM) first.
    static let tls12Ciphers = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")
    static let tls13Suites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
    /// Key exchange groups: P-256, the curve EMVCo names for 3DS, then P-384. X25519 is
    /// left out so that a TLS 1.3 client's X25519 key share cannot win over P-256.
    static let groups = "P-256:P-384"
}
