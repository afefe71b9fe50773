public import JOSE
public import JSON

/// The result of Secure Payment Confirmation as the 3DS Requestor's page got it from the browser
/// (`PaymentResponse.details`, a PublicKeyCredential) and the second AReq carries it: in
/// `threeDSRequestorAuthenticationInfo`, `threeDSReqAuthMethod` 09, `threeDSReqAuthData` "the Assertion
/// Data ... as a JSON object returned by the SPC API" (EMVCo SB 279, Table A.12). Binary members are base64url,
/// as PublicKeyCredential.toJSON() writes them; the object may come as a JSON string.
public struct SPCAssertion: Sendable {
    public let credentialID: [UInt8]
    public let authenticatorData: [UInt8]
    public let clientDataJSON: [UInt8]
    public let signature: [UInt8]

    public init(credentialID: [UInt8], authenticatorData: [UInt8], clientDataJSON: [UInt8], signature: [UInt8]) {
        self.credentialID = credentialID
        self.authenticatorData = authenticatorData
        self.clientDataJSON = clientDataJSON
        self.signature = signature
    }

    public init(json value: JSONValue) throws(WebAuthnError) {
        var json = value
        if let text = value.stringValue {
            guard let parsed = try? JSONReader.parse(Array(text.utf8)).value else { throw WebAuthnError("threeDSReqAuthData", "is a string that does not hold a JSON object") }
            json = parsed
        }
        func bytes(_ value: JSONValue?, _ name: String) throws(WebAuthnError) -> [UInt8] {
            guard let text = value?.stringValue else { throw WebAuthnError("threeDSReqAuthData.\(name)", "is required (base64url)") }
            do { return try Base64URL.decodeLeniently(text, part: name) } catch { throw WebAuthnError("threeDSReqAuthData.\(name)", "is not base64url") }
        }
        guard let response = json["response"], response.objectMembers != nil else {
            throw WebAuthnError("threeDSReqAuthData.response", "is required: the PublicKeyCredential's AuthenticatorAssertionResponse")
        }
        credentialID = try bytes(json["rawId"] ?? json["id"], "rawId")
        authenticatorData = try bytes(response["authenticatorData"], "response.authenticatorData")
        clientDataJSON = try bytes(response["clientDataJSON"], "response.clientDataJSON")
        signature = try bytes(response["signature"], "response.signature")
    }

    /// As PublicKeyCredential.toJSON() writes it.
    public var json: JSONValue {
        .object([("id", .string(Base64URL.encode(credentialID))), ("rawId", .string(Base64URL.encode(credentialID))), ("type", .string("public-key")),
                 ("response", .object([("authenticatorData", .string(Base64URL.encode(authenticatorData))),
                                       ("clientDataJSON", .string(Base64URL.encode(clientDataJSON))),
                                       ("signature", .string(Base64URL.encode(signature)))]))])
    }

    /// What the ACS asked the browser to confirm (`spcTransData`), which the assertion must have signed.
    public struct Expectation: Sendable {
        public var challenge: String
        public var payeeOrigin: String?
        public var currency: String
        public var value: String
        public var displayName: String
        public init(challenge: String, payeeOrigin: String?, currency: String, value: String, displayName: String) {
            (self.challenge, self.payeeOrigin, self.currency, self.value, self.displayName) = (challenge, payeeOrigin, currency, value, displayName)
        }
    }

    /// Checks the assertion against the enrolled credential and what was to be confirmed (the WebAuthn
    /// verification steps, with SPC's client data: type "payment.get" and the `payment` member).
    public func verify(with credential: WebAuthnCredential, expecting expected: Expectation) throws(WebAuthnError) {
        guard credentialID == credential.id else { throw WebAuthnError("rawId", "is not the credential enrolled for the card") }
        let clientData = try WebAuthnCredential.clientData(clientDataJSON, type: "payment.get")
        guard clientData["challenge"]?.stringValue == expected.challenge else {
            throw WebAuthnError("clientDataJSON.challenge", "is not spcTransData.challenge: the assertion answers another transaction")
        }
        // What the browser showed the cardholder, signed with the challenge (the SPC specification's CollectedClientPaymentData).
        guard let payment = clientData["payment"], payment.objectMembers != nil else {
            throw WebAuthnError("clientDataJSON.payment", "is required: an SPC assertion signs what the browser showed")
        }
        guard payment["rpId"]?.stringValue == credential.rpID else {
            throw WebAuthnError("clientDataJSON.payment.rpId", "\"\(payment["rpId"]?.stringValue ?? "")\" is not the credential's \(credential.rpID)")
        }
        if let payeeOrigin = expected.payeeOrigin, payment["payeeOrigin"]?.stringValue != payeeOrigin {
            throw WebAuthnError("clientDataJSON.payment.payeeOrigin", "\"\(payment["payeeOrigin"]?.stringValue ?? "")\" is not the AReq's payeeOrigin \(payeeOrigin)")
        }
        let total = payment["total"]
        guard total?["currency"]?.stringValue == expected.currency, total?["value"]?.stringValue == expected.value else {
            throw WebAuthnError("clientDataJSON.payment.total", "\(total?["value"]?.stringValue ?? "?") \(total?["currency"]?.stringValue ?? "?") is not the amount to confirm, \(expected.value) \(expected.currency)")
        }
        guard payment["instrument"]?["displayName"]?.stringValue == expected.displayName else {
            throw WebAuthnError("clientDataJSON.payment.instrument.displayName", "is not spcTransData.displayName \"\(expected.displayName)\"")
        }
        let authData = try AuthenticatorData(authenticatorData)
        guard authData.rpIDHash == DigestAlgorithm.sha256.hash(Array(credential.rpID.utf8)) else {
            throw WebAuthnError("authenticatorData.rpIdHash", "is not the SHA-256 of \(credential.rpID)")
        }
        // SPC verifies the cardholder (the browser asks the authenticator for user verification): UP and UV.
        guard authData.flags & AuthenticatorData.userPresent != 0 else { throw WebAuthnError("authenticatorData.flags", "user presence (UP) is not set") }
        guard authData.flags & AuthenticatorData.userVerified != 0 else { throw WebAuthnError("authenticatorData.flags", "user verification (UV) is not set") }
        guard let raw = ECDSASignature.raw(fromDER: signature),
              (try? credential.publicKey.verify(signature: raw, of: authenticatorData + DigestAlgorithm.sha256.hash(clientDataJSON), algorithm: .es256)) == true else {
            throw WebAuthnError("signature", "does not verify with the enrolled credential's key over authenticatorData and the hash of clientDataJSON")
        }
    }
}

