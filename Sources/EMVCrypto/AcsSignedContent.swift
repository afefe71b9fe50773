import EMV3DS
public import Foundation
public import JOSE
public import JSON

/// The key and certificates an ACS signs `acsSignedContent` with: PS256 with an RSA
/// certificate or ES256 with an EC one, the chain leaf first up to the DS CA root.
public struct ACSSigningIdentity: Sendable {
    public let key: PrivateKey
    public let chain: [Certificate]
    /// The root's key, when known: the harness issues deliberately bad certificates with it.
    public let rootKey: PrivateKey?

    public init(key: PrivateKey, chain: [Certificate], rootKey: PrivateKey? = nil) {
        self.key = key
        self.chain = chain
        self.rootKey = rootKey
    }

    public var algorithm: SignatureAlgorithm { .emv(for: key.kind) }
}

/// `acsSignedContent`: the JWS in an app-channel ARes C that tells the SDK where the ACS is
/// and which ephemeral key it agreed with, so the SDK can trust the secure channel.
public struct AcsSignedContent: SignedContent {
    public static let fieldName = "acsSignedContent"
    public let acsURL: String
    public let acsEphemPubKey: PublicKey
    /// The SDK's key as the ACS echoes it.
    public let sdkEphemPubKey: JSONValue
    /// The certificate that signed it (the first of `x5c`).
    public let signer: Certificate

    /// Why an SDK refuses an `acsSignedContent`: for SDKs every case is a runtime error.
    public typealias Failure = SignedContentFailure<Self>

    /// Signs the three elements the specification names, and nothing else.
    public static func sign(acsURL: String, acsEphemeralKey: JWK, sdkEphemPubKey: JSONValue,
                            identity: ACSSigningIdentity) throws(JOSEError) -> String {
        try JWS.sign(payload: payload(acsURL: acsURL, acsEphemeralKey: acsEphemeralKey, sdkEphemPubKey: sdkEphemPubKey),
                     key: identity.key, algorithm: identity.algorithm, certificates: identity.chain)
    }

    /// The JWS payload: `acsURL`, `acsEphemPubKey` and `sdkEphemPubKey`, in that order.
    public static func payload(acsURL: String, acsEphemeralKey: JWK, sdkEphemPubKey: JSONValue) -> [UInt8] {
        JSONWriter.write(.object([("acsURL", .string(acsURL)), ("acsEphemPubKey", acsEphemeralKey.emvJSON), ("sdkEphemPubKey", sdkEphemPubKey)]))
    }

    /// Verifies as an SDK does: PS256 or ES256 only, the `x5c` chain up to one of the
    /// verifier's roots (dates, CA constraints), the signature with the leaf's key, then the payload.
    public init(verifying compact: String, with verifier: CertificateVerifier, at time: Date = Date()) throws(Failure) {
        try self.init(try Self.verifiedPayload(compact, with: verifier, at: time))
    }

    /// A JWS whose signature holds, its payload read as JSON and not yet checked by the payload's table.
    public struct VerifiedPayload: Sendable {
        public var payload: JSONValue
        /// The members the payload has more than once.
        public var duplicates: [JSONReader.Duplicate]
        /// The certificate that signed it (the first of `x5c`).
        public let signer: Certificate

        public init(payload: JSONValue, duplicates: [JSONReader.Duplicate], signer: Certificate) {
            self.payload = payload
            self.duplicates = duplicates
            self.signer = signer
        }

        /// `bytes`, the payload of a JWS `signer` signed, read as the JSON object it must be.
        public init(reading bytes: [UInt8], signer: Certificate) throws(Failure) {
            let read = try AcsSignedContent.payloadObject(bytes)
            self.init(payload: read.value, duplicates: read.duplicates, signer: signer)
        }
    }

    /// The payload of `compact` once its JWS verifies as an SDK verifies it (``init(verifying:with:at:)``).
    public static func verifiedPayload(_ compact: String, with verifier: CertificateVerifier, at time: Date = Date()) throws(Failure) -> VerifiedPayload {
        let verified = try Self.verified(compact, with: verifier, at: time)
        return VerifiedPayload(payload: verified.payload, duplicates: verified.duplicates, signer: verified.signer)
    }

