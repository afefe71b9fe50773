import COpenSSL

/// One TLS connection driven through memory BIOs: libuv moves the ciphertext,
/// OpenSSL never touches the socket.
final class TLSSession {
    private let ssl: OpaquePointer
    private let networkIn: OpaquePointer   // ciphertext from the peer, for OpenSSL to read
    private let networkOut: OpaquePointer  // ciphertext OpenSSL wrote, for us to send
    private(set) var isHandshakeComplete = false
    private static let chunk = 16 * 1024

    init(context: TLSContext, serverName: String? = nil) throws(NetError) {
        guard let ssl = SSL_new(context.context) else { throw .tls("SSL_new: \(openSSLErrorString())") }
        guard let networkIn = BIO_new(BIO_s_mem()), let networkOut = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .tls("BIO_new failed")
        }
        self.ssl = ssl
        self.networkIn = networkIn
        self.networkOut = networkOut
        SSL_set_bio(ssl, networkIn, networkOut) // ssl now owns both BIOs
        if context.isServer {
            SSL_set_accept_state(ssl)
        } else {
            SSL_set_connect_state(ssl)
            if let serverName {
                if !serverName.isIPAddress { _ = shim_SSL_set_tlsext_host_name(ssl, serverName) }
                // Host name (or IP) verification against the certificate's SANs.
                if serverName.isIPAddress { X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) } else { SSL_set1_host(ssl, serverName) }
            }
        }
    }

    deinit { SSL_free(ssl) }

    /// Advances the handshake (the client's first call produces the ClientHello).
    func handshake() throws(NetError) {
        guard !isHandshakeComplete else { return }
        let rc = SSL_do_handshake(ssl)
        if rc == 1 {
            isHandshakeComplete = true
            return
        }
        try check(rc, during: "handshake")
    }

    /// Feeds ciphertext from the peer; hands every plaintext chunk it yields to `deliver`.
    func receive(_ ciphertext: UnsafeRawBufferPointer, deliver: (UnsafeRawBufferPointer) -> Void) throws(NetError) {
        var offset = 0
        while offset < ciphertext.count {
            let written = BIO_write(networkIn, ciphertext.baseAddress! + offset, Int32(ciphertext.count - offset))
            guard written > 0 else { throw .tls("BIO_write failed") }
            offset += Int(written)
        }
        if !isHandshakeComplete {
            try handshake()
            guard isHandshakeComplete else { return }
        }
        var buffer = [UInt8](repeating: 0, count: Self.chunk)
        while true {
            let rc = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if rc > 0 {
                buffer.withUnsafeBytes { deliver(UnsafeRawBufferPointer(rebasing: $0[0..<Int(rc)])) }
                continue
            }
            try check(rc, during: "read")
            return
        }
    }

    /// Encrypts `plaintext`; the ciphertext waits in ``takeOutgoing()``.
    func send(_ plaintext: UnsafeRawBufferPointer) throws(NetError) {
        var offset = 0
        while offset < plaintext.count {
            let rc = SSL_write(ssl, plaintext.baseAddress! + offset, Int32(plaintext.count - offset))
            guard rc > 0 else { return try check(rc, during: "write") }
            offset += Int(rc)
        }
    }

    /// Queues a close_notify alert, so the peer sees a clean end rather than a truncation.
    func shutdown() {
        guard isHandshakeComplete else { return }
        if SSL_shutdown(ssl) < 0 { ERR_clear_error() }
    }

    /// Drains what OpenSSL produced for the peer and passes it to `sink`.
    func takeOutgoing(_ sink: (UnsafeRawBufferPointer) -> Void) {
        var data: UnsafeMutablePointer<CChar>?
        let count = shim_BIO_get_mem_data(networkOut, &data)
        guard count > 0, let data else { return }
        sink(UnsafeRawBufferPointer(start: data, count: count))
        _ = shim_BIO_reset(networkOut)
    }

    /// Subject of the verified peer certificate, if the peer sent one.
    var peerCertificateSubject: String? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        guard let name = X509_NAME_oneline(X509_get_subject_name(certificate), nil, 0) else { return nil }
        defer { shim_OPENSSL_free(name) }
        return String(cString: name)
    }


    private func check(_ rc: Int32, during step: String) throws(NetError) {
        switch SSL_get_error(ssl, rc) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return
        case SSL_ERROR_ZERO_RETURN:
            throw .tls("peer closed the TLS session")
        default:
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                ERR_clear_error()
                throw .tls("\(step): certificate verification failed: \(String(cString: X509_verify_cert_error_string(verify)))")
            }
            throw .tls("\(step): \(openSSLErrorString())")
        }
    }
}

extension String {
    var isIPAddress: Bool {
        (try? SocketAddress(host: self, port: 0)) != nil && self != "localhost"
    }
}
