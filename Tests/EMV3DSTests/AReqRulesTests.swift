import JSON
import Testing
@testable import EMV3DS

/// A complete, valid app-channel AReq as a 3DS Server sends it.
func validAReq(version: String = "2.2.0", replacing changes: [String: JSONValue?] = [:]) -> JSONValue {
    var members: [(key: String, value: JSONValue)] = [
        ("messageType", .string("AReq")), ("messageVersion", .string(version)), ("messageCategory", .string("01")),
        ("deviceChannel", .string("01")), ("threeDSServerTransID", .string("8a880dc0-d2d2-4067-bcb1-b08d1690b26e")),
        ("threeDSServerRefNumber", .string("3DS_LOA_SER_HARN_020200_00001")), ("threeDSServerURL", .string("https://localhost:8443/3ds-server/rreq")),
        ("threeDSRequestorID", .string("harness-requestor")), ("threeDSRequestorName", .string("Harness Shop")),
        ("threeDSRequestorURL", .string("https://shop.example")), ("threeDSRequestorAuthenticationInd", .string("01")),
        ("acctNumber", .string("4000000000001000")), ("cardExpiryDate", .string("3012")),
        ("acquirerBIN", .string("400551")), ("acquirerMerchantID", .string("merchant-1")), ("mcc", .string("5411")),
        ("merchantCountryCode", .string("840")), ("merchantName", .string("Harness Shop")),
        ("purchaseAmount", .string("1099")), ("purchaseCurrency", .string("978")), ("purchaseExponent", .string("2")),
        ("purchaseDate", .string("20261121120000")),
        ("sdkAppID", .string("5cd8c5e9-7d0c-4a1f-a0d4-2b1a1d8c7f10")), ("sdkTransID", .string("b2385523-a66c-4907-ac3c-91848e8c0067")),
        ("sdkReferenceNumber", .string("3DS_LOA_SDK_HARN_020200_00001")), ("sdkMaxTimeout", .string("05")),
        ("sdkEphemPubKey", .object([("kty", .string("EC")), ("crv", .string("P-256")),
                                    ("x", .string("C1PL42i6kmNkM61aupEAgLJ4gF1ZRzcV7lqo1TG0mL4")),
                                    ("y", .string("cNToWLSdcFQKG--PGVEUQrIHP8w6TcRyj0pyFx4-ZMc"))])),
        ("deviceRenderOptions", .object([("sdkInterface", .string("03")), ("sdkUiType", .array([.string("01")]))])),
        ("sdkEncData", .string("eyJhbGciOiJSU0EtT0FFUC0yNTYiLCJlbmMiOiJBMTI4Q0JDLUhTMjU2In0.a.b.c.d")),
    ]
    if version == "2.3.1" {
        // 2.3.1 requires the acquirer's country and, for the app, the SDK type.
        members += [("acquirerCountryCode", .string("840")), ("acquirerCountryCodeSource", .string("01")), ("sdkType", .string("01")),
                    ("defaultSdkType", .object([("sdkVariant", .string("01"))]))]
    }
    for (key, value) in changes {
        if let index = members.firstIndex(where: { $0.key == key }) {
            if let value { members[index].value = value } else { members.remove(at: index) }
        } else if let value {
            members.append((key, value))
        }
    }
    return .object(members)
}

@Suite("AReq field rules")
struct AReqRulesTests {
    @Test(arguments: MessageVersion.allCases)
    func aCompleteAppAReqIsValid(version: MessageVersion) {
        #expect(AReqRules.fromThreeDSServer.validate(validAReq(version: version.rawValue), version: version) == [])
    }

    /// 2.3.1 defines a Fully Qualified URL as an absolute URL with scheme https (EMVCo SB 279 p.16, the amended
    /// definition; clearhaus's 2.3.1 AReq table gives threeDSRequestorURL the format urlHttps): the requestor's web
    /// site at http is 203 there, and still taken in 2.1.0 and 2.2.0, whose definition allowed http.
    @Test(arguments: MessageVersion.allCases)
    func threeDSRequestorURLIsHttpsOnlyIn231(version: MessageVersion) {
        let violations = AReqRules.fromThreeDSServer.validate(validAReq(version: version.rawValue, replacing: ["threeDSRequestorURL": .string("http://shop.example")]),
                                                              version: version)
        #expect(violations.map(\.field) == (version == .v2_3_1 ? ["threeDSRequestorURL"] : []), "\(violations)")
        #expect(violations.allSatisfy { $0.code == .formatInvalid && $0.reason.contains("https") })
    }