    /// What an SDK that checks no certificate chain reads: the signature with the `x5c` leaf's key, and the payload.
    /// Wrong on purpose (the simulator's wrong SDK); a correct one verifies with ``verifiedPayload(_:with:at:)``.
    public static func payloadCheckingTheSignatureOnly(_ compact: String) throws(Failure) -> VerifiedPayload {
        let jws: JWS
        let leaf: Certificate
        do throws(JOSEError) {
            jws = try JWS(compact: compact)
            guard let first = try jws.certificateChain().first else { throw JOSEError.missingCertificateChain }
            leaf = first
            try jws.verify(with: leaf.publicKey, allowed: [.ps256, .es256])
        } catch { throw .signature(error) }
        return try VerifiedPayload(reading: jws.payload, signer: leaf)
    }

    /// The payload checked by its table (``SignedContentRules/acsPayload``: each element present once, of its format),
    /// then its keys read.
    public init(_ verified: VerifiedPayload) throws(Failure) {
        let payload = verified.payload
        signer = verified.signer
        if let violation = SignedContentRules.violations(ofACSPayload: payload, duplicates: verified.duplicates).first {
            throw .payload("\(violation.field) \(violation.reason)")
        }
        guard let url = payload["acsURL"]?.stringValue, let acsKey = payload["acsEphemPubKey"], let sdkKey = payload["sdkEphemPubKey"] else {
            throw .payload("acsURL, acsEphemPubKey and sdkEphemPubKey are required")
        }
        do { acsEphemPubKey = try PublicKey(emvJWK: acsKey) } catch { throw .payload("acsEphemPubKey: \(error)") }
        acsURL = url
        sdkEphemPubKey = sdkKey
    }
}

extension SignatureAlgorithm {
    /// The algorithm EMV 3DS signs with a key of `kind`: PS256 with RSA, ES256 with EC P-256 (RS256 is never EMV's).
    public static func emv(for kind: KeyKind) -> SignatureAlgorithm { kind == .rsa ? .ps256 : .es256 }
}

/// A JWS one party signs with its certificate under the DS CA and another verifies: `acsSignedContent`,
/// `sdkServerSignedContent`.
public protocol SignedContent: Sendable {
    /// The field that carries it, for what a refusal says.
    static var fieldName: String { get }
}

extension SignedContent {
    /// The payload of `compact` once its JWS verifies: PS256 or ES256 only, the `x5c` chain up to one of the verifier's
    /// roots (dates, CA constraints), the signature with the leaf's key; and the leaf. The payload is a JSON object.
    static func verified(_ compact: String, with verifier: CertificateVerifier, at time: Date) throws(SignedContentFailure<Self>)
        -> (payload: JSONValue, duplicates: [JSONReader.Duplicate], signer: Certificate) {
        let jws: JWS
        let signer: Certificate
        do {
            jws = try JWS(compact: compact)
            signer = try jws.verifyWithCertificateChain(verifier, allowed: [.ps256, .es256], at: time)
        } catch { throw .signature(error) }
        let read = try payloadObject(jws.payload)
        return (read.value, read.duplicates, signer)
    }

    /// A payload as a signed content's must be: a JSON object, with the members it has more than once.
    static func payloadObject(_ bytes: [UInt8]) throws(SignedContentFailure<Self>) -> (value: JSONValue, duplicates: [JSONReader.Duplicate]) {
        guard let read = try? JSONReader.parse(bytes), read.value.objectMembers != nil else { throw .payload("is not a JSON object") }
        return (read.value, read.duplicates)
    }
}

/// Why a signed content is refused: its JWS (the chain, the signature), or its payload.
public enum SignedContentFailure<Content: SignedContent>: Error, Equatable, CustomStringConvertible {
    case signature(JOSEError)
    case payload(String)

    public var description: String {
        switch self {
        case .signature: "\(Content.fieldName): \(reason)"
        case .payload: "\(Content.fieldName) \(reason)"
        }
    }

    /// What is wrong, without the field's name: for a refusal that names the field itself (an Erro's errorDetail).
    public var reason: String {
        switch self {
        case .signature(let error): "\(error)"
        case .payload(let reason): "payload: \(reason)"
        }
    }
}
