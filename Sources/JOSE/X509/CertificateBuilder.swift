import COpenSSL
public import Foundation

/// What a new certificate says. The test PKI fills these in for each role.
public struct CertificateProfile: Sendable {
    public var commonName: String
    public var organization: String
    public var notBefore: Date
    public var notAfter: Date
    /// A CA certificate (basic constraints CA:TRUE, key usage keyCertSign and cRLSign).
    public var isCA: Bool
    public var pathLength: Int?
    /// Key usage of an end-entity certificate (`digitalSignature`, `keyEncipherment`...).
    public var keyUsage: [String]
    /// Extended key usage (`serverAuth`, `clientAuth`).
    public var extendedKeyUsage: [String]
    /// DNS names and IP addresses for subjectAltName.
    public var dnsNames: [String]
    public var ipAddresses: [String]

    public init(commonName: String, organization: String = "3DS Test Harness", notBefore: Date = Date(),
                validFor days: Int = 3650, isCA: Bool = false, pathLength: Int? = nil,
                keyUsage: [String] = ["digitalSignature"], extendedKeyUsage: [String] = [],
                dnsNames: [String] = [], ipAddresses: [String] = []) {
        self.commonName = commonName
        self.organization = organization
        self.notBefore = notBefore
        self.notAfter = notBefore.addingTimeInterval(TimeInterval(days) * 86_400)
        self.isCA = isCA
        self.pathLength = pathLength
        self.keyUsage = keyUsage
        self.extendedKeyUsage = extendedKeyUsage
        self.dnsNames = dnsNames
        self.ipAddresses = ipAddresses
    }
}

/// Issues certificates with OpenSSL: self-signed roots and certificates signed by an issuer.
public enum CertificateBuilder {
    /// Issues a certificate for `publicKey` described by `profile`, signed by `issuerKey`
    /// (self-signed when `issuer` is nil), SHA-256 in every case.
    public static func issue(_ profile: CertificateProfile, publicKey: PublicKey, issuer: Certificate?,
                             issuerKey: PrivateKey) throws(JOSEError) -> Certificate {
        guard let x509 = X509_new() else { throw .crypto("X509_new") }
        let certificate = Certificate(taking: x509)
        guard X509_set_version(x509, 2) == 1 else { throw .openSSLCallFailed() }
        // A positive 127-bit random serial: unique without bookkeeping.
        var serial = randomBytes(16)
        serial[0] &= 0x7f
        guard let number = BN_bin2bn(serial, 16, nil) else { throw .crypto("BN_bin2bn") }
        defer { BN_free(number) }
        guard BN_to_ASN1_INTEGER(number, X509_get_serialNumber(x509)) != nil else { throw .openSSLCallFailed() }

        guard let name = X509_NAME_new() else { throw .crypto("X509_NAME_new") }
        defer { X509_NAME_free(name) }
        for (field, value) in [("O", profile.organization), ("CN", profile.commonName)] {
            guard X509_NAME_add_entry_by_txt(name, field, shim_MBSTRING_UTF8(), value, -1, -1, 0) == 1 else { throw .openSSLCallFailed() }
        }
        X509_set_subject_name(x509, name)
        X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.pointer) } ?? name)
        ASN1_TIME_set(X509_getm_notBefore(x509), time_t(profile.notBefore.timeIntervalSince1970))
        ASN1_TIME_set(X509_getm_notAfter(x509), time_t(profile.notAfter.timeIntervalSince1970))
        guard X509_set_pubkey(x509, publicKey.key.pointer) == 1 else { throw .openSSLCallFailed() }

        var context = X509V3_CTX()
        shim_X509V3_set_ctx_nodb(&context)
        X509V3_set_ctx(&context, issuer?.pointer ?? x509, x509, nil, nil, 0)
        var extensions: [(Int32, String)] = []
        if profile.isCA {
            extensions.append((NID_basic_constraints, "critical,CA:TRUE" + (profile.pathLength.map { ",pathlen:\($0)" } ?? "")))
            extensions.append((NID_key_usage, "critical,keyCertSign,cRLSign"))
        } else {
            extensions.append((NID_basic_constraints, "critical,CA:FALSE"))
            if !profile.keyUsage.isEmpty { extensions.append((NID_key_usage, "critical," + profile.keyUsage.joined(separator: ","))) }
        }
        if !profile.extendedKeyUsage.isEmpty { extensions.append((NID_ext_key_usage, profile.extendedKeyUsage.joined(separator: ","))) }
        let alternativeNames = profile.dnsNames.map { "DNS:\($0)" } + profile.ipAddresses.map { "IP:\($0)" }
        if !alternativeNames.isEmpty { extensions.append((NID_subject_alt_name, alternativeNames.joined(separator: ","))) }
        extensions.append((NID_subject_key_identifier, "hash"))
        if issuer != nil { extensions.append((NID_authority_key_identifier, "keyid:always")) }
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw .crypto("extension \(String(cString: OBJ_nid2sn(nid))) = \(value)\(openSSLError())")
            }
            defer { X509_EXTENSION_free(ext) }
            X509_add_ext(x509, ext, -1)
        }
        guard X509_sign(x509, issuerKey.key.pointer, EVP_sha256()) > 0 else { throw .openSSLCallFailed() }
        return certificate
    }
}
