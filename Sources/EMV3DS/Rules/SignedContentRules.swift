public import JSON

/// Field rules of what a JWS carries inside a message: `acsSignedContent`'s payload, which the SDK reads from the ARes.
///
/// Annex A, Table A.1, "ACS Signed Content": the body of the JWS contains the ACS URL, the ACS Ephemeral Public Key (QT)
/// and the SDK Ephemeral Public Key (QC), the same in every version. The SDK refuses a payload without them, or with one
/// it cannot read, as a runtime error: no Erro goes anywhere (the SDK has no channel to the ACS yet).
public enum SignedContentRules {
    /// The protected header of `acsSignedContent`: `alg` PS256 or ES256 (EMV 3DS: the ACS signs with PS256 or ES256;
    /// RFC 7515 §4.1.1: `alg` is required) and the ACS's certificate chain in `x5c` (RFC 7515 §4.1.6).
    public static let jwsHeader = MessageRules(.aRes, [
        FieldRule("alg", .required, .oneOf(["PS256", "ES256"])),
        FieldRule("x5c", .required, .arrayOf(.string(1...100_000), count: 1...10)),
    ])

    /// The payload of `acsSignedContent`. Its violations are named as the ARes's are: the payload travels in the ARes.
    public static let acsPayload = MessageRules(.aRes, [
        FieldRule("acsURL", .required, .url(maxLength: 2048)),
        FieldRule("acsEphemPubKey", .required, .ecPublicJWK),
        FieldRule("sdkEphemPubKey", .required, .ecPublicJWK),
    ])

    /// The members of the payload's `acsEphemPubKey`: an EC public key as a JWK (RFC 7517 §4.1: `kty` required; RFC 7518
    /// §6.2.1: `crv`, `x` and `y` required for an EC key) on P-256, the curve of EMV 3DS's ephemeral keys.
    public static let ephemeralKey = MessageRules(.aRes, [
        FieldRule("kty", .required, .oneOf([ECPublicJWK.keyType])),
        FieldRule("crv", .required, .oneOf([ECPublicJWK.curve])),
        FieldRule("x", .required, .string(1...256)),
        FieldRule("y", .required, .string(1...256)),
    ])

    /// The parameters the IANA "JSON Web Key Parameters" registry lists from RFC 7517 §4, RFC 7518 §6 (every key type's,
    /// a private key's too) and Web Cryptography's `ext`: a reader may act on any of them (a `d` makes a private key of it).
    /// Only a member no one registers is one a reader must ignore (RFC 7517 §4).
    public static let registeredKeyParameters: Set<String> = ["kty", "use", "key_ops", "alg", "kid", "x5u", "x5c", "x5t", "x5t#S256",
                                                              "crv", "x", "y", "d", "n", "e", "p", "q", "dp", "dq", "qi", "oth", "r", "t",
                                                              "k", "ext"]
}

extension SignedContentRules {
    /// What `acsPayload` refuses of `payload` read with `duplicates`: the table is the same in every version, so any
    /// version's context reads it.
    public static func violations(ofACSPayload payload: JSONValue, duplicates: [JSONReader.Duplicate] = []) -> [Violation] {
        acsPayload.check(payload, context: payloadContext, duplicates: duplicates).violations
    }

    /// The context the payload's table is read in.
    public static let payloadContext = MessageContext(version: .v2_1_0, channel: .app)
}

extension SignedContentRules {
    /// Why the payload's table refuses `url` as its `acsURL` (nil when it takes it): what a configured challenge URL is
    /// held to, since every SDK would refuse acsSignedContent carrying one the table refuses.
    public static func acsURLProblem(_ url: String) -> String? {
        violations(ofACSPayload: .object([("acsURL", .string(url))])).first { $0.field == "acsURL" }?.reason
    }
}
