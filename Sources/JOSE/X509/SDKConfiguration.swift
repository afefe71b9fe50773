import Foundation
public import JSON

/// What an SDK must be configured with for one Directory Server: its id (RID), the DS
/// encryption keys with their key ids and certificates, and the DS CA root.
public struct SDKConfiguration: Sendable {
    /// The export formats (`pki export --format`, `GET /sdk/config?format=`); each is rendered in
    /// `SDKConfigurationFormats.swift`.
    public enum Format: String, Sendable, CaseIterable {
        case pem, der, jwk, json
        /// GPayments ActiveSDK's `DirectoryServerInfo(DS_ID, KID, DS_CERT, DS_CA_CERT)`, Kotlin and Swift.
        case activeSDK = "activesdk"
        /// The token style's members (Adyen's `fingerprintToken`), per key.
        case token
        /// One JWK per key, not a set (SDKs that take a single key's JSON).
        case singleJWK = "jwk-single"
        /// Stripe's `DirectoryServerEncryption`, per key.
        case stripe
    }

    public struct Key: Sendable {
        public let variant: TestPKI.KeyVariant
        public let keyID: String
        public let certificate: Certificate
    }

    public let profile: DirectoryServerProfile
    public let keys: [Key]
    public let root: Certificate
    /// The DS CA roots as the token style hands them to its SDK (see ``tokenStyle(_:)``), signed once.
    public let signedRootList: String

    public init(pki: TestPKI, profile: DirectoryServerProfile) throws {
        self.profile = profile
        root = try pki.rootCertificate(profile.rid)
        keys = try TestPKI.KeyVariant.allCases.map { variant in
            Key(variant: variant, keyID: TestPKI.dsKeyID(profile.rid, variant), certificate: try pki.dsCertificate(profile.rid, variant))
        }
        // Signed with the scheme's EC signing key, whose certificate (in x5c) chains to the same root.
        let signer = try pki.acsCertificate(profile.rid, .ec)
        signedRootList = try JWS.sign(payload: Array(JSONWriter.string(.object([("certificates", .array([.string(root.x5cEncoding)]))])).utf8),
                                      key: pki.acsPrivateKey(profile.rid, .ec), algorithm: .es256, certificates: [signer])
    }

    public func key(_ variant: TestPKI.KeyVariant) -> Key? { keys.first { $0.variant == variant } }

    /// The Directory Server as the token style (Adyen's 3DS2 component) passes it to its SDK.
    public func tokenStyle(_ variant: TestPKI.KeyVariant) -> TokenStyleDirectoryServer? {
        guard let key = key(variant) else { return nil }
        let jwk = key.certificate.publicKey.jwk(kid: key.keyID, use: "enc").jsonString
        return TokenStyleDirectoryServer(directoryServerId: profile.rid, directoryServerPublicKey: Data(jwk.utf8).base64EncodedString(),
                                         directoryServerRootCertificates: signedRootList)
    }

    /// The configuration as text in `format`.
    public func render(_ format: Format) -> String {
        switch format {
        case .pem: pemText()
        case .der: derText()
        case .jwk: jwkSetText()
        case .json: jsonText()
        case .activeSDK: activeSDKText()
        case .token: tokenStyleText()
        case .singleJWK: singleJWKText()
        case .stripe: stripeText()
        }
    }
}

/// The Directory Server as the token style's `fingerprintToken` carries it. As adyen-ios decodes
/// it (AdyenActions/Components/3DS2, FingerprintToken) and as its test tokens hold it:
/// `directoryServerPublicKey` is the standard base64 of the key's JWK JSON;
/// `directoryServerRootCertificates` a compact JWS whose payload is `{"certificates": [base64
/// DER, …]}` and whose header carries the signer in `x5c`.
public struct TokenStyleDirectoryServer: Sendable {
    public let directoryServerId: String
    public let directoryServerPublicKey: String
    public let directoryServerRootCertificates: String

    /// The token's members, under the names the clients decode.
    public var members: [(key: String, value: JSONValue)] {
        [("directoryServerId", .string(directoryServerId)), ("directoryServerPublicKey", .string(directoryServerPublicKey)),
         ("directoryServerRootCertificates", .string(directoryServerRootCertificates))]
    }
}
