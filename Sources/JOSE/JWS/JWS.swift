public import Foundation
public import JSON

/// The protected header of a JWS.
public struct JWSHeader: Codable, Sendable, Equatable {
    public var alg: String
    public var kid: String?
    public var typ: String?
    public var cty: String?
    /// Standard base64 DER certificates, leaf first (RFC 7515 §4.1.6).
    public var x5c: [String]?
    public var crit: [String]?

    /// The header parameters the IANA JOSE registry defines (RFC 7515 §4.1, RFC 7516 §4.1, RFC 7797 `b64`): a name of
    /// these has a meaning a recipient may act on, so it is never "a parameter no one defines".
    public static let registeredParameters: Set<String> = ["alg", "jku", "jwk", "kid", "x5u", "x5c", "x5t", "x5t#S256", "typ", "cty", "crit",
                                                           "b64", "enc", "zip", "epk", "apu", "apv", "iv", "tag", "p2s", "p2c"]

    public init(alg: String, kid: String? = nil, typ: String? = nil, cty: String? = nil, x5c: [String]? = nil) {
        self.alg = alg
        self.kid = kid
        self.typ = typ
        self.cty = cty
        self.x5c = x5c
    }
}

/// A JWS in compact serialization (RFC 7515), signed with PS256, ES256 or RS256.
public struct JWS: Sendable {
    public let header: JWSHeader
    public let payload: [UInt8]
    public let signature: [UInt8]
    /// The exact signing input: BASE64URL(header) "." BASE64URL(payload).
    let signingInput: [UInt8]

    /// Signs `payload`; `certificates` (leaf first) go into `x5c`.
    public static func sign(payload: [UInt8], key: PrivateKey, algorithm: SignatureAlgorithm,
                            kid: String? = nil, certificates: [Certificate]? = nil) throws(JOSEError) -> String {
        let header = JWSHeader(alg: algorithm.rawValue, kid: kid, x5c: certificates?.map(\.x5cEncoding))
        return try sign(payload: payload, key: key, header: header)
    }

    /// Signs with a header given in full (tests and fault injection set odd headers).
    public static func sign(payload: [UInt8], key: PrivateKey, header: JWSHeader) throws(JOSEError) -> String {
        guard let algorithm = SignatureAlgorithm(rawValue: header.alg) else { throw .unsupportedAlgorithm(header.alg) }
        let input = encodeHeader(header) + "." + Base64URL.encode(payload)
        let signature = try key.sign(Array(input.utf8), algorithm: algorithm)
        return input + "." + Base64URL.encode(signature)
    }

    /// Signs with `algorithm`, the header written as given, whatever its members say (fault injection: a header without
    /// `alg`, with another `alg` than the signature's, with `crit`).
    public static func sign(payload: [UInt8], key: PrivateKey, algorithm: SignatureAlgorithm, rawHeader: JSONValue) throws(JOSEError) -> String {
        let input = Base64URL.encode(JSONWriter.write(rawHeader)) + "." + Base64URL.encode(payload)
        let signature = try key.sign(Array(input.utf8), algorithm: algorithm)
        return input + "." + Base64URL.encode(signature)
    }

    /// Parses without verifying.
    public init(compact: String) throws(JOSEError) {
        let parts = try CompactParts(compact, count: 3)
        header = try decodeHeader(parts.header, as: JWSHeader.self, understood: [])
        payload = try parts.decode(1, "payload")
        signature = try parts.decode(2, "signature")
        signingInput = Array("\(parts.encoded[0]).\(parts.encoded[1])".utf8)
    }

    /// The header's algorithm if it is one of `allowed`; `none` and unknown names are refused.
    public func algorithm(allowed: Set<SignatureAlgorithm>) throws(JOSEError) -> SignatureAlgorithm {
        guard let algorithm = SignatureAlgorithm(rawValue: header.alg) else {
            throw header.alg.lowercased() == "none" ? .algorithmNotAllowed(header.alg) : .unsupportedAlgorithm(header.alg)
        }
        guard allowed.contains(algorithm) else { throw .algorithmNotAllowed(header.alg) }
        return algorithm
    }

    /// Verifies the signature with `key`.
    public func verify(with key: PublicKey, allowed: Set<SignatureAlgorithm> = Set(SignatureAlgorithm.allCases)) throws(JOSEError) {
        let algorithm = try algorithm(allowed: allowed)
        guard try key.verify(signature: signature, of: signingInput, algorithm: algorithm) else { throw .signatureInvalid }
    }

    /// The `x5c` certificates, leaf first.
    public func certificateChain() throws(JOSEError) -> [Certificate] {
        guard let x5c = header.x5c, !x5c.isEmpty else { throw .missingCertificateChain }
        var chain: [Certificate] = []
        for (index, encoded) in x5c.enumerated() {
            guard let der = Data(base64Encoded: encoded) else { throw .invalidCertificate(index: index, reason: "not standard base64") }
            do { chain.append(try Certificate(der: Array(der))) } catch {
                throw .invalidCertificate(index: index, reason: error.description)
            }
        }
        return chain
    }

    /// Verifies the `x5c` chain up to a trust anchor of `verifier`, then the signature with
    /// the leaf's key, as an SDK checks `acsSignedContent`. Returns the leaf.
    @discardableResult
    public func verifyWithCertificateChain(_ verifier: CertificateVerifier, allowed: Set<SignatureAlgorithm> = [.ps256, .es256],
                                           at time: Date = Date()) throws(JOSEError) -> Certificate {
        _ = try algorithm(allowed: allowed)
        let chain = try certificateChain()
        try verifier.verify(leaf: chain[0], intermediates: Array(chain.dropFirst()), at: time)
        try verify(with: chain[0].publicKey, allowed: allowed)
        return chain[0]
    }
}