    @Test func missingRequiredFieldIs201() {
        let violations = AReqRules.fromThreeDSServer.validate(validAReq(replacing: ["sdkTransID": nil, "acctNumber": nil]), version: .v2_2_0)
        #expect(violations == [
            Violation(field: "acctNumber", code: .requiredElementMissing, reason: "is required"),
            Violation(field: "sdkTransID", code: .requiredElementMissing, reason: "is required for the app channel (deviceChannel 01)"),
        ])
    }

    @Test func conditionalFieldsFollowTheirCondition() {
        // A non-payment authentication (02) needs no purchase data.
        let nonPayment = validAReq(replacing: ["messageCategory": .string("02"), "purchaseAmount": nil, "purchaseDate": nil, "mcc": nil])
        #expect(AReqRules.fromThreeDSServer.validate(nonPayment, version: .v2_2_0) == [])
        let payment = validAReq(replacing: ["purchaseAmount": nil])
        #expect(AReqRules.fromThreeDSServer.validate(payment, version: .v2_2_0).map(\.field) == ["purchaseAmount"])
    }

    @Test func wrongFormatsAre203WithTheReason() {
        let message = validAReq(replacing: [
            "threeDSServerTransID": .string("not-a-uuid"), "acctNumber": .string("4000-0000"), "purchaseDate": .string("20261321120000"),
            "sdkEphemPubKey": .string("key"), "cardExpiryDate": .string("3013"), "sdkEncData": .string("abc=="),
            "deviceChannel": .string("01"), "messageCategory": .string("01"),
        ])
        let violations = AReqRules.fromThreeDSServer.validate(message, version: .v2_2_0)
        #expect(violations.allSatisfy { $0.code == .formatInvalid })
        #expect(Dictionary(uniqueKeysWithValues: violations.map { ($0.field, $0.reason) }) == [
            "threeDSServerTransID": "must be a canonical UUID (8-4-4-4-12 hex)",
            "acctNumber": "must be digits only",
            "purchaseDate": "must be YYYYMMDDHHMMSS",
            "sdkEphemPubKey": "must be a JWK object, not string",
            "cardExpiryDate": "must be YYMM",
            "sdkEncData": "must be unpadded base64url (it carries '=' padding)",
        ])
    }

    @Test func base64urlTakesItsSixtyFourCharactersAndTheDotAndNothingElse() {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.".utf8)
        for byte in UInt8.min...UInt8.max {
            // Each byte alone, and in the middle of a long valid run (the bit test reads every byte the same way).
            let long = Array(repeating: UInt8(ascii: "A"), count: 100) + [byte] + Array(repeating: UInt8(ascii: "z"), count: 37)
            #expect([byte].withUnsafeBufferPointer(FieldFormat.isBase64URL) == alphabet.contains(byte), "byte \(byte)")
            #expect(long.withUnsafeBufferPointer(FieldFormat.isBase64URL) == alphabet.contains(byte), "byte \(byte)")
        }
        #expect([UInt8]().withUnsafeBufferPointer(FieldFormat.isBase64URL))
        let maximum = FieldFormat.base64url(maxLength: 8)
        #expect(maximum.problem(with: .string("abcdefgh")) == nil)
        #expect(maximum.problem(with: .string("abcdefghi"))?.reason == "longer than 8")
        #expect(maximum.problem(with: .string("abc="))?.reason == "must be unpadded base64url (it carries '=' padding)")
        #expect(maximum.problem(with: .string("abc=defgh="))?.reason == "longer than 8", "too long is said first, as for every format")
    }

    @Test func aUUIDIsHexDigitsInGroupsOfEightFourFourFourTwelve() {
        let valid = "8a880dc0-d2d2-4067-bcb1-b08d1690b26e"
        #expect(FieldFormat.isCanonicalUUID(valid) && FieldFormat.isCanonicalUUID(valid.uppercased()))
        for position in 0..<36 {
            // At every position the character that does not belong there: a hex digit in a dash's place, else a dash,
            // a "g" or a non-ASCII letter in a digit's.
            let wrong: [Character] = [8, 13, 18, 23].contains(position) ? ["0", "_"] : ["-", "g", "G", "é"]
            for character in wrong {
                var text = Array(valid)
                text[position] = character
                #expect(!FieldFormat.isCanonicalUUID(String(text)), "\(String(text))")
            }
        }
        #expect(!FieldFormat.isCanonicalUUID(valid + "0") && !FieldFormat.isCanonicalUUID(String(valid.dropLast())))
    }

    @Test func aNonASCIIByteAnywhereMakesTheLengthCountCharacters() {
        // Eight bytes at a time, then the rest: a byte of 0x80 or above at every position of every length up to 20 is seen.
        for length in 1...20 {
            for position in 0..<length {
                var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
                #expect(bytes.withUnsafeBufferPointer(FieldFormat.isASCII))
                bytes[position] = 0xC3
                #expect(!bytes.withUnsafeBufferPointer(FieldFormat.isASCII), "length \(length), position \(position)")
            }
        }
        #expect(FieldFormat.string(1...2).problem(with: .string("é")) == nil, "one character, two bytes")
    }

    @Test func emptyOptionalFieldsAreFormatErrors() {
        let violations = AReqRules.fromThreeDSServer.validate(validAReq(replacing: ["cardholderName": .string(""), "email": .null]), version: .v2_1_0)
        #expect(violations == [
            Violation(field: "cardholderName", code: .formatInvalid, reason: "is empty; omit an absent field"),
            Violation(field: "email", code: .formatInvalid, reason: "is empty; omit an absent field"),
        ])
    }

    @Test func duplicatesComeFirstAs204() throws {
        let text = #"{"messageType":"AReq","messageVersion":"2.1.0","messageVersion":"2.1.0"}"#
        let envelope = try MessageEnvelope(bytes: Array(text.utf8), expected: [.aReq])
        let violations = AReqRules.fromThreeDSServer.validate(envelope.json, version: envelope.version, duplicates: envelope.duplicates)
        #expect(violations.first == Violation(field: "messageVersion", code: .duplicateElement, reason: "appears more than once"))
    }

    @Test func legsDifferInDeviceDataAndDSFields() {
        let toACS = validAReq(replacing: ["sdkEncData": nil, "deviceInfo": .string("eyJEVijoiMS4wIn0")])
        #expect(AReqRules.fromDirectoryServer.validate(toACS, version: .v2_2_0).map(\.field) == ["dsTransID", "dsReferenceNumber", "dsURL"])
        let leaked = AReqRules.fromDirectoryServer.validate(validAReq(), version: .v2_2_0)
        #expect(leaked.contains(Violation(field: "sdkEncData", code: .formatInvalid, reason: "must not be present in this message")))
    }
}