/// A software authenticator: what the simulator (and the tests) enrol and confirm with, in place of
/// a browser's. It writes what a CTAP2 authenticator and the browser would.
public struct SoftwareAuthenticator: Sendable {
    public let key: PrivateKey
    public let credentialID: [UInt8]

    public init() throws(JOSEError) {
        key = try PrivateKey.generateP256()
        credentialID = randomBytes(32)
    }

    /// The COSE form of the public key.
    var coseKey: CBOR {
        let jwk = key.publicKey.jwk()
        let x = (try? Base64URL.decode(jwk.x ?? "")) ?? [], y = (try? Base64URL.decode(jwk.y ?? "")) ?? []
        return .map([.init(.int(1), .int(2)), .init(.int(3), .int(-7)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(x)), .init(.int(-3), .bytes(y))])
    }

    /// A registration's `clientDataJSON` and `attestationObject` (format "none").
    public func registration(rpID: String, origin: String, challenge: [UInt8]) -> (clientDataJSON: [UInt8], attestationObject: [UInt8]) {
        let clientData = JSONWriter.write(.object([("type", .string("webauthn.create")), ("challenge", .string(Base64URL.encode(challenge))),
                                                   ("origin", .string(origin)), ("crossOrigin", .bool(false))]))
        let authData = AuthenticatorData.make(rpID: rpID, flags: AuthenticatorData.userPresent | AuthenticatorData.userVerified, signCount: 0,
                                              credential: (credentialID, coseKey))
        let attestation = CBOR.map([.init(.text("fmt"), .text("none")), .init(.text("attStmt"), .map([])), .init(.text("authData"), .bytes(authData))])
        return (clientData, attestation.encoded)
    }

    /// What a browser's SPC signs for `spcTransData` (the ARes S's) shown on `topOrigin`: the challenge (another one for a
    /// faulty page), and the client data's `payment` member with the rpId, payee, total and card the browser showed.
    public func assertion(confirming spcTransData: JSONValue, rpID: String, topOrigin: String, challenge: String? = nil) throws(JOSEError) -> SPCAssertion {
        let data = spcTransData
        let payment = JSONValue.object([("rpId", .string(rpID)), ("topOrigin", .string(topOrigin)), ("payeeOrigin", data["payeeOrigin"] ?? .null),
                                        ("total", .object([("value", data["value"] ?? .null), ("currency", data["currency"] ?? .null)])),
                                        ("instrument", .object([("displayName", data["displayName"] ?? .null), ("icon", data["icon"] ?? .null)]))])
        return try assertion(rpID: rpID, origin: topOrigin, challenge: challenge ?? data["challenge"]?.stringValue ?? "", payment: payment)
    }

    /// The assertion a browser's SPC returns for `payment` (the `payment` member of the client data; `.null` leaves it
    /// out); `userVerified` false plays an authenticator that did not verify the cardholder.
    public func assertion(rpID: String, origin: String, challenge: String, payment: JSONValue, userVerified: Bool = true) throws(JOSEError) -> SPCAssertion {
        let clientData = JSONWriter.write(.object(omittingAbsent: [("type", .string("payment.get")), ("challenge", .string(challenge)), ("origin", .string(origin)),
                                                                   ("crossOrigin", .bool(false)), ("payment", payment == .null ? nil : payment)]))
        let authData = AuthenticatorData.make(rpID: rpID, flags: AuthenticatorData.userPresent | (userVerified ? AuthenticatorData.userVerified : 0), signCount: 1)
        let raw = try key.sign(authData + DigestAlgorithm.sha256.hash(clientData), algorithm: .es256)
        guard let der = ECDSASignature.der(fromRaw: raw) else { throw .crypto("ECDSA signature conversion") }
        return SPCAssertion(credentialID: credentialID, authenticatorData: authData, clientDataJSON: clientData, signature: der)
    }
}
