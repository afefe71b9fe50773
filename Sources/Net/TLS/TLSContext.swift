import COpenSSL

/// An OpenSSL `SSL_CTX` built from a ``TLSConfiguration``, shared by all connections of
/// a server or client. `@unchecked`: OpenSSL contexts are safe to share once configured, and
/// this one is not changed after its init.
public final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer
    public let isServer: Bool

    public init(server configuration: TLSConfiguration) throws(NetError) {
        isServer = true
        context = try Self.makeContext(method: TLS_server_method())
        do throws(NetError) {
            guard let chain = configuration.certificateChainFile, let key = configuration.privateKeyFile else {
                throw .tls("a TLS server needs a certificate chain file and a private key file")
            }
            try loadIdentity(chain: chain, key: key)
            if let roots = configuration.trustRootsFile {
                try loadTrustRoots(roots)
                // Announce the acceptable CAs so clients pick the right certificate.
                if let names = SSL_load_client_CA_file(roots) { SSL_CTX_set_client_CA_list(context, names) }
                let mode = configuration.requireClientCertificate ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT : SSL_VERIFY_PEER
                SSL_CTX_set_verify(context, mode, nil)
            } else if configuration.requireClientCertificate {
                throw .tls("requiring client certificates needs a trust roots file")
            }
            _ = shim_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_SERVER))
        } catch {
            throw error  // deinit frees the context: the instance is fully initialised here
        }
    }

    public init(client configuration: TLSConfiguration) throws(NetError) {
        isServer = false
        context = try Self.makeContext(method: TLS_client_method())
        do throws(NetError) {
            if let chain = configuration.certificateChainFile, let key = configuration.privateKeyFile {
                try loadIdentity(chain: chain, key: key)
            }
            if configuration.verifyServer {
                if let roots = configuration.trustRootsFile {
                    try loadTrustRoots(roots)
                } else {
                    SSL_CTX_set_default_verify_paths(context)
                }
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            } else {
                SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            }
        } catch {
            throw error  // deinit frees the context: the instance is fully initialised here
        }
    }

    deinit { SSL_CTX_free(context) }

    private static func makeContext(method: OpaquePointer?) throws(NetError) -> OpaquePointer {
        guard let context = SSL_CTX_new(method) else { throw .tls("SSL_CTX_new: \(openSSLErrorString())") }
        _ = shim_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        _ = shim_SSL_CTX_set_max_proto_version(context, TLS1_3_VERSION)
        SSL_CTX_set_cipher_list(context, TLSConfiguration.tls12Ciphers)
        SSL_CTX_set_ciphersuites(context, TLSConfiguration.tls13Suites)
        _ = shim_SSL_CTX_set1_groups_list(context, TLSConfiguration.groups)
        SSL_CTX_set_options(context, shim_SSL_OP_CIPHER_SERVER_PREFERENCE() | shim_SSL_OP_NO_RENEGOTIATION())
        _ = shim_SSL_CTX_set_mode(context, Int(SSL_MODE_RELEASE_BUFFERS))
        return context
    }

    private func loadIdentity(chain: String, key: String) throws(NetError) {
        guard SSL_CTX_use_certificate_chain_file(context, chain) == 1 else {
            throw .tls("cannot load certificate chain \(chain): \(openSSLErrorString())")
        }
        guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
            let reason = openSSLErrorString()
            if reason.contains("key values mismatch") { throw .tls("private key \(key) does not match certificate \(chain)") }
            throw .tls("cannot load private key \(key): \(reason)")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw .tls("private key \(key) does not match certificate \(chain)")
        }
    }

    private func loadTrustRoots(_ file: String) throws(NetError) {
        guard SSL_CTX_load_verify_locations(context, file, nil) == 1 else {
            throw .tls("cannot load trust roots \(file): \(openSSLErrorString())")
        }
    }
}

/// The oldest error on OpenSSL's thread-local queue, in words; the queue is emptied.
func openSSLErrorString() -> String {
    shim_take_error_string().map { String(cString: $0) } ?? "unknown error"
}
