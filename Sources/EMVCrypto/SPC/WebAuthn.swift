public import JOSE
public import JSON

/// Why a WebAuthn registration or an SPC assertion is refused: the part, and what is wrong with it.
public struct WebAuthnError: Error, Equatable, CustomStringConvertible {
    public let part: String
    public let reason: String
    public init(_ part: String, _ reason: String) { (self.part, self.reason) = (part, reason) }
    public var description: String { "\(part): \(reason)" }
}

/// Authenticator data (WebAuthn Level 3 §6.1): the RP ID's hash, the flags, the signature counter,
/// and at registration the credential's id and COSE public key.
public struct AuthenticatorData: Sendable {
    public let bytes: [UInt8]
    public let rpIDHash: [UInt8]
    public let flags: UInt8
    public let signCount: UInt32
    /// At registration (flag AT): the credential's id and its public key as COSE.
    public let attestedCredential: (id: [UInt8], publicKey: CBOR)?

    public static let userPresent: UInt8 = 0x01, userVerified: UInt8 = 0x04, attestedCredentialIncluded: UInt8 = 0x40

    public init(_ bytes: [UInt8]) throws(WebAuthnError) {
        guard bytes.count >= 37 else { throw WebAuthnError("authenticatorData", "is \(bytes.count) bytes; at least 37 (rpIdHash, flags, signCount)") }
        self.bytes = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        guard flags & Self.attestedCredentialIncluded != 0 else { attestedCredential = nil; return }
        // aaguid (16 bytes), the id's length (2), the id, then the COSE key.
        guard bytes.count >= 55 else { throw WebAuthnError("authenticatorData", "ends inside the attested credential data") }
        let idLength = Int(bytes[53]) << 8 | Int(bytes[54])
        guard (16...1023).contains(idLength), bytes.count >= 55 + idLength else {
            throw WebAuthnError("authenticatorData", "credential id of \(idLength) bytes does not fit (16-1023 bytes)")
        }
        do {
            let (key, _) = try CBOR.decodePrefix(bytes, at: 55 + idLength)
            attestedCredential = (Array(bytes[55..<55 + idLength]), key)
        } catch {
            throw WebAuthnError("authenticatorData", "credentialPublicKey: \(error)")
        }
    }

    /// Authenticator data as an authenticator writes it.
    public static func make(rpID: String, flags: UInt8, signCount: UInt32, credential: (id: [UInt8], publicKey: CBOR)? = nil) -> [UInt8] {
        var bytes = DigestAlgorithm.sha256.hash(Array(rpID.utf8))
        bytes.append(credential == nil ? flags : flags | attestedCredentialIncluded)
        bytes += (0..<4).reversed().map { UInt8(signCount >> ($0 * 8) & 0xFF) }
        if let credential {
            bytes += [UInt8](repeating: 0, count: 16)  // aaguid: none
            bytes += [UInt8(credential.id.count >> 8), UInt8(credential.id.count & 0xFF)] + credential.id + credential.publicKey.encoded
        }
        return bytes
    }
}

/// A credential the issuer enrolled for Secure Payment Confirmation: a WebAuthn public key credential
/// (ES256, P-256) of one card, usable from any merchant's page because it was made with the
/// `payment` extension.
public struct WebAuthnCredential: Sendable {
    public let id: [UInt8]
    public let publicKey: PublicKey
    /// The issuer's domain the credential is scoped to: `webAuthnCredList[].rpID`.
    public let rpID: String

    public init(id: [UInt8], publicKey: PublicKey, rpID: String) {
        self.id = id
        self.publicKey = publicKey
        self.rpID = rpID
    }

    /// The credential of a registration (`navigator.credentials.create`) made at `origin` for `rpID`.
    /// The attestation statement is not verified (the harness trusts its enrolment page, as an RP
    /// asking for attestation "none" does); the client data, RP ID hash, flags and key are.
    public init(clientDataJSON: [UInt8], attestationObject: [UInt8], origin: String, rpID: String) throws(WebAuthnError) {
        let clientData = try Self.clientData(clientDataJSON, type: "webauthn.create")
        guard clientData["origin"]?.stringValue == origin else {
            throw WebAuthnError("clientDataJSON.origin", "\"\(clientData["origin"]?.stringValue ?? "")\" is not the enrolment page's origin \(origin)")
        }
        let attestation: CBOR
        do { attestation = try CBOR.decode(attestationObject) } catch { throw WebAuthnError("attestationObject", error.description) }
        guard let authDataBytes = attestation["authData"]?.bytesValue else { throw WebAuthnError("attestationObject", "has no authData byte string") }
        let authData = try AuthenticatorData(authDataBytes)
        guard authData.rpIDHash == DigestAlgorithm.sha256.hash(Array(rpID.utf8)) else {
            throw WebAuthnError("authenticatorData.rpIdHash", "is not the SHA-256 of \(rpID)")
        }
        guard authData.flags & AuthenticatorData.userPresent != 0 else { throw WebAuthnError("authenticatorData.flags", "user presence (UP) is not set") }
        guard let (id, coseKey) = authData.attestedCredential else { throw WebAuthnError("authenticatorData", "has no attested credential (flag AT)") }
        self.init(id: id, publicKey: try Self.publicKey(cose: coseKey), rpID: rpID)
    }

    /// The challenge a registration's client data answers (`clientDataJSON.challenge`, base64url): the relying party
    /// checks it is one it issued (WebAuthn Level 3, §7.1, step 8).
    public static func challenge(ofRegistration clientDataJSON: [UInt8]) throws(WebAuthnError) -> [UInt8] {
        let clientData = try clientData(clientDataJSON, type: "webauthn.create")
        guard let text = clientData["challenge"]?.stringValue, let challenge = try? Base64URL.decode(text), !challenge.isEmpty else {
            throw WebAuthnError("clientDataJSON.challenge", "is missing or not base64url")
        }
        return challenge
    }

    /// An EC2 P-256 ES256 COSE key (RFC 9053): kty 2, alg -7, crv 1, x and y of 32 bytes.
    static func publicKey(cose key: CBOR) throws(WebAuthnError) -> PublicKey {
        guard key[1]?.intValue == 2, key[3]?.intValue == -7, key[-1]?.intValue == 1,
              let x = key[-2]?.bytesValue, let y = key[-3]?.bytesValue, x.count == 32, y.count == 32 else {
            throw WebAuthnError("credentialPublicKey", "is not an ES256 P-256 COSE key (kty 2, alg -7, crv 1, x and y of 32 bytes); only ES256 is supported")
        }
        do { return try PublicKey(jwk: JWK(kty: "EC", crv: "P-256", x: Base64URL.encode(x), y: Base64URL.encode(y))) } catch {
            throw WebAuthnError("credentialPublicKey", "is not a point on P-256: \(error)")
        }
    }

    /// The client data of a ceremony of `type`, parsed.
    static func clientData(_ bytes: [UInt8], type: String) throws(WebAuthnError) -> JSONValue {
        guard let json = try? JSONReader.parse(bytes).value, json.objectMembers != nil else {
            throw WebAuthnError("clientDataJSON", "is not a JSON object")
        }
        guard json["type"]?.stringValue == type else { throw WebAuthnError("clientDataJSON.type", "is \"\(json["type"]?.stringValue ?? "")\", not \(type)") }
        return json
    }
}
