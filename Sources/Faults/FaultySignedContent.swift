public import EMVCrypto
import Foundation
public import JOSE
import JSON

/// `acsSignedContent` broken on purpose, one way per `SignedContentFault` (or signed through an intermediate CA, which
/// an SDK must take). Every broken one must make an SDK stop with a runtime error; the certificates for them are made
/// afresh each time.
public enum FaultySignedContent {
    /// `payload` signed as `fault` says: broken by a ``SignedContentFault``, or signed as it should be over a payload or under
    /// a header a content fault spoils (``Fault/signedPayload(_:)``, ``Fault/signedHeader(_:)``), or with an `acsEphemPubKey` one
    /// spoils (``Fault/signedKey(_:)``); any other fault signs it plainly.
    public static func sign(_ fault: Fault, payload: [UInt8], identity: ACSSigningIdentity) throws(JOSEError) -> String {
        switch fault {
        case .signedContent(let fault):
            return try sign(fault, payload: payload, identity: identity)
        case .signedPayload(let spoil):
            // The payload is the harness's own writing: it reads back.
            let spoilt = (try? JSONReader.parse(payload).value).map { [spoil].write($0).bytes } ?? payload
            return try JWS.sign(payload: spoilt, key: identity.key, algorithm: identity.algorithm, certificates: identity.chain)
        case .signedKey(let spoil):
            // The payload is the harness's own writing: it reads back, with the key it signs.
            guard var object = try? JSONReader.parse(payload).value, let key = object["acsEphemPubKey"] else {
                return try JWS.sign(payload: payload, key: identity.key, algorithm: identity.algorithm, certificates: identity.chain)
            }
            object.set("acsEphemPubKey", spoil.apply(to: key))
            return try JWS.sign(payload: JSONWriter.write(object), key: identity.key, algorithm: identity.algorithm, certificates: identity.chain)
        case .signedHeader(let spoil):
            var header = JSONValue.object([("alg", .string(identity.algorithm.rawValue)),
                                           ("x5c", .array(identity.chain.map { .string($0.x5cEncoding) }))])
            if spoil == .criticalExtension {
                // RFC 7515 §4.1.11: a recipient that does not understand a parameter `crit` names must refuse the JWS.
                header.set("crit", .array([.string(Fault.criticalHeaderParameter)]))
                header.set(Fault.criticalHeaderParameter, .bool(true))
            } else {
                header = spoil.apply(to: header)
            }
            return try JWS.sign(payload: payload, key: identity.key, algorithm: identity.algorithm, rawHeader: header)
        default:
            return try JWS.sign(payload: payload, key: identity.key, algorithm: identity.algorithm, certificates: identity.chain)
        }
    }

    public static func sign(_ fault: SignedContentFault, payload: [UInt8], identity: ACSSigningIdentity) throws(JOSEError) -> String {
        switch fault {
        case .badSignature:
            return try alteringPart(2, of: JWS.sign(payload: payload, key: identity.key, algorithm: identity.algorithm, certificates: identity.chain))
        case .untrustedKey:
            return try JWS.sign(payload: payload, key: try PrivateKey.generateP256(), algorithm: .es256, certificates: identity.chain)
        case .expiredCertificate, .notYetValidCertificate:
            guard let rootKey = identity.rootKey, let root = identity.chain.last else {
                throw .invalidKey("the DS root key is needed to issue a certificate with bad dates")
            }
            let day: TimeInterval = 86_400
            let start = fault == .expiredCertificate ? Date().addingTimeInterval(-30 * day) : Date().addingTimeInterval(day)
            let days = fault == .expiredCertificate ? 29 : 365
            let key = try PrivateKey.generateP256()
            let leaf = try CertificateBuilder.issue(CertificateProfile(commonName: "Harness ACS Signing (\(fault.rawValue))", notBefore: start, validFor: days),
                                                    publicKey: key.publicKey, issuer: root, issuerKey: rootKey)
            return try JWS.sign(payload: payload, key: key, algorithm: .es256, certificates: [leaf, root])
        case .otherRoot:
            let rootKey = try PrivateKey.generateP256()
            let root = try CertificateBuilder.issue(CertificateProfile(commonName: "Harness Unknown Root CA", validFor: 365, isCA: true),
                                                    publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
            let key = try PrivateKey.generateP256()
            let leaf = try CertificateBuilder.issue(CertificateProfile(commonName: "Harness ACS Signing (other root)", validFor: 365),
                                                    publicKey: key.publicKey, issuer: root, issuerKey: rootKey)
            return try JWS.sign(payload: payload, key: key, algorithm: .es256, certificates: [leaf, root])
        case .missingIntermediate, .throughIntermediate:
            guard let rootKey = identity.rootKey, let root = identity.chain.last else {
                throw .invalidKey("the DS root key is needed to issue an intermediate CA")
            }
            let intermediateKey = try PrivateKey.generateP256()
            let intermediate = try CertificateBuilder.issue(
                CertificateProfile(commonName: "Harness Test ACS Intermediate CA", notBefore: Date().addingTimeInterval(-86_400), validFor: 365,
                                   isCA: true, pathLength: 0),
                publicKey: intermediateKey.publicKey, issuer: root, issuerKey: rootKey)
            let key = try PrivateKey.generateP256()
            let leaf = try CertificateBuilder.issue(
                CertificateProfile(commonName: "Harness ACS Signing (\(fault.rawValue))", notBefore: Date().addingTimeInterval(-86_400), validFor: 364),
                publicKey: key.publicKey, issuer: intermediate, issuerKey: intermediateKey)
            let chain = fault == .throughIntermediate ? [leaf, intermediate, root] : [leaf, root]
            return try JWS.sign(payload: payload, key: key, algorithm: .es256, certificates: chain)
        case .missingX5C:
            return try JWS.sign(payload: payload, key: identity.key, algorithm: identity.algorithm)
        case .algNone:
            let header = JSONWriter.write(.object([("alg", .string("none")), ("x5c", .array(identity.chain.map { .string($0.x5cEncoding) }))]))
            return Base64URL.encode(header) + "." + Base64URL.encode(payload) + "."
        }
    }
}
