// Decoding: every key optional (the members' defaults), unknown keys rejected (``KeyTableDecodable``).
extension HarnessConfiguration: KeyTableDecodable {
    public static var keys: [TableKey<Self>] {
        [.key("server", \.server), .key("tls", \.tls), .key("logging", \.logging), .key("admin", \.admin), .key("sdkConfigToken", \.sdkConfigToken),
         .key("pkiDirectory", \.pkiDirectory), .key("directoryServers", \.directoryServers), .key("directoryServer", \.directoryServer),
         .key("accessControlServer", \.accessControlServer), .key("threeDSServer", \.threeDSServer), .key("scenarios", \.scenarios),
         .key("maxTransactions", \.maxTransactions), .key("dataDirectory", \.dataDirectory), .key("store", \.store), .key("cluster", \.cluster)]
    }
}

extension HarnessConfiguration.Server: KeyTableDecodable {
    public static var keys: [TableKey<Self>] {
        [.key("host", \.host), .key("httpPort", \.httpPort), .key("httpsPort", \.httpsPort), .key("loops", \.loops),
         .key("maxHeaderBytes", \.maxHeaderBytes), .key("maxBodyBytes", \.maxBodyBytes), .key("requestTimeoutMs", \.requestTimeoutMs),
         .key("idleTimeoutMs", \.idleTimeoutMs), .key("shutdownGraceMs", \.shutdownGraceMs), .key("drainSeconds", \.drainSeconds), .key("roleCalls", \.roleCalls),
         .key("publicURL", \.publicURL)]
    }
}

extension HarnessConfiguration.TLS: KeyTableDecodable {
    public static var keys: [TableKey<Self>] {
        [.key("certificate", \.certificate), .key("privateKey", \.privateKey), .key("names", \.names), .key("clientCA", \.clientCA),
         .key("requireClientCertificate", \.requireClientCertificate), .key("clientCertificate", \.clientCertificate),
         .key("clientPrivateKey", \.clientPrivateKey), .key("plainHTTPBesideMutualTLS", \.plainHTTPBesideMutualTLS)]
    }
}

extension HarnessConfiguration.Admin: KeyTableDecodable {
    public static var keys: [TableKey<Self>] { [.key("token", \.token), .key("openOnNetwork", \.openOnNetwork)] }
}

extension HarnessConfiguration.Store: KeyTableDecodable {
    public static var keys: [TableKey<Self>] { [.key("enabled", \.enabled), .key("maxRecords", \.maxRecords), .key("maxAgeDays", \.maxAgeDays),
                                            .key("durability", \.durability), .key("backend", \.backend), .key("url", \.url)] }
}

extension HarnessConfiguration.Cluster: KeyTableDecodable {
    public static var keys: [TableKey<Self>] { [.key("enabled", \.enabled), .key("instanceURL", \.instanceURL)] }
}

extension HarnessConfiguration.Logging: KeyTableDecodable {
    public static var keys: [TableKey<Self>] { [.key("level", \.level), .key("format", \.format)] }
}
