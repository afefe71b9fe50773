import COpenSSL
public import Foundation

/// Verifies a certificate chain up to a trust anchor the way 3DS SDKs check `x5c`:
/// each link's signature, validity dates, and basic constraints and key usage of every
/// CA. Each failure has its own ``JOSEError``.
public struct CertificateVerifier: Sendable {
    public let trustAnchors: [Certificate]

    public init(trustAnchors: [Certificate]) {
        self.trustAnchors = trustAnchors
    }

    /// Verifies `leaf` through `intermediates` (any order) at `time`.
    public func verify(leaf: Certificate, intermediates: [Certificate] = [], at time: Date = Date()) throws(JOSEError) {
        guard let store = X509_STORE_new() else { throw .crypto("X509_STORE_new") }
        defer { X509_STORE_free(store) }
        for anchor in trustAnchors { X509_STORE_add_cert(store, anchor.pointer) }
        guard let untrusted = shim_sk_X509_new_null() else { throw .crypto("sk_X509_new_null") }
        defer { shim_sk_X509_free(untrusted) }  // the stack only borrows the certificates
        for certificate in intermediates { _ = shim_sk_X509_push(untrusted, certificate.pointer) }
        guard let context = X509_STORE_CTX_new() else { throw .crypto("X509_STORE_CTX_new") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf.pointer, untrusted) == 1 else { throw .openSSLCallFailed() }
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(context), time_t(time.timeIntervalSince1970))
        if X509_verify_cert(context) == 1 { return }
        ERR_clear_error()
        let code = X509_STORE_CTX_get_error(context)
        let failing = X509_STORE_CTX_get_current_cert(context).map { Certificate(taking: X509_dup($0)).subject } ?? leaf.subject
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED: throw .certificateExpired(subject: failing)
        case X509_V_ERR_CERT_NOT_YET_VALID: throw .certificateNotYetValid(subject: failing)
        case X509_V_ERR_CERT_SIGNATURE_FAILURE: throw .chainSignatureInvalid(subject: failing)
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
             X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
             X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            throw .untrustedRoot(subject: failing)
        case X509_V_ERR_INVALID_CA: throw .issuerNotCA(subject: failing)
        case X509_V_ERR_KEYUSAGE_NO_CERTSIGN: throw .issuerKeyUsage(subject: failing)
        default: throw .chainInvalid(reason: String(cString: X509_verify_cert_error_string(Int(code))))
        }
    }
}
