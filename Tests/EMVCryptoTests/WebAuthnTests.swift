import EMVCrypto
import JOSE
import JSON
import Testing

/// The WebAuthn pieces SPC needs (CBOR, authenticator data, ES256 COSE keys, the assertion's checks), each refusal
/// with its part named. The layout is WebAuthn Level 3 §6.1 and §6.5; CBOR is RFC 8949, COSE RFC 9053.
@Suite("WebAuthn for Secure Payment Confirmation")
struct WebAuthnTests {
    let rpID = "localhost", origin = "http://localhost:8080"

    @Test func cborRoundTripsWhatAnAuthenticatorWrites() throws {
        let item = CBOR.map([.init(.text("fmt"), .text("none")), .init(.int(-7), .bytes([1, 2, 3])), .init(.int(1000), .array([.bool(true), .null, .int(-300)]))])
        #expect(try CBOR.decode(item.encoded) == item)
        #expect(CBOR.int(-7).encoded == [0x26] && CBOR.int(24).encoded == [0x18, 24])
    }

    @Test(arguments: [
        ([0x9F, 0x01, 0xFF] as [UInt8], "indefinite"),      // an indefinite-length array
        ([0x5A, 0xFF, 0xFF, 0xFF, 0xFF], "past the end"),   // a byte string claiming 4 GB
        ([0xC1, 0x00], "tag"),
        ([0x01, 0x02], "after the item"),
        (Array(repeating: 0x81, count: 40) + [0x00], "nested"),
    ])
    func cborRefusesWhatWebAuthnDoesNotUse(_ bytes: [UInt8], _ reason: String) {
        #expect(throws: CBOR.DecodingError.self) { try CBOR.decode(bytes) }
        do { _ = try CBOR.decode(bytes) } catch { #expect(error.reason.contains(reason), "\(error)") }
    }

    @Test func aRegistrationGivesTheCredentialAndItsKey() throws {
        let authenticator = try SoftwareAuthenticator()
        let (clientData, attestation) = authenticator.registration(rpID: rpID, origin: origin, challenge: [1, 2, 3])
        let credential = try WebAuthnCredential(clientDataJSON: clientData, attestationObject: attestation, origin: origin, rpID: rpID)
        #expect(credential.id == authenticator.credentialID && credential.rpID == rpID)
        #expect(credential.publicKey == authenticator.key.publicKey)
        // Another relying party's, or another page's.
        #expect(throws: WebAuthnError.self) { try WebAuthnCredential(clientDataJSON: clientData, attestationObject: attestation, origin: origin, rpID: "example.com") }
        #expect(throws: WebAuthnError.self) { try WebAuthnCredential(clientDataJSON: clientData, attestationObject: attestation, origin: "http://localhost:1", rpID: rpID) }
    }

    @Test func anAssertionVerifiesOnlyForWhatWasToBeConfirmed() throws {
        let authenticator = try SoftwareAuthenticator()
        let credential = WebAuthnCredential(id: authenticator.credentialID, publicKey: authenticator.key.publicKey, rpID: rpID)
        let expected = SPCAssertion.Expectation(challenge: "Y2hhbGxlbmdlLW9mLXRoZS1hY3MtZm9yLXRoaXMtdHJhbnNhY3Rpb24", payeeOrigin: "https://merchant.example",
                                                currency: "EUR", value: "12.34", displayName: "Card")
        func payment(value: String = "12.34", payee: String = "https://merchant.example", card: String = "Card") -> JSONValue {
            .object([("rpId", .string(rpID)), ("payeeOrigin", .string(payee)), ("total", .object([("value", .string(value)), ("currency", .string("EUR"))])),
                     ("instrument", .object([("displayName", .string(card)), ("icon", .string("data:image/png;base64,AA"))]))])
        }
        let good = try authenticator.assertion(rpID: rpID, origin: "https://merchant.example", challenge: expected.challenge, payment: payment())
        try good.verify(with: credential, expecting: expected)
        // It survives the trip as JSON, as a string too (threeDSReqAuthData).
        try SPCAssertion(json: good.json).verify(with: credential, expecting: expected)
        try SPCAssertion(json: .string(String(decoding: JSONWriter.write(good.json), as: UTF8.self))).verify(with: credential, expecting: expected)

        func refusal(_ assertion: SPCAssertion) -> String? {
            do { try assertion.verify(with: credential, expecting: expected); return nil } catch { return error.part }
        }
        #expect(refusal(try authenticator.assertion(rpID: rpID, origin: "x", challenge: "other", payment: payment())) == "clientDataJSON.challenge")
        #expect(refusal(try authenticator.assertion(rpID: rpID, origin: "x", challenge: expected.challenge, payment: payment(value: "99.00"))) == "clientDataJSON.payment.total")
        #expect(refusal(try authenticator.assertion(rpID: rpID, origin: "x", challenge: expected.challenge, payment: payment(payee: "https://evil.example"))) == "clientDataJSON.payment.payeeOrigin")
        #expect(refusal(try authenticator.assertion(rpID: "example.com", origin: "x", challenge: expected.challenge, payment: payment())) == "authenticatorData.rpIdHash")
        var flipped = good.signature
        flipped[flipped.count - 1] ^= 1
        #expect(refusal(SPCAssertion(credentialID: good.credentialID, authenticatorData: good.authenticatorData, clientDataJSON: good.clientDataJSON, signature: flipped)) == "signature")
        let other = try SoftwareAuthenticator().assertion(rpID: rpID, origin: "x", challenge: expected.challenge, payment: payment())
        #expect(refusal(other) == "rawId")
        // What the browser showed is part of what is signed: without it, or with another card shown, no verification.
        #expect(refusal(try authenticator.assertion(rpID: rpID, origin: "x", challenge: expected.challenge, payment: .object([]))) == "clientDataJSON.payment.rpId")
        #expect(refusal(try authenticator.assertion(rpID: rpID, origin: "x", challenge: expected.challenge, payment: .null)) == "clientDataJSON.payment")
        #expect(refusal(try authenticator.assertion(rpID: rpID, origin: "x", challenge: expected.challenge, payment: payment(card: "Other"))) == "clientDataJSON.payment.instrument.displayName")
        // SPC verifies the cardholder: an authenticator that did not (UV unset) does not do.
        #expect(refusal(try authenticator.assertion(rpID: rpID, origin: "x", challenge: expected.challenge, payment: payment(), userVerified: false)) == "authenticatorData.flags")
    }

    @Test func onlyES256KeysAreTaken() throws {
        let rsaLike = CBOR.map([.init(.int(1), .int(3)), .init(.int(3), .int(-257))])
        let authData = AuthenticatorData.make(rpID: rpID, flags: AuthenticatorData.userPresent, signCount: 0, credential: (Array(repeating: 7, count: 16), rsaLike))
        let attestation = CBOR.map([.init(.text("fmt"), .text("none")), .init(.text("attStmt"), .map([])), .init(.text("authData"), .bytes(authData))])
        let clientData = JSONWriter.write(.object([("type", .string("webauthn.create")), ("origin", .string(origin))]))
        #expect { try WebAuthnCredential(clientDataJSON: clientData, attestationObject: attestation.encoded, origin: origin, rpID: rpID) } throws: { error in
            (error as? WebAuthnError)?.part == "credentialPublicKey"
        }
    }
}
