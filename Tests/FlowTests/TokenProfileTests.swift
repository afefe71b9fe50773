import EMV3DS
import EMVCrypto
import Foundation
import JOSE
import JSON
import Net
import SDKSimulator
import Testing
import Harness

private func json(_ response: HTTPResponse) throws -> JSONValue { try JSONReader.parse(response.body).value }

/// Decodes a token as adyen-ios's `Coder.decodeBase64` does (Foundation's `Data(base64Encoded:)`:
/// standard alphabet, padded) and adyen-android's `Base64.decode(token, Base64.DEFAULT)`.
private func decodeToken(_ token: String?) throws -> JSONValue {
    let text = try #require(token)
    let bytes = try #require(Data(base64Encoded: text), "not standard, padded base64: \(text.prefix(40))")
    return try JSONReader.parse(Array(bytes)).value
}

private func payment(_ pan: String, extra: [(key: String, value: JSONValue)] = []) -> [UInt8] {
    JSONWriter.write(.object([
        ("amount", .object([("value", .number("1099")), ("currency", .string("EUR"))])), ("reference", .string("order-1")),
        ("paymentMethod", .object([("type", .string("scheme")), ("number", .string(pan))])),
    ] + extra))
}

@Suite("Integration profile: the token style (Adyen's 3DS2 component)")
struct TokenProfileTests {
    @Test func theFingerprintTokenDecodesAsTheClientDecodesIt() async throws {
        try await withHarness { harness in
            let response = try await harness.post("/profiles/token/payments", payment("4000000000001000", extra: [("dsKeyType", .string("EC"))]))
            #expect(response.status == .ok, "\(response.bodyText)")
            let answer = try json(response)
            #expect(answer["resultCode"]?.stringValue == "IdentifyShopper")
            #expect(answer["merchantReference"]?.stringValue == "order-1")
            // adyen-ios ThreeDS2Action: type "threeDS2", subtype "fingerprint", token, paymentData, authorisationToken.
            let action = try #require(answer["action"])
            #expect(action["type"]?.stringValue == "threeDS2")
            #expect(action["subtype"]?.stringValue == "fingerprint")
            #expect(action["authorisationToken"] == action["paymentData"])
            let token = try decodeToken(action["token"]?.stringValue)
            // adyen-ios ThreeDS2Component.FingerprintToken's coding keys, and the transaction's id.
            #expect(token.objectMembers?.map(\.key) == ["directoryServerId", "directoryServerPublicKey", "directoryServerRootCertificates",
                                                        "threeDSMessageVersion", "threeDSServerTransID"])
            #expect(token["directoryServerId"]?.stringValue == "A000000003")
            #expect(token["threeDSMessageVersion"]?.stringValue == MessageVersion.latest.rawValue)
            #expect(token["threeDSServerTransID"]?.stringValue == action["paymentData"]?.stringValue)
            // The key: the base64 of the DS key's JWK, as in Adyen's test tokens.
            let keyText = try #require(token["directoryServerPublicKey"]?.stringValue)
            let keyJSON = try #require(Data(base64Encoded: keyText))
            let jwk = try JWK(json: keyJSON)
            #expect(jwk.kty == "EC" && jwk.kid == "A000000003-ds-ec")
            #expect(try PublicKey(jwk: jwk).jwk(kid: nil, use: nil) == pki.dsCertificate("A000000003", .ec).publicKey.jwk(kid: nil, use: nil))
            // The roots: a compact JWS, signed by a certificate under the DS CA root, whose payload lists the root.
            let rootList = try #require(token["directoryServerRootCertificates"]?.stringValue)
            let roots = try JWS(compact: rootList)
            let root = try pki.rootCertificate("A000000003")
            try roots.verifyWithCertificateChain(CertificateVerifier(trustAnchors: [root]))
            #expect(try JSONReader.parse(roots.payload).value["certificates"] == .array([.string(root.x5cEncoding)]))
        }
    }

    @Test func theClassicFlowUsesTheOlderActionTypes() async throws {
        try await withHarness { harness in
            let answer = try json(try await harness.post("/profiles/token/payments", payment("4000000000001000", extra: [("threeDS2Flow", .string("classic"))])))
            // adyen-ios ThreeDS2FingerprintAction as the "threeDS2Fingerprint" action decodes it: token and paymentData, no subtype.
            #expect(answer["action"]?["type"]?.stringValue == "threeDS2Fingerprint")
            #expect(answer["action"]?["subtype"] == nil)
            #expect(answer["action"]?["authorisationToken"] == nil)
            #expect(try decodeToken(answer["action"]?["token"]?.stringValue)["directoryServerId"]?.stringValue == "A000000003")
        }
    }

    @Test(arguments: [
        (IntegrationProfileCase.frictionless, "4000000000001000", [String](), "Authorised", "Y"),
        (.refused, "4000000000003006", [], "Refused", "N"),
        (.challenge, "4000000000110009", ["1234"], "Authorised", "Y"),
        (.cancelled, "4000000000110009", ["cancel"], "Cancelled", "N"),
    ])
    func eachOutcomeEndsInTheResultCodeTheClientExpects(_ label: IntegrationProfileCase, pan: String, answers: [String], resultCode: String,
                                                        transStatus: String) async throws {
        try await withHarness { harness in
            for (profile, style) in [(IntegrationProfile.token, DeviceDataStyle.android), (.token, .iosEC), (.tokenClassic, .rsa), (.tokenClassic, .android)] {
                let simulator = Simulator(client: harness.client, baseURL: harness.baseURL, profile: profile)
                let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", style), messageVersion: .v2_2_0, style: style)
                let run = try await simulator.run(sdk, pan: pan, answers: ChallengeAnswers(answers), challenger: harness.challenger,
                                                  style: style.channelStyle)
                // The simulator has checked the profile's last answer against the record; here, what the app sees.
                let last = run.authentication.record
                #expect(last["resultCode"]?.stringValue == resultCode, "\(label) \(profile) \(style): \(JSONWriter.string(last))")
                #expect(last["threeDS2Result"]?["transStatus"]?.stringValue == transStatus)
                #expect(run.final.transStatus == transStatus)
                let shifted = transStatus == "Y" ? "true" : "false"
                #expect(last["additionalData"]?["liabilityShift"]?.stringValue == shifted)
                #expect(last["pspReference"]?.stringValue == run.final.threeDSServerTransID)
            }
        }
    }

    @Test func aCardInNoRangeIsAuthorisedWithoutThreeDSecure() async throws {
        try await withHarness { harness in
            let answer = try json(try await harness.post("/profiles/token/payments", payment("1000000000001000")))
            #expect(answer["resultCode"]?.stringValue == "Authorised")
            #expect(answer["action"] == nil)
            #expect(answer["additionalData"]?["threeDOffered"]?.stringValue == "false")
        }
    }

    @Test func theComponentsOwnFingerprintCallAnswersTheChallengeAction() async throws {
        try await withHarness { harness in
            let started = try json(try await harness.post("/profiles/token/payments", payment("4000000000110009")))
            let action = try #require(started["action"])
            #expect(action["authorisationToken"] == action["paymentData"])
            let token = try decodeToken(action["token"]?.stringValue)
            let version = try #require(token["threeDSMessageVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)))
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .rsa), messageVersion: version, style: .rsa)
            let fingerprint = Data(JSONWriter.write(.object([
                ("sdkAppID", .string(sdk.sdkAppID)), ("sdkEncData", .string(sdk.deviceData)), ("sdkEphemPubKey", sdk.ephemeralPublicKeyJSON),
                ("sdkReferenceNumber", .string(SimulatedSDKTransaction.sdkReferenceNumber)), ("sdkTransID", .string(sdk.sdkTransID)),
            ]))).base64EncodedString()
            // adyen-android encodes with Base64.DEFAULT: lines of 76 characters and a final newline.
            let wrapped = stride(from: 0, to: fingerprint.count, by: 76).map { start in
                String(fingerprint.dropFirst(start).prefix(76))
            }.joined(separator: "\n") + "\n"
            let body = JSONValue.object([("fingerprintResult", .string(wrapped)), ("paymentData", action["paymentData"] ?? .null)])
            // adyen-ios posts under checkoutshopper/, adyen-android directly under its environment's URL.
            let answer = try json(try await harness.post("/profiles/token/checkoutshopper/v1/submitThreeDS2Fingerprint", JSONWriter.write(body)))
            #expect(answer["type"]?.stringValue == "action", "\(answer)")
            #expect(answer["action"]?["subtype"]?.stringValue == "challenge")
            // The component's result after the challenge carries this authorisationToken, not the paymentData.
            #expect(answer["action"]?["authorisationToken"] == action["paymentData"])
            // adyen-ios ThreeDS2Component.ChallengeToken's coding keys.
            let challenge = try decodeToken(answer["action"]?["token"]?.stringValue)
            for key in ["acsReferenceNumber", "acsSignedContent", "acsTransID", "messageVersion", "threeDSServerTransID"] {
                #expect(challenge[key]?.stringValue != nil, "\(key) in \(challenge)")
            }
            // The same fingerprint again: the payment has been fingerprinted.
            let again = try await harness.post("/profiles/token/v1/submitThreeDS2Fingerprint", JSONWriter.write(body))
            #expect(again.status.code == 422)
            #expect(try json(again)["message"]?.stringValue?.contains("fingerprinted already") == true)
        }
    }

    @Test func theOutcomeIsTheRReqsNotWhatTheAppClaims() async throws {
        try await withHarness { harness in
            // A challenge the cardholder fails (RReq N), then an app that claims Y, twice, with only the authorisationToken.
            let run = try await runTransaction(harness, pan: "4000000000110009", answers: ["0000", "0000", "0000"])
            let id = try #require(run.final.threeDSServerTransID)
            #expect(run.final.transStatus == "N", "\(run.summary)")
            let claim = Data(JSONWriter.write(.object([("transStatus", .string("Y")), ("authorisationToken", .string(id))]))).base64EncodedString()
            let body = JSONValue.object([("details", .object([("threeDSResult", .string(claim))]))])
            for _ in 1...2 {
                let answer = try json(try await harness.post("/profiles/token/payments/details", JSONWriter.write(body)))
                #expect(answer["resultCode"]?.stringValue == "Refused")
            }
            let record = try json(try await harness.get("/3ds-server/transactions/" + id))
            let warning = JSONValue.string("the app's challenge result says transStatus Y; the RReq said N")
            #expect(record["warnings"]?.arrayValue?.filter { $0 == warning }.count == 1, "\(record["warnings"] ?? .null)")
        }
    }

    @Test func aFingerprintTheAReqCannotCarryLeavesThePaymentWaiting() async throws {
        try await withHarness { harness in
            let started = try json(try await harness.post("/profiles/token/payments", payment("4000000000001000")))
            let paymentData = try #require(started["action"]?["paymentData"])
            func submit(_ fingerprint: JSONValue) async throws -> HTTPResponse {
                let body = JSONValue.object([("fingerprintResult", .string(Data(JSONWriter.write(fingerprint)).base64EncodedString())), ("paymentData", paymentData)])
                return try await harness.post("/profiles/token/v1/submitThreeDS2Fingerprint", JSONWriter.write(body))
            }
            let incomplete = try await submit(.object([("sdkAppID", .string("x"))]))
            #expect(incomplete.status.code == 400)
            #expect(try json(incomplete)["message"]?.stringValue?.contains("sdkTransID is required") == true, "\(incomplete.bodyText)")
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .rsa), messageVersion: .latest, style: .rsa)
            let complete = try await submit(.object([
                ("sdkAppID", .string(sdk.sdkAppID)), ("sdkEncData", .string(sdk.deviceData)), ("sdkEphemPubKey", sdk.ephemeralPublicKeyJSON),
                ("sdkReferenceNumber", .string(SimulatedSDKTransaction.sdkReferenceNumber)), ("sdkTransID", .string(sdk.sdkTransID)),
            ]))
            #expect(complete.status == .ok, "\(complete.bodyText)")
            #expect(try json(complete)["type"]?.stringValue == "completed")
        }
    }

    @Test(arguments: [
        ("/profiles/token/payments", #"{"amount":{"value":1,"currency":"EUR"}}"#, 422, "paymentMethod.number is required"),
        ("/profiles/token/payments", #"{"paymentMethod":{"number":"4000000000001000"},"amount":{"value":1,"currency":"XXX"}}"#, 422, "amount.currency must be"),
        ("/profiles/token/payments", #"{"paymentMethod":{"number":"4000000000001000"},"amount":{"value":1.5,"currency":"EUR"}}"#, 422, "amount.value must be"),
        ("/profiles/token/payments", #"{"paymentMethod":{"number":"4000000000001000"}}"#, 422, "amount is required"),
        ("/profiles/token/payments", #"{"paymentMethod":{"number":"4000000000001000","expiryMonth":"ab","expiryYear":"2030"},"amount":{"value":1,"currency":"EUR"}}"#, 422, "expiryMonth and expiryYear must be MM and YYYY"),
        ("/profiles/token/payments", #"{"paymentMethod":{"number":"4000000000001000"},"amount":{"value":1,"currency":"EUR"},"threeDS2Flow":"other"}"#, 422, "threeDS2Flow must be compact or classic"),
        ("/profiles/token/payments", #"{"paymentMethod":{"number":"4000000000001000"},"amount":{"value":1,"currency":"EUR"},"threeDS2RequestData":{"messageVersion":"2.0.1"}}"#, 422, "is not one the card's range supports"),
        ("/profiles/token/payments", #"{"paymentMethod":{"number":"4000000000001000"},"amount":{"value":1,"currency":"EUR"},"dsKeyType":"DSA"}"#, 422, "dsKeyType must be RSA or EC"),
        ("/profiles/token/payments", #"{"paymentMethod":{"number":"40"},"amount":{"value":1,"currency":"EUR"}}"#, 400, "acctNumber must be 13-19 digits"),
        ("/profiles/token/payments", "nope", 400, "body is not JSON"),
        ("/profiles/token/payments/details", #"{"paymentData":"x"}"#, 422, "details is required"),
        ("/profiles/token/payments/details", #"{"details":{"threeds2.fingerprint":"eyJ9"},"paymentData":"x"}"#, 422, "not the base64 of a JSON object"),
        ("/profiles/token/payments/details", #"{"details":{"threeds2.fingerprint":"e30="}}"#, 422, "paymentData is required"),
        ("/profiles/token/payments/details", #"{"details":{"threeds2.fingerprint":"e30="},"paymentData":"no-such"}"#, 422, "no payment no-such"),
        ("/profiles/token/payments/details", #"{"details":{"other":"x"}}"#, 422, "details holds none of"),
        ("/profiles/token/v1/submitThreeDS2Fingerprint", #"{}"#, 422, "fingerprintResult is required"),
    ])
    func badInputIsAnErrorInTheClientsShape(path: String, body: String, status: Int, message: String) async throws {
        try await withHarness { harness in
            let response = try await harness.post(path, Array(body.utf8))
            #expect(response.status.code == status, "\(response.bodyText)")
            // Adyen's error shape: status, errorCode, message, errorType.
            let error = try json(response)
            #expect(error["status"]?.numberText == String(status))
            #expect(error["errorType"]?.stringValue == "validation")
            #expect(error["message"]?.stringValue?.contains(message) == true, "\(response.bodyText)")
        }
    }
}

enum IntegrationProfileCase: String, CustomTestStringConvertible, Sendable {
    case frictionless, refused, challenge, cancelled
    var testDescription: String { rawValue }
}
