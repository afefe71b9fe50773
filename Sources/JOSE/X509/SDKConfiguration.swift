import Foundation

/// What an SDK must be configured with for one Directory Server: its id (RID), the DS
/// encryption keys with their key ids and certificates, and the DS CA root.
public struct SDKConfiguration: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case pem, der, jwk, json
    }

    public struct Key: Sendable {
        public let variant: TestPKI.KeyVariant
        public let keyID: String
        public let certificate: Certificate
    }

    public let profile: DirectoryServerProfile
    public let keys: [Key]
    public let root: Certificate

    public init(pki: TestPKI, profile: DirectoryServerProfile) throws {
        self.profile = profile
        root = try pki.rootCertificate(profile.rid)
        keys = try TestPKI.KeyVariant.allCases.map { variant in
            Key(variant: variant, keyID: TestPKI.dsKeyID(profile.rid, variant), certificate: try pki.dsCertificate(profile.rid, variant))
        }
    }

    /// The configuration as text in `format`.
    public func render(_ format: Format) -> String {
        switch format {
        case .pem:
            var text = "# Directory Server \(profile.name), DS id (RID) \(profile.rid)\n"
            for key in keys {
                text += "# DS encryption key \(key.variant.rawValue.uppercased()), key id \(key.keyID)\n" + key.certificate.pemRepresentation
            }
            return text + "# DS CA root\n" + root.pemRepresentation
        case .der:
            var text = "dsId: \(profile.rid)\n"
            for key in keys {
                text += "dsCertificate.\(key.variant.rawValue) (kid \(key.keyID)): \(Data(key.certificate.derRepresentation).base64EncodedString())\n"
            }
            return text + "dsCARoot: \(Data(root.derRepresentation).base64EncodedString())\n"
        case .jwk:
            let set = keys.map { $0.certificate.publicKey.jwk(kid: $0.keyID, use: "enc") }
                .map { jwk -> JWK in
                    var jwk = jwk
                    jwk.x5c = [keys.first { $0.keyID == jwk.kid }?.certificate.x5cEncoding, root.x5cEncoding].compactMap { $0 }
                    return jwk
                }
            return #"{"keys":["# + set.map(\.jsonString).joined(separator: ",") + "]}\n"
        case .json:
            let object: [String: Any] = [
                "dsId": profile.rid,
                "name": profile.name,
                "keys": keys.map { key -> [String: Any] in
                    [
                        "keyId": key.keyID,
                        "type": key.variant == .rsa ? "RSA" : "EC",
                        "certificatePem": key.certificate.pemRepresentation,
                        "certificateDerBase64": Data(key.certificate.derRepresentation).base64EncodedString(),
                        "jwk": (try? JSONSerialization.jsonObject(with: Data(key.certificate.publicKey.jwk(kid: key.keyID, use: "enc").jsonString.utf8))) ?? [:],
                    ]
                },
                "rootCertificatePem": root.pemRepresentation,
                "rootCertificateDerBase64": Data(root.derRepresentation).base64EncodedString(),
            ]
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
            return String(decoding: data, as: UTF8.self) + "\n"
        }
    }
}
