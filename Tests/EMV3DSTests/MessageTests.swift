import JSON
import Testing
@testable import EMV3DS

private let areq = validAReq()

private func ares(_ changes: [String: JSONValue?] = [:]) -> JSONValue {
    var ares = ARes(messageVersion: .v2_2_0, threeDSServerTransID: "8a880dc0-d2d2-4067-bcb1-b08d1690b26e",
                    acsTransID: "d7c1ee99-9478-44a6-b1f2-391e29c6b340", dsTransID: "f25084f0-5b16-4c0a-ae5d-b24808a95e4b",
                    sdkTransID: "b2385523-a66c-4907-ac3c-91848e8c0067", acsReferenceNumber: "ACS", dsReferenceNumber: "DS",
                    transStatus: .authenticated)
    ares.authenticationValue = "AAABBBCCCDDDEEEFFFGGGHHHIII="
    ares.eci = "05"
    var json = ares.json
    for (key, value) in changes { json.set(key, value) }
    return json
}

@Suite("ARes, RReq, RRes, PReq, PRes rules and messages")
struct MessageTests {
    @Test func aBuiltAResIsValidAndRoundTrips() throws {
        #expect(AResRules.rules.validate(ares(), version: .v2_2_0, request: areq) == [])
        let read = try ARes(bytes: JSONWriter.write(ares()), answering: areq)
        #expect(read.json == ares())
    }

    @Test func outcomeFieldsDependOnTransStatus() {
        let failed = AResRules.rules.validate(ares(["transStatus": .string("N"), "authenticationValue": nil, "eci": nil]), version: .v2_2_0, request: areq)
        #expect(failed.map(\.field) == ["transStatusReason"])
        let missingValue = AResRules.rules.validate(ares(["authenticationValue": nil]), version: .v2_2_0, request: areq)
        #expect(missingValue == [Violation(field: "authenticationValue", code: .requiredElementMissing, reason: "is required for a payment with transStatus Y or A")])
        let challenge = AResRules.rules.validate(ares(["transStatus": .string("C")]), version: .v2_2_0, request: areq)
        #expect(Set(challenge.map(\.field)) == ["acsChallengeMandated", "authenticationType", "acsRenderingType", "acsSignedContent"])
    }

    /// Table A.17's footnotes (EMVCo SB 279 p.170): D only where the AReq asked for decoupled authentication as its
    /// primary method (Y, and in 2.3.1 B; F is for the fallback alone, footnote 10), S only with threeDSRequestorSpcSupport Y
    /// (footnote 13), neither C nor S in 3RI. The DS and the 3DS Server answer another with Erro 203.
    @Test(arguments: [
        ("2.2.0", "01", "D", "Y", nil, true), ("2.2.0", "01", "D", "N", nil, false), ("2.2.0", "01", "D", nil, nil, false),
        ("2.3.1", "01", "D", "B", nil, true), ("2.3.1", "01", "D", "F", nil, false),
        ("2.3.1", "02", "S", nil, "Y", true), ("2.3.1", "02", "S", nil, nil, false), ("2.3.1", "03", "C", nil, nil, false),
        ("2.3.1", "01", "C", "F", nil, true),
    ] as [(String, String, String, String?, String?, Bool)])
    func anAResStatusTheAReqDidNotAllowIs203(_ version: String, _ channel: String, _ status: String, _ decoupled: String?, _ spc: String?, _ allowed: Bool) {
        let request = AReq(json: validAReq(replacing: ["messageVersion": .string(version), "deviceChannel": .string(channel),
                                                       "threeDSRequestorDecReqInd": decoupled.map(JSONValue.string),
                                                       "threeDSRequestorSpcSupport": spc.map(JSONValue.string)]),
                           version: MessageVersion(rawValue: version) ?? .v2_2_0)
        let violation = request.answerNotAllowed(ares(["transStatus": .string(status)]))
        #expect((violation == nil) == allowed, "\(String(describing: violation))")
        #expect(violation.map { $0.field == "transStatus" && $0.code == .formatInvalid } ?? true)
    }

