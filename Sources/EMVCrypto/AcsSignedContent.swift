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

    public var algorithm: SignatureAlgorithm { key.kind == .rsa ? .ps256 : .es256 }
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
        try self.init(verified: try Self.verified(compact, with: verifier, at: time))
    }

    /// What an SDK that checks no certificate chain reads: the signature with the `x5c` leaf's key, and the payload.
    /// Wrong on purpose (the simulator's wrong SDK); a correct one verifies with ``init(verifying:with:at:)``.
    public init(checkingTheSignatureOnly compact: String) throws(Failure) {
        let jws: JWS
        let leaf: Certificate
        do throws(JOSEError) {
            jws = try JWS(compact: compact)
            guard let first = try jws.certificateChain().first else { throw JOSEError.missingCertificateChain }
            leaf = first
            try jws.verify(with: leaf.publicKey, allowed: [.ps256, .es256])
        } catch { throw .signature(error) }
        guard let payload = try? JSONReader.parse(jws.payload).value, payload.objectMembers != nil else { throw .payload("is not a JSON object") }
        try self.init(verified: (payload, leaf))
    }

    private init(verified: (payload: JSONValue, signer: Certificate)) throws(Failure) {
        let payload = verified.payload
        signer = verified.signer
        guard let url = payload["acsURL"]?.stringValue, url.lowercased().hasPrefix("http") else { throw .payload("acsURL is missing or not a URL") }
        guard let acsKey = payload["acsEphemPubKey"], acsKey.objectMembers != nil else { throw .payload("acsEphemPubKey is not a JWK object") }
        guard let sdkKey = payload["sdkEphemPubKey"], sdkKey.objectMembers != nil else { throw .payload("sdkEphemPubKey is not a JWK object") }
        do { acsEphemPubKey = try PublicKey(emvJWK: acsKey) } catch { throw .payload("acsEphemPubKey: \(error)") }
        acsURL = url
        sdkEphemPubKey = sdkKey
    }
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
        -> (payload: JSONValue, signer: Certificate) {
        let jws: JWS
        let signer: Certificate
        do {
            jws = try JWS(compact: compact)
            signer = try jws.verifyWithCertificateChain(verifier, allowed: [.ps256, .es256], at: time)
        } catch { throw .signature(error) }
        guard let payload = try? JSONReader.parse(jws.payload).value, payload.objectMembers != nil else { throw .payload("is not a JSON object") }
        return (payload, signer)
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
