public import JOSE
public import JSON

extension JWK {
    /// An EC P-256 public JWK object as EMV messages carry it (`sdkEphemPubKey`); members other than kty, crv, x and y
    /// (an Android SDK's `use` and `kid`) are ignored.
    public init(emvJWK json: JSONValue) throws(JOSEError) {
        guard let kty = json["kty"]?.stringValue else { throw .invalidJWK("kty is missing or not a string") }
        self.init(kty: kty, crv: json["crv"]?.stringValue, x: json["x"]?.stringValue, y: json["y"]?.stringValue)
    }

    /// The key as the EC JWK object EMV messages carry (`sdkEphemPubKey`, `acsEphemPubKey`): kty, crv, x and y only.
    public var emvJSON: JSONValue {
        .object(omittingAbsent: [("kty", .string(kty)), ("crv", .string(crv)), ("x", .string(x)), ("y", .string(y))])
    }
}

extension PublicKey {
    /// The key as the EC JWK object EMV messages carry: kty, crv, x and y only.
    public var emvJWK: JSONValue { jwk().emvJSON }

    /// Reads an EC P-256 public JWK object as EMV messages carry it.
    public init(emvJWK json: JSONValue) throws(JOSEError) {
        try self.init(jwk: JWK(emvJWK: json))
    }
}