    @Test func sdkTransIDIsRequiredOnlyForTheAppChannel() {
        let withoutSDK = ares(["sdkTransID": nil])
        #expect(AResRules.rules.validate(withoutSDK, version: .v2_2_0, request: areq).map(\.field) == ["sdkTransID"])
        let browser = validAReq(replacing: ["deviceChannel": .string("02")])
        #expect(AResRules.rules.validate(withoutSDK, version: .v2_2_0, request: browser) == [])
    }

    @Test func decoupledAndInformationalStatusesStartAt220() {
        let informational = ares(["transStatus": .string("I"), "authenticationValue": nil, "eci": nil])
        #expect(AResRules.rules.validate(informational, version: .v2_2_0, request: areq) == [])
        #expect(AResRules.rules.validate(informational, version: .v2_1_0, request: areq).map(\.code) == [.formatInvalid])
    }

    @Test func rreqAndRResRoundTrip() throws {
        var rreq = RReq(messageVersion: .v2_3_1, messageCategory: "01", threeDSServerTransID: "8a880dc0-d2d2-4067-bcb1-b08d1690b26e",
                        acsTransID: "d7c1ee99-9478-44a6-b1f2-391e29c6b340", dsTransID: "f25084f0-5b16-4c0a-ae5d-b24808a95e4b",
                        sdkTransID: nil, transStatus: .notAuthenticated, interactionCounter: "03")
        rreq.transStatusReason = "19"
        rreq.setAuthentication(.smsOTP)
        let read = try RReq(bytes: JSONWriter.write(rreq.json))
        // 2.3.1 carries authenticationMethod only: the table left authenticationType out.
        #expect(read.json == rreq.json)
        #expect(rreq.json["authenticationType"] == nil && rreq.json["authenticationMethod"] == .array([.string("02")]))
        let rres = RRes(answering: rreq)
        #expect(try RRes(bytes: JSONWriter.write(rres.json)) == rres)
        #expect(ResultsRules.rRes.validate(rres.json, version: .v2_3_1) == [])
    }

    @Test func invalidMessagesMakeAnErroNamingEveryFieldOfTheFirstCode() throws {
        var json = areq
        json.set("acctNumber", nil)
        json.set("sdkAppID", nil)
        json.set("mcc", .string("ABCD"))
        let invalid = try #require(throws: InvalidMessage.self) { try AReq(bytes: JSONWriter.write(json), rules: AReqRules.fromThreeDSServer) }
        let erro = invalid.erro(from: .directoryServer)
        #expect(erro.errorCode == .requiredElementMissing)
        #expect(erro.errorDetail == "acctNumber,sdkAppID")
        #expect(erro.errorDescription.contains("acctNumber is required"))
        #expect(erro.threeDSServerTransID == "8a880dc0-d2d2-4067-bcb1-b08d1690b26e")
        #expect(erro.messageVersion == "2.2.0")
    }

