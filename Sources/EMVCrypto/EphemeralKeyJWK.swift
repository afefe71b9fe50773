public import JOSE
public import JSON

extension PublicKey {
    /// The key as the EC JWK object EMV messages carry (`sdkEphemPubKey`, `acsEphemPubKey`):
    /// kty, crv, x and y only.
    public var emvJWK: JSONValue {
        let jwk = jwk()
        return .object(omittingAbsent: [("kty", .string(jwk.kty)), ("crv", .string(jwk.crv)), ("x", .string(jwk.x)), ("y", .string(jwk.y))])
    }

    /// Reads an EC P-256 public JWK object; members other than kty, crv, x and y (an
    /// Android SDK's `use` and `kid`) are ignored.
    public init(emvJWK json: JSONValue) throws(JOSEError) {
        guard let kty = json["kty"]?.stringValue else { throw .invalidJWK("kty is missing or not a string") }
        try self.init(jwk: JWK(kty: kty, crv: json["crv"]?.stringValue, x: json["x"]?.stringValue, y: json["y"]?.stringValue))
    }
}