@Suite("Message envelope")
struct MessageEnvelopeTests {
    @Test(arguments: [
        ("not json", ErrorCode.messageNotRecognised, "message"),
        ("[1]", .messageNotRecognised, "message"),
        (#"{"messageType":"CReq","messageVersion":"2.2.0"}"#, .messageNotRecognised, "messageType"),
        (#"{"messageType":"AReq"}"#, .requiredElementMissing, "messageVersion"),
        (#"{"messageType":"AReq","messageVersion":"2.0.1"}"#, .versionNotSupported, "messageVersion"),
    ])
    func rejectionsCarryTheirCode(body: String, code: ErrorCode, field: String) {
        #expect {
            _ = try MessageEnvelope(bytes: Array(body.utf8), expected: [.aReq])
        } throws: { error in
            guard let rejection = error as? MessageEnvelope.Rejection else { return false }
            return rejection.code == code && rejection.field == field
        }
    }

    @Test func erroRoundTripsAndOmitsAbsentIds() throws {
        let erro = ErroMessage(messageVersion: "2.2.0", errorCode: .dataDecryptionFailure, errorComponent: .directoryServer,
                               errorDetail: "sdkEncData", errorMessageType: "AReq", threeDSServerTransID: "8a880dc0-d2d2-4067-bcb1-b08d1690b26e")
        let text = JSONWriter.string(erro.json)
        #expect(!text.contains("acsTransID") && !text.contains("null"))
        #expect(text.contains(#""errorDescription":"Data Decryption Failure""#))
        let read = try ErroMessage(json: JSONReader.parse(Array(text.utf8)).value)
        #expect(read == erro)
    }
}
