import COpenSSL
public import Foundation

/// An X.509 certificate (an owned OpenSSL `X509`). `@unchecked`: it is never changed after
/// parsing, and OpenSSL reads of an `X509` are safe from several threads.
public final class Certificate: @unchecked Sendable, Equatable, CustomStringConvertible {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { X509_free(pointer) }

    public init(der: [UInt8]) throws(JOSEError) {
        let parsed: OpaquePointer? = der.withUnsafeBytes { raw in
            var cursor: UnsafePointer<UInt8>? = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return d2i_X509(nil, &cursor, raw.count)
        }
        guard let parsed else { throw .invalidDER("not a certificate\(openSSLError())") }
        pointer = parsed
    }

    /// The first certificate of a PEM text.
    public convenience init(pem: String) throws(JOSEError) {
        guard let first = try Certificate.chain(pem: pem).first else { throw .invalidPEM("no CERTIFICATE block") }
        self.init(taking: X509_dup(first.pointer))
    }

    /// Every certificate of a PEM text, in order.
    public static func chain(pem: String) throws(JOSEError) -> [Certificate] {
        var certificates: [Certificate] = []
        var rest = Substring(pem)
        while let begin = rest.range(of: "-----BEGIN CERTIFICATE-----") {
            guard let end = rest.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<rest.endIndex) else {
                throw .invalidPEM("unterminated CERTIFICATE block")
            }
            let block = Array(rest[begin.lowerBound..<end.upperBound].utf8)
            guard let parsed = try withReadBIO(block, { PEM_read_bio_X509($0, nil, nil, nil) }) else {
                throw .invalidPEM("CERTIFICATE block \(certificates.count + 1) does not parse\(openSSLError())")
            }
            certificates.append(Certificate(taking: parsed))
            rest = rest[end.upperBound...]
        }
        return certificates
    }

    public var derRepresentation: [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        let count = i2d_X509(pointer, &output)
        guard count > 0, let output else { return [] }
        defer { shim_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(count)))
    }

    public var pemRepresentation: String {
        String(decoding: (try? withMemoryBIO { PEM_write_bio_X509($0, pointer) }) ?? [], as: UTF8.self)
    }

    /// Subject in RFC 2253 form ("CN=localhost,O=3DS Test Harness").
    public var subject: String { Self.name(X509_get_subject_name(pointer)) }
    public var issuer: String { Self.name(X509_get_issuer_name(pointer)) }
    public var description: String { subject }

    public var notBefore: Date { Self.date(X509_get0_notBefore(pointer)) }
    public var notAfter: Date { Self.date(X509_get0_notAfter(pointer)) }

    public var serialNumberHex: String {
        guard let number = ASN1_INTEGER_to_BN(X509_get0_serialNumber(pointer), nil) else { return "" }
        defer { BN_free(number) }
        guard let hex = BN_bn2hex(number) else { return "" }
        defer { shim_OPENSSL_free(hex) }
        return String(cString: hex).lowercased()
    }

    /// True when basic constraints say CA.
    public var isCA: Bool { X509_check_ca(pointer) != 0 }

    /// Whether `issuer` issued this certificate (names match and its key made the signature),
    /// whatever the dates.
    public func isSigned(by issuer: Certificate) -> Bool {
        guard X509_check_issued(issuer.pointer, pointer) == X509_V_OK, let key = X509_get0_pubkey(issuer.pointer) else { return false }
        return X509_verify(pointer, key) == 1
    }

    /// Whether a TLS client reaching `host` (a DNS name or an IP address) accepts this
    /// certificate's names (subjectAltName, as RFC 6125 reads it).
    public func covers(host: String) -> Bool {
        if host.isIPAddress { return X509_check_ip_asc(pointer, host, 0) == 1 }
        return X509_check_host(pointer, host, host.utf8.count, 0, nil) == 1
    }

    public var publicKey: PublicKey {
        guard let key = X509_get_pubkey(pointer), let wrapped = try? EVPKey(key) else {
            preconditionFailure("certificate holds a key type this module does not create")
        }
        return PublicKey(wrapped)
    }

    /// Base64 (standard, padded) DER, as `x5c` carries it.
    public var x5cEncoding: String { Data(derRepresentation).base64EncodedString() }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool { X509_cmp(lhs.pointer, rhs.pointer) == 0 }

    private static func name(_ name: OpaquePointer?) -> String {
        let bytes = (try? withMemoryBIO { X509_NAME_print_ex($0, name, 0, shim_XN_FLAG_RFC2253()) >= 0 ? 1 : 0 }) ?? []
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else { return .distantPast }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
