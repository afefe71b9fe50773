/// Where and how the HTTP server listens.
public struct ServerConfiguration: Sendable {
    /// Numeric address to bind ("127.0.0.1", "0.0.0.0", "::").
    public var host: String
    /// Plain HTTP port; 0 picks a free one; nil disables plain HTTP.
    public var httpPort: Int?
    /// HTTPS port; 0 picks a free one; nil disables HTTPS.
    public var httpsPort: Int?
    /// Server certificate, key and (for mutual TLS) client CA; required when `httpsPort` is set.
    public var tls: TLSConfiguration?
    /// A request head larger than this is answered 431.
    public var maxHeaderBytes: Int
    /// A request body larger than this is answered 413.
    public var maxBodyBytes: Int
    /// A request not received in full this long after its first byte is answered 408.
    public var requestTimeoutMilliseconds: UInt64
    /// A keep-alive connection with no request for this long is closed.
    public var idleTimeoutMilliseconds: UInt64
    /// On shutdown, requests in flight get this long to finish before connections are cut.
    public var shutdownGraceMilliseconds: UInt64

    public init(host: String = "127.0.0.1", httpPort: Int? = 8080, httpsPort: Int? = nil, tls: TLSConfiguration? = nil,
                maxHeaderBytes: Int = 16 * 1024, maxBodyBytes: Int = 1024 * 1024,
                requestTimeoutMilliseconds: UInt64 = 10_000, idleTimeoutMilliseconds: UInt64 = 60_000,
                shutdownGraceMilliseconds: UInt64 = 10_000) {
        self.host = host
        self.httpPort = httpPort
        self.httpsPort = httpsPort
        self.tls = tls
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.requestTimeoutMilliseconds = requestTimeoutMilliseconds
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.shutdownGraceMilliseconds = shutdownGraceMilliseconds
    }
}
