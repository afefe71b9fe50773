import JSON
import Foundation

/// Everything that can go wrong in JOSE and X.509, one case per distinct failure, so a
/// caller (and the conformance report) can say exactly what was wrong.
public enum JOSEError: Error, Equatable, Sendable, CustomStringConvertible {
    // Encoding
    case invalidBase64URL(part: String)
    case malformedCompactSerialization(String)
    case invalidHeader(String)
    case invalidJWK(String)
    case invalidKey(String)
    case invalidPEM(String)
    case invalidDER(String)

    // Algorithms
    case unsupportedAlgorithm(String)
    case algorithmNotAllowed(String)
    case algorithmKeyMismatch(algorithm: String, key: String)

    // JWS
    case signatureInvalid

    // JWE: one error for every integrity, padding or key-unwrap failure, so a sender
    // cannot tell which step failed (the reason goes to the log through `detail`).
    case decryptionFailed(reason: String)
    case invalidKeyLength(expected: Int, actual: Int)
    case invalidIVLength(expected: Int, actual: Int)

    // x5c and X.509
    case missingCertificateChain
    case invalidCertificate(index: Int, reason: String)
    case certificateExpired(subject: String)
    case certificateNotYetValid(subject: String)
    case chainSignatureInvalid(subject: String)
    case untrustedRoot(subject: String)
    case issuerNotCA(subject: String)
    case issuerKeyUsage(subject: String)
    case chainInvalid(reason: String)
    case signingKeyNotInCertificate

    // OpenSSL failed where it should not.
    case crypto(String)

    /// The description with internal detail (which step of a decryption failed, OpenSSL's
    /// own message), for logs.
    public var logDescription: String {
        if case .decryptionFailed(let reason) = self { return "decryption failed: \(reason)" }
        return text
    }

    /// Base64url decoding with its failure as a JOSE error.
    public static func decodingBase64URL(_ text: some StringProtocol, part: String = "value") throws(JOSEError) -> [UInt8] {
        do throws(Base64URLError) { return try Base64URL.decode(text, part: part) } catch { throw .invalidBase64URL(part: error.part) }
    }

    /// An OpenSSL call that failed, with OpenSSL's reason for the log.
    static func openSSLCallFailed() -> JOSEError { .crypto("OpenSSL call failed" + openSSLError()) }

    /// What a party outside may be told: no OpenSSL message (see ``openSSLError()``).
    public var description: String {
        let text = text
        guard let start = text.range(of: " [OpenSSL: ") else { return text }
        let end = text[start.upperBound...].firstIndex(of: "]").map { text.index(after: $0) } ?? text.endIndex
        return String(text[..<start.lowerBound] + text[end...])
    }

    private var text: String {
        switch self {
        case .invalidBase64URL(let part): "\(part) is not unpadded base64url"
        case .malformedCompactSerialization(let reason): "malformed compact serialization: \(reason)"
        case .invalidHeader(let reason): "invalid protected header: \(reason)"
        case .invalidJWK(let reason): "invalid JWK: \(reason)"
        case .invalidKey(let reason): "invalid key: \(reason)"
        case .invalidPEM(let reason): "invalid PEM: \(reason)"
        case .invalidDER(let reason): "invalid DER: \(reason)"
        case .unsupportedAlgorithm(let alg): "unsupported algorithm \(alg)"
        case .algorithmNotAllowed(let alg): "algorithm \(alg) is not allowed here"
        case .algorithmKeyMismatch(let alg, let key): "algorithm \(alg) does not fit a \(key) key"
        case .signatureInvalid: "signature does not verify"
        case .decryptionFailed: "decryption failed"  // the reason is for logs, not for the sender
        case .invalidKeyLength(let expected, let actual): "key is \(actual) bytes, expected \(expected)"
        case .invalidIVLength(let expected, let actual): "IV is \(actual) bytes, expected \(expected)"
        case .missingCertificateChain: "no x5c certificate chain in the header"
        case .invalidCertificate(let index, let reason): "x5c[\(index)] is not a certificate: \(reason)"
        case .certificateExpired(let subject): "certificate \(subject) has expired"
        case .certificateNotYetValid(let subject): "certificate \(subject) is not yet valid"
        case .chainSignatureInvalid(let subject): "signature on certificate \(subject) does not verify"
        case .untrustedRoot(let subject): "chain of \(subject) does not lead to the trust anchor"
        case .issuerNotCA(let subject): "issuer of \(subject) is not a CA (basic constraints)"
        case .issuerKeyUsage(let subject): "issuer of \(subject) may not sign certificates (key usage)"
        case .chainInvalid(let reason): "certificate chain invalid: \(reason)"
        case .signingKeyNotInCertificate: "the signing key is not the key of the leaf certificate"
        case .crypto(let reason): "crypto failure: \(reason)"
        }
    }
}
