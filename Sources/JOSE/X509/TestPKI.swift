public import Foundation

/// A Directory Server profile: the RID that identifies the DS to SDKs, and a name.
public struct DirectoryServerProfile: Sendable, Equatable, Codable {
    public var rid: String
    public var name: String

    public init(rid: String, name: String) {
        self.rid = rid
        self.name = name
    }

    /// The card schemes' RIDs, and a neutral one for tests.
    public static let defaults: [DirectoryServerProfile] = [
        .init(rid: "A000000003", name: "Visa"), .init(rid: "A000000004", name: "Mastercard"),
        .init(rid: "A000000025", name: "American Express"), .init(rid: "A000000152", name: "Discover"),
        .init(rid: "A000000065", name: "JCB"), .init(rid: "A000000333", name: "UnionPay"),
        .init(rid: "F000000001", name: "Harness Test"),
    ]
}

/// The files of the test PKI under one folder (by default `certs/`):
///
/// ```
/// certs/tls/root-ca.pem                  TLS root (trust it for https://localhost:8443)
/// certs/tls/server-chain.pem, -key.pem   TLS server (SAN localhost, 127.0.0.1, ::1, extra names)
/// certs/tls/client-chain.pem, -key.pem   client certificate for mutual TLS
/// certs/<RID>/root-ca.pem                DS CA root: the root an SDK is configured with
/// certs/<RID>/ds-encryption-rsa.pem      DS encryption certificate, RSA 2048 (RSA-OAEP-256)
/// certs/<RID>/ds-encryption-ec.pem       DS encryption certificate, EC P-256 (ECDH-ES)
/// certs/<RID>/acs-signing-rsa.pem        ACS signing certificate, RSA 2048 (PS256)
/// certs/<RID>/acs-signing-ec.pem         ACS signing certificate, EC P-256 (ES256)
/// ```
/// Every certificate has its private key beside it (`*-key.pem`).
public struct TestPKI: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// The kinds of DS and ACS key every profile has.
    public enum KeyVariant: String, Sendable, CaseIterable {
        case rsa, ec
        var kind: KeyKind { self == .rsa ? .rsa : .ecP256 }
    }

    public func profileDirectory(_ rid: String) -> String { directory + "/" + rid }
    public func rootCertificatePath(_ rid: String) -> String { profileDirectory(rid) + "/root-ca.pem" }
    public func dsCertificatePath(_ rid: String, _ variant: KeyVariant) -> String { profileDirectory(rid) + "/ds-encryption-\(variant.rawValue).pem" }
    public func dsKeyPath(_ rid: String, _ variant: KeyVariant) -> String { profileDirectory(rid) + "/ds-encryption-\(variant.rawValue)-key.pem" }
    public func acsCertificatePath(_ rid: String, _ variant: KeyVariant) -> String { profileDirectory(rid) + "/acs-signing-\(variant.rawValue).pem" }
    public func acsKeyPath(_ rid: String, _ variant: KeyVariant) -> String { profileDirectory(rid) + "/acs-signing-\(variant.rawValue)-key.pem" }
    /// A Split-SDK server's signing certificate under the DS CA (2.3.1 `sdkServerSignedContent`), EC P-256 for ES256.
    public func splitSDKServerCertificatePath(_ rid: String) -> String { profileDirectory(rid) + "/" + Self.splitSDKServerFile }
    public func splitSDKServerKeyPath(_ rid: String) -> String { profileDirectory(rid) + "/" + Self.splitSDKServerKeyFile }
    static let splitSDKServerFile = "split-sdk-server-ec.pem", splitSDKServerKeyFile = "split-sdk-server-ec-key.pem"

    /// The key id an SDK is configured with for the DS key (also the JWE `kid`).
    public static func dsKeyID(_ rid: String, _ variant: KeyVariant) -> String { "\(rid)-ds-\(variant.rawValue)" }

    /// What `pki generate` writes, relative to the directory.
    public static func files(for profiles: [DirectoryServerProfile]) -> [String] {
        let tls = ["tls/root-ca.pem", "tls/root-ca-key.pem", "tls/server-chain.pem", "tls/server-key.pem",
                   "tls/client-chain.pem", "tls/client-key.pem"]
        return tls + profiles.flatMap { profile in
            ["root-ca.pem", "root-ca-key.pem"] + KeyVariant.allCases.flatMap { variant in
                ["ds-encryption-\(variant.rawValue).pem", "ds-encryption-\(variant.rawValue)-key.pem",
                 "acs-signing-\(variant.rawValue).pem", "acs-signing-\(variant.rawValue)-key.pem"]
            }.map { "\(profile.rid)/\($0)" } + [splitSDKServerFile, splitSDKServerKeyFile].map { "\(profile.rid)/\($0)" }
        }
    }

    /// Writes a complete set. Existing files are an error unless `overwrite`.
    public func generate(profiles: [DirectoryServerProfile], tlsNames: [String] = [], years: Int = 20,
                         overwrite: Bool = false, now: Date = Date()) throws -> [String] {
        let existing = Self.files(for: profiles).filter { FileManager.default.fileExists(atPath: directory + "/" + $0) }
        if !overwrite, let first = existing.first {
            throw TestPKIError.wouldOverwrite(directory + "/" + first, count: existing.count)
        }
        let start = now.addingTimeInterval(-86_400)  // a day of slack for clocks that lag
        let days = years * 365
        var written: [String] = []
        func write(_ text: String, _ relative: String) throws {
            let path = directory + "/" + relative
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            written.append(path)
        }

        // TLS: an EC root, a server certificate for localhost, a client certificate.
        let tlsRootKey = try PrivateKey.generateP256()
        let tlsRoot = try Self.root("Harness TLS Test Root CA", key: tlsRootKey, notBefore: start, days: days)
        try write(tlsRoot.pemRepresentation, "tls/root-ca.pem")
        try write(tlsRootKey.pemRepresentation, "tls/root-ca-key.pem")
        let server = try Self.tlsServerCertificate(names: tlsNames, root: tlsRoot, rootKey: tlsRootKey, notBefore: start,
                                                    days: min(days - 1, Self.tlsServerValidityDays))
        try write(server.certificate.pemRepresentation, "tls/server-chain.pem")
        try write(server.key.pemRepresentation, "tls/server-key.pem")
        let clientKey = try PrivateKey.generateP256()
        let client = try CertificateBuilder.issue(
            CertificateProfile(commonName: "Harness Test Client", notBefore: start, validFor: days - 1, extendedKeyUsage: ["clientAuth"]),
            publicKey: clientKey.publicKey, issuer: tlsRoot, issuerKey: tlsRootKey)
        try write(client.pemRepresentation, "tls/client-chain.pem")
        try write(clientKey.pemRepresentation, "tls/client-key.pem")

        // Per DS: an RSA root, and DS encryption and ACS signing certificates of each kind.
        for profile in profiles {
            let rootKey = try PrivateKey.generateRSA()
            let root = try Self.root("\(profile.name) Test DS CA (\(profile.rid))", key: rootKey, notBefore: start, days: days)
            try write(root.pemRepresentation, "\(profile.rid)/root-ca.pem")
            try write(rootKey.pemRepresentation, "\(profile.rid)/root-ca-key.pem")
            // One key and certificate under this root, written as NAME.pem and NAME-key.pem.
            func issue(_ name: String, _ variant: KeyVariant, title: String, usage: String) throws {
                let key = variant == .rsa ? try PrivateKey.generateRSA() : try PrivateKey.generateP256()
                let certificate = try CertificateBuilder.issue(
                    CertificateProfile(commonName: "\(profile.name) Test \(title) \(variant.rawValue.uppercased())", notBefore: start,
                                       validFor: days - 1, keyUsage: [usage]),
                    publicKey: key.publicKey, issuer: root, issuerKey: rootKey)
                try write(certificate.pemRepresentation, "\(profile.rid)/\(name)-\(variant.rawValue).pem")
                try write(key.pemRepresentation, "\(profile.rid)/\(name)-\(variant.rawValue)-key.pem")
            }
            for variant in KeyVariant.allCases {
                try issue("ds-encryption", variant, title: "DS Encryption", usage: variant == .rsa ? "keyEncipherment" : "keyAgreement")
                try issue("acs-signing", variant, title: "ACS Signing", usage: "digitalSignature")
            }
            written += try issueSplitSDKServer(profile, root: root, rootKey: rootKey, notBefore: start, days: days - 1)
        }
        return written
    }

    /// Writes the files of the set that are missing and can be issued under its existing DS CA roots: the Split-SDK
    /// server certificates, which sets made before 2.3.1's Split-SDK lack. Every other file must be there.
    public func generateMissing(profiles: [DirectoryServerProfile], years: Int = 20, now: Date = Date()) throws -> [String] {
        var written: [String] = []
        for profile in profiles where !FileManager.default.fileExists(atPath: splitSDKServerCertificatePath(profile.rid)) {
            let root = try rootCertificate(profile.rid), rootKey = try rootPrivateKey(profile.rid)
            written += try issueSplitSDKServer(profile, root: root, rootKey: rootKey, notBefore: now.addingTimeInterval(-86_400), days: years * 365 - 1)
        }
        return written
    }

    /// The Split-SDK server's key and certificate under `root`, for signing (ES256).
    private func issueSplitSDKServer(_ profile: DirectoryServerProfile, root: Certificate, rootKey: PrivateKey, notBefore: Date, days: Int) throws -> [String] {
        let key = try PrivateKey.generateP256()
        let certificate = try CertificateBuilder.issue(
            CertificateProfile(commonName: "\(profile.name) Test Split-SDK Server EC", notBefore: notBefore, validFor: days, keyUsage: ["digitalSignature"]),
            publicKey: key.publicKey, issuer: root, issuerKey: rootKey)
        try certificate.pemRepresentation.write(toFile: splitSDKServerCertificatePath(profile.rid), atomically: true, encoding: .utf8)
        try key.pemRepresentation.write(toFile: splitSDKServerKeyPath(profile.rid), atomically: true, encoding: .utf8)
        return [splitSDKServerCertificatePath(profile.rid), splitSDKServerKeyPath(profile.rid)]
    }

    private static func root(_ commonName: String, key: PrivateKey, notBefore: Date, days: Int) throws(JOSEError) -> Certificate {
        try CertificateBuilder.issue(CertificateProfile(commonName: commonName, notBefore: notBefore, validFor: days, isCA: true),
                                     publicKey: key.publicKey, issuer: nil, issuerKey: key)
    }

    // MARK: the TLS server certificate

    /// The longest a TLS server certificate is issued for: iOS refuses TLS server certificates
    /// valid for more than 825 days and browsers more than 398, even under a root the user trusts.
    public static let tlsServerValidityDays = 397

    /// The names every TLS server certificate carries, before the extra ones.
    public static let tlsServerBaseNames = ["localhost", "127.0.0.1", "::1"]

    /// Whether `name` can be a subjectAltName of the TLS server certificate: a DNS name or an IP
    /// address, not empty, with no spaces or slashes (a URL given by mistake).
    public static func acceptsTLSName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains(where: { $0.isWhitespace || $0 == "/" })
    }

    public var tlsServerCertificatePath: String { directory + "/tls/server-chain.pem" }
    public var tlsServerKeyPath: String { directory + "/tls/server-key.pem" }

    private static func tlsServerCertificate(names extra: [String], root: Certificate, rootKey: PrivateKey, notBefore: Date,
                                             days: Int) throws(JOSEError) -> (certificate: Certificate, key: PrivateKey) {
        let names = tlsServerBaseNames + extra.filter { !tlsServerBaseNames.contains($0) }
        let key = try PrivateKey.generateP256()
        let certificate = try CertificateBuilder.issue(
            CertificateProfile(commonName: "localhost", notBefore: notBefore, validFor: days,
                               keyUsage: ["digitalSignature", "keyEncipherment"], extendedKeyUsage: ["serverAuth"],
                               dnsNames: names.filter { !$0.isIPAddress }, ipAddresses: names.filter(\.isIPAddress)),
            publicKey: key.publicKey, issuer: root, issuerKey: rootKey)
        return (certificate, key)
    }

    /// Issues a new TLS server certificate and key under this PKI's TLS root, for localhost,
    /// 127.0.0.1, ::1 and `names`, valid `days` from a day before `now` (at most
    /// ``tlsServerValidityDays`` in all), and writes them to the given paths (by default the
    /// PKI's own). Nothing else changes: the TLS root and every DS and ACS key stay as they are.
    public func issueTLSServerCertificate(names: [String], days: Int = tlsServerValidityDays, now: Date = Date(),
                                          certificatePath: String? = nil, keyPath: String? = nil) throws -> [String] {
        let root = try Certificate(pem: read(directory + "/tls/root-ca.pem"))
        let rootKey = try PrivateKey(pem: read(directory + "/tls/root-ca-key.pem"))
        let start = now.addingTimeInterval(-86_400)
        let issued = try Self.tlsServerCertificate(names: names, root: root, rootKey: rootKey, notBefore: start,
                                                   days: min(max(days, 2), Self.tlsServerValidityDays))
        let paths = [(certificatePath ?? tlsServerCertificatePath, issued.certificate.pemRepresentation),
                     (keyPath ?? tlsServerKeyPath, issued.key.pemRepresentation)]
        for (path, text) in paths {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
        return paths.map(\.0)
    }

    /// Whether the certificate at `path` was issued under this PKI's TLS root (one of ours to
    /// renew, not a certificate the user brought), whatever its dates.
    public func issuedTLSServerCertificate(at path: String) -> Bool {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let leaf = try? Certificate.chain(pem: text).first,
              let root = try? Certificate(pem: read(directory + "/tls/root-ca.pem")) else { return false }
        return leaf.isSigned(by: root)
    }

    /// Why the TLS server certificate at `path` should be issued anew, or nil when it serves:
    /// missing or unreadable, expired, expiring within `renewWithin` days, valid longer than
    /// devices accept, or lacking one of `names`.
    public static func tlsServerCertificateProblem(at path: String, names: [String], now: Date = Date(),
                                                   renewWithin days: Int = 30) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return "\(path) is missing" }
        guard let leaf = try? Certificate.chain(pem: text).first else { return "\(path) holds no certificate" }
        if leaf.notAfter <= now { return "it expired on \(leaf.notAfter)" }
        if leaf.notAfter.timeIntervalSince(now) < Double(days) * 86_400 { return "it expires on \(leaf.notAfter), within \(days) days" }
        if leaf.notAfter.timeIntervalSince(leaf.notBefore) > Double(tlsServerValidityDays + 1) * 86_400 {
            return "it is valid for more than \(tlsServerValidityDays) days, which iOS and browsers refuse"
        }
        if let missing = names.first(where: { !leaf.covers(host: $0) }) { return "it does not name \(missing)" }
        return nil
    }

    // MARK: reading

    public func rootCertificate(_ rid: String) throws -> Certificate { try Certificate(pem: read(rootCertificatePath(rid))) }
    public func rootPrivateKey(_ rid: String) throws -> PrivateKey { try PrivateKey(pem: read(profileDirectory(rid) + "/root-ca-key.pem")) }
    public func dsCertificate(_ rid: String, _ variant: KeyVariant) throws -> Certificate { try Certificate(pem: read(dsCertificatePath(rid, variant))) }
    public func dsPrivateKey(_ rid: String, _ variant: KeyVariant) throws -> PrivateKey { try PrivateKey(pem: read(dsKeyPath(rid, variant))) }
    public func acsCertificate(_ rid: String, _ variant: KeyVariant) throws -> Certificate { try Certificate(pem: read(acsCertificatePath(rid, variant))) }
    public func acsPrivateKey(_ rid: String, _ variant: KeyVariant) throws -> PrivateKey { try PrivateKey(pem: read(acsKeyPath(rid, variant))) }
    public func splitSDKServerCertificate(_ rid: String) throws -> Certificate { try Certificate(pem: read(splitSDKServerCertificatePath(rid))) }
    public func splitSDKServerPrivateKey(_ rid: String) throws -> PrivateKey { try PrivateKey(pem: read(splitSDKServerKeyPath(rid))) }

    private func read(_ path: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw TestPKIError.missingFile(path) }
        return text
    }
}

public enum TestPKIError: Error, Equatable, CustomStringConvertible {
    case wouldOverwrite(String, count: Int)
    case missingFile(String)
    case unknownProfile(String, known: [String])

    public var description: String {
        switch self {
        case .wouldOverwrite(let path, let count): "\(path) and \(count - 1) other files exist; pass --force to overwrite them"
        case .missingFile(let path): "\(path) is missing; run `threeds-harness pki generate`"
        case .unknownProfile(let rid, let known): "no Directory Server profile \(rid) (known: \(known.joined(separator: ", ")))"
        }
    }
}

extension String {
    var isIPAddress: Bool { !isEmpty && (allSatisfy { $0.isNumber || $0 == "." } || contains(":")) }
}
