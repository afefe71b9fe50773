import Foundation
public import JSON

// The text of each export format, one function each: what `pki export --format` prints and what
// `GET /sdk/config?format=` answers. Certificates go out as PEM, or as standard padded base64 of
// the DER (`x5cEncoding`, the PEM body without its armour lines), as each SDK family reads them.
extension SDKConfiguration {
    /// The key type as JWK `kty` names it (and as the exports label it): RSA or EC.
    static func keyType(_ key: Key) -> String { key.variant.rawValue.uppercased() }

    /// One DS key as a single JWK: `kid`, `use` enc, and `x5c` [DS certificate, DS CA root].
    public func jwk(_ key: Key) -> JWK {
        var jwk = key.certificate.publicKey.jwk(kid: key.keyID, use: "enc")
        jwk.x5c = [key.certificate.x5cEncoding, root.x5cEncoding]
        return jwk
    }

    /// The whole configuration as one JSON object: the `json` export, and each entry of `GET /sdk/config`.
    public var jsonValue: JSONValue {
        .object([
            ("dsId", .string(profile.rid)),
            ("name", .string(profile.name)),
            ("keys", .array(keys.map { key in
                .object([
                    ("keyId", .string(key.keyID)), ("type", .string(Self.keyType(key))),
                    ("certificatePem", .string(key.certificate.pemRepresentation)),
                    ("certificateDerBase64", .string(key.certificate.x5cEncoding)),
                    ("jwk", Self.json(jwk(key))),
                ])
            })),
            ("rootCertificates", .array([.object([("certificatePem", .string(root.pemRepresentation)),
                                                  ("certificateDerBase64", .string(root.x5cEncoding))])])),
        ])
    }

    // MARK: one function per format

    func pemText() -> String {
        var text = "# Directory Server \(profile.name), DS id (RID) \(profile.rid)\n"
        for key in keys {
            text += "# DS encryption key \(Self.keyType(key)), key id \(key.keyID)\n" + key.certificate.pemRepresentation
        }
        return text + "# DS CA root\n" + root.pemRepresentation
    }

    func derText() -> String {
        var text = "dsId: \(profile.rid)\n"
        for key in keys {
            text += "dsCertificate.\(key.variant.rawValue) (kid \(key.keyID)): \(key.certificate.x5cEncoding)\n"
        }
        return text + "dsCARoot: \(root.x5cEncoding)\n"
    }

    func jwkSetText() -> String {
        #"{"keys":["# + keys.map { jwk($0).jsonString }.joined(separator: ",") + "]}\n"
    }

    func jsonText() -> String { Self.pretty(jsonValue) }

    /// GPayments ActiveSDK: `DirectoryServerInfo(DS_ID, KID, DS_CERT, DS_CA_CERT)`, the four values
    /// in that order as the integration profiles issue names them. ActiveSDK's reference is not
    /// public: searching its name and this constructor in public documentation, web pages, code
    /// and issues found GPayments' ActiveServer guides only, none of the SDK's. So the
    /// certificates are given in the form EMVCo SDKs take as a string, base64 DER, and the values
    /// alone follow in PEM too, for a version that wants that.
    func activeSDKText() -> String {
        var text = """
            # GPayments ActiveSDK: DirectoryServerInfo(DS_ID, KID, DS_CERT, DS_CA_CERT) for \(profile.name), DS id \(profile.rid)
            # DS_CERT and DS_CA_CERT are base64 DER (a PEM body without its BEGIN/END lines), one per DS key.
            # Swift: the same arguments in this order, with the labels your ActiveSDK version declares.

            """
        for key in keys {
            let arguments = [profile.rid, key.keyID, key.certificate.x5cEncoding, root.x5cEncoding].map { "\"\($0)\"" }.joined(separator: ", ")
            text += """

                # DS encryption key \(Self.keyType(key)), key id \(key.keyID)
                val directoryServer\(Self.keyType(key)) = DirectoryServerInfo(\(arguments))
                let directoryServer\(Self.keyType(key)) = DirectoryServerInfo(\(arguments))

                """
        }
        text += "\n# The values alone\nDS_ID: \(profile.rid)\n"
        for key in keys {
            text += "KID (\(Self.keyType(key))): \(key.keyID)\nDS_CERT (\(Self.keyType(key))): \(key.certificate.x5cEncoding)\n"
        }
        text += "DS_CA_CERT: \(root.x5cEncoding)\n"
        for key in keys {
            text += "# DS_CERT (\(Self.keyType(key))) as PEM\n" + key.certificate.pemRepresentation
        }
        return text + "# DS_CA_CERT as PEM\n" + root.pemRepresentation
    }

    /// The token style's members (Adyen's `fingerprintToken`, see ``tokenStyle(_:)``), per key type.
    func tokenStyleText() -> String {
        Self.pretty(.object(keys.compactMap { key in
            tokenStyle(key.variant).map { (key.variant.rawValue, .object($0.members)) }
        }))
    }

    /// One JWK per DS key, each on its own line: what SDKs configured with a single key's JSON take.
    func singleJWKText() -> String {
        keys.map { "# \(profile.name), DS id \(profile.rid): DS encryption key \(Self.keyType($0)), key id \($0.keyID)\n" + jwk($0).jsonString + "\n" }
            .joined()
    }

    /// Stripe's 3DS2 SDK, per key type. The camel-case members are the arguments of
    /// `DirectoryServerEncryption(directoryServerId, dsCertificateData, rootCertsData, keyId)` in
    /// stripe/stripe-android `payments-core/src/main/java/com/stripe/android/model/Stripe3ds2Fingerprint.kt`,
    /// which reads each certificate with `CertificateFactory` from the string's bytes: PEM. The
    /// `directory_server_encryption` object is the same as Stripe's API sends it in
    /// `next_action.use_stripe_sdk`, under the names `parsers/NextActionDataParser.kt` reads.
    func stripeText() -> String {
        Self.pretty(.object(keys.map { key in
            let roots = JSONValue.array([.string(root.pemRepresentation)])
            return (key.variant.rawValue, .object([
                ("directoryServerId", .string(profile.rid)), ("dsCertificateData", .string(key.certificate.pemRepresentation)),
                ("rootCertsData", roots), ("keyId", .string(key.keyID)),
                ("directory_server_encryption", .object([("directory_server_id", .string(profile.rid)),
                                                         ("certificate", .string(key.certificate.pemRepresentation)),
                                                         ("root_certificate_authorities", roots), ("key_id", .string(key.keyID))])),
            ]))
        }))
    }

    // MARK: JSON

    /// A JWK as a JSON value (its members sorted, as `jsonString` writes them).
    static func json(_ jwk: JWK) -> JSONValue { jwk.json }

    /// Indented JSON with sorted members, for people to read and paste.
    static func pretty(_ value: JSONValue) -> String {
        let object = try? JSONSerialization.jsonObject(with: Data(JSONWriter.write(value)))
        let data = object.flatMap { try? JSONSerialization.data(withJSONObject: $0, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) }
        return String(decoding: data ?? Data(JSONWriter.write(value)), as: UTF8.self) + "\n"
    }
}