    @Test func anErroForAnUnknownVersionSpeaksTheNewestOne() throws {
        let invalid = try #require(throws: InvalidMessage.self) {
            try AReq(bytes: JSONWriter.write(validAReq(version: "9.0.0")), rules: AReqRules.fromThreeDSServer)
        }
        #expect(invalid.erro(from: .directoryServer).messageVersion == MessageVersion.latest.rawValue)
        #expect(invalid.code == .versionNotSupported)
    }

    @Test(arguments: [("4", "4000000000001000", true), ("51-55", "5500000000000004", true), ("51-55", "5600000000000003", false),
                      ("2221-2720", "2720990000000000", true), ("2221-2720", "2721000000000000", false), ("34", "3", false)])
    func cardRangesMatchLeadingDigits(range: String, pan: String, matches: Bool) throws {
        #expect(try #require(CardRange(range)).contains(pan: pan) == matches)
    }

    @Test(arguments: ["", "4-", "55-51", "1-22", "ab", "12345678901234567890"])
    func malformedCardRangesAreRefused(text: String) {
        #expect(CardRange(text) == nil)
    }

    @Test func theLongestRangeWins() {
        let schemes = [PaymentScheme(rid: "A", name: "wide", cardRanges: [CardRange("6")!]),
                       PaymentScheme(rid: "B", name: "narrow", cardRanges: [CardRange("6011")!])]
        #expect(schemes.scheme(for: "6011000000000004")?.rid == "B")
        #expect(schemes.scheme(for: "6500000000000002")?.rid == "A")
        #expect(schemes.scheme(for: "4000000000000002") == nil)
    }

    @Test func luhnAndMasking() {
        #expect(CardNumber.isLuhnValid("4000000000001000"))
        #expect(!CardNumber.isLuhnValid("4000000000001001"))
        #expect(!CardNumber.isLuhnValid("40000000a0001000"))
        #expect(CardNumber.masked("4000000000001000") == "400000******1000")
    }
}

/// One parse per hop: a message read from the value it was written from (a role of this process called in process) is the
/// message read from its bytes, valid or not.
@Suite("Reading a written message")
struct WrittenMessageTests {
    @Test func aValidAReqReadsTheSameFromItsValueAsFromItsBytes() throws {
        let written = WrittenJSON(validAReq(replacing: ["undefinedMember": .string("x")]))
        let fromBytes = try AReq(bytes: written.bytes, rules: AReqRules.fromThreeDSServer)
        let fromValue = try AReq(bytes: written.bytes, written: written.value, rules: AReqRules.fromThreeDSServer)
        #expect(fromValue.json == fromBytes.json && fromValue.version == fromBytes.version)
        #expect(fromValue.warnings == fromBytes.warnings && !fromValue.warnings.isEmpty)
    }

    @Test(arguments: [["purchaseAmount": nil], ["messageVersion": .string("9.9.9")], ["messageType": .string("ARes")]] as [[String: JSONValue?]])
    func anInvalidAReqIsRefusedTheSameFromItsValueAsFromItsBytes(_ changes: [String: JSONValue?]) throws {
        let written = WrittenJSON(validAReq(replacing: changes))
        let fromBytes = #expect(throws: InvalidMessage.self) { try AReq(bytes: written.bytes, rules: AReqRules.fromThreeDSServer) }
        let fromValue = #expect(throws: InvalidMessage.self) { try AReq(bytes: written.bytes, written: written.value, rules: AReqRules.fromThreeDSServer) }
        #expect(fromValue?.violations == fromBytes?.violations && fromValue?.violations.isEmpty == false)
        #expect(fromValue?.ids == fromBytes?.ids && fromValue?.claimedVersion == fromBytes?.claimedVersion)
    }
}

/// What a record writes of a check, written in place, is what its JSON value writes.
@Suite("A check as a record stores it")
struct StoredCheckTests {
    @Test(arguments: [CheckResult.pass(.areqElements), .fail(.deviceDataHeader, #"enc "A128GCM" \ not "A256GCM"; é"#),
                      CheckResult(.areqUndefinedMembers, .warning, "")])
    func writtenInPlaceItIsItsValueWritten(_ check: CheckResult) {
        var out: [UInt8] = []
        check.appendStored(to: &out)
        #expect(out == JSONWriter.write(check.storedJSON))
    }

    /// Device parameters are named by a platform letter and three digits (EMVCo's Device Information data version 1.6).
    @Test func deviceParameterIdentifiersAreAPlatformLetterAndThreeDigits() {
        for name in ["C001", "A012", "I003"] { #expect(DeviceInformation.isIdentifier(name)) }
        for name in ["", "C01", "C0001", "X001", "c001", "C00a", "Cé01", "C\u{0660}01"] { #expect(!DeviceInformation.isIdentifier(name), "\(name)") }
    }
}
