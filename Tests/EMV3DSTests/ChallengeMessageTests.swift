import JSON
import Testing
@testable import EMV3DS

@Suite("CReq and CRes: field rules per version, and the wire form")
struct ChallengeMessageTests {
    let ids = [("threeDSServerTransID", "8a880dc0-d2d2-4067-bcb1-b08d1690b26e"), ("acsTransID", "d7c1ee99-9478-44a6-b1f2-391e29c6b340"),
               ("sdkTransID", "b2385523-a66c-4907-ac3c-91848e8c0f86")]

    func creq(_ version: String = "2.2.0", _ extra: [(String, JSONValue)] = []) -> [UInt8] {
        JSONWriter.write(.object([("messageType", .string("CReq")), ("messageVersion", .string(version)), ("sdkCounterStoA", .string("001"))]
            + ids.map { ($0.0, JSONValue.string($0.1)) } + (version == "2.3.1" ? [("oobAppURLInd", .string("02"))] : [])
            + extra.map { (key: $0.0, value: $0.1) }))
    }

    @Test func actions() throws {
        #expect(try CReq(bytes: creq()).action == CReq.Action.none)
        #expect(try CReq(bytes: creq("2.2.0", [("challengeDataEntry", .string("1234"))])).action == .dataEntry("1234"))
        #expect(try CReq(bytes: creq("2.2.0", [("oobContinue", .bool(true))])).action == .oobContinue)
        #expect(try CReq(bytes: creq("2.2.0", [("resendChallenge", .string("Y"))])).action == .resend)
        #expect(try CReq(bytes: creq("2.2.0", [("challengeNoEntry", .string("Y"))])).action == .noEntry)
        // A cancel outweighs an answer sent with it.
        #expect(try CReq(bytes: creq("2.2.0", [("challengeDataEntry", .string("1")), ("challengeCancel", .string("01"))])).action == .cancel(.cardholderCancelled))
        #expect(try CReq(bytes: creq()).counter == 1)
    }

    @Test(arguments: [
        ("2.2.0", "oobContinue", JSONValue.string("true"), ErrorCode.formatInvalid),
        ("2.2.0", "sdkCounterStoA", .string("1"), .formatInvalid),
        ("2.2.0", "challengeDataEntry", .string(""), .formatInvalid),
        ("2.1.0", "challengeCancel", .string("09"), .formatInvalid),
        ("2.2.0", "challengeCancel", .string("09"), .formatInvalid),
        // 2.2.0 reserves 02, which 2.1.0 used for a requestor cancel.
        ("2.2.0", "challengeCancel", .string("02"), .formatInvalid),
        // 2.3.1 retyped oobContinue from a JSON true to "01"/"02".
        ("2.3.1", "oobContinue", .bool(true), .formatInvalid),
        // A required field sent empty is missing (Annex A): 201.
        ("2.2.0", "sdkTransID", .null, .requiredElementMissing),
    ])
    func creqViolations(version: String, field: String, value: JSONValue, code: ErrorCode) throws {
        var json = try JSONReader.parse(creq(version)).value
        json.set(field, value)
        #expect { try CReq(bytes: JSONWriter.write(json)) } throws: { ($0 as? InvalidMessage)?.violations.first == Violation(field: field, code: code, reason: ($0 as? InvalidMessage)?.violations.first?.reason ?? "") }
    }

    @Test func cresRoundTrip() throws {
        let request = try CReq(bytes: creq())
        var screen = ChallengeScreenContent(uiType: .html)
        screen.html = "<form action=\"https://emv3ds/challenge\"></form>"
        let cres = CRes(answering: request, content: .screen(screen))
        let json = cres.json
        #expect(json["acsHTML"]?.stringValue?.contains("=") == false)
        #expect(json["acsCounterAtoS"]?.stringValue == "001")
        #expect(json["challengeCompletionInd"]?.stringValue == "N")
        #expect(try CRes(bytes: JSONWriter.write(json)) == cres)
        let final = CRes(answering: request, content: .final(.authenticated)).json
        #expect(final.objectMembers?.map(\.key) == ["messageType", "messageVersion", "threeDSServerTransID", "acsTransID", "sdkTransID",
                                                    "acsCounterAtoS", "challengeCompletionInd", "transStatus"])
    }

    @Test func cresRules() throws {
        func violations(_ version: String, _ members: [(String, JSONValue)]) -> [String] {
            let json = JSONValue.object([("messageType", .string("CRes")), ("messageVersion", .string(version)), ("acsCounterAtoS", .string("000"))]
                + ids.map { (key: $0.0, value: JSONValue.string($0.1)) } + members.map { (key: $0.0, value: $0.1) })
            return ChallengeRules.cRes.validate(json, version: MessageVersion(rawValue: version) ?? .latest).map(\.description)
        }
        #expect(violations("2.2.0", [("challengeCompletionInd", .string("Y"))]) == ["201 transStatus: is required for the final CRes"])
        #expect(violations("2.2.0", [("challengeCompletionInd", .string("N"))]).first?.hasPrefix("201 acsUiType") == true)
        #expect(violations("2.2.0", [("challengeCompletionInd", .string("N")), ("acsUiType", .string("07"))]).first?.hasPrefix("203 acsUiType") == true)
        #expect(violations("2.3.1", [("challengeCompletionInd", .string("N")), ("acsUiType", .string("07"))]) == [
            "201 challengeInfoHeader: is required for acsUiType 01-04 and 07", "201 challengeInfoText: is required for acsUiType 01-04 and 07",
            "201 infoContinueLabel: is required for acsUiType 07",
        ])
        #expect(violations("2.3.1", [("challengeCompletionInd", .string("N")), ("acsUiType", .string("07")), ("challengeInfoHeader", .string("Notice")),
                                     ("challengeInfoText", .string("Done.")), ("infoContinueLabel", .string("Continue"))]).isEmpty)
        #expect(violations("2.2.0", [("challengeCompletionInd", .string("N")), ("acsUiType", .string("02")), ("submitAuthenticationLabel", .string("OK")),
                                     ("challengeInfoHeader", .string("Bank")), ("challengeInfoLabel", .string("Pick")), ("challengeInfoText", .string("One")),
                                     ("challengeSelectInfo", .array([.object([("a", .string("A")), ("b", .string("B"))])]))])
            .first?.hasPrefix("203 challengeSelectInfo") == true)
        #expect(violations("2.2.0", [("challengeCompletionInd", .string("N")), ("acsUiType", .string("01")), ("submitAuthenticationLabel", .string("OK")),
                                     ("challengeInfoHeader", .string("Bank")), ("challengeInfoLabel", .string("Code")),
                                     ("challengeInfoText", .string(""))]) == ["201 challengeInfoText: is required, and sent empty"])
        // An optional field sent empty is a format error.
        #expect(violations("2.2.0", [("challengeCompletionInd", .string("N")), ("acsUiType", .string("01")), ("submitAuthenticationLabel", .string("OK")),
                                     ("challengeInfoHeader", .string("Bank")), ("challengeInfoLabel", .string("Code")), ("challengeInfoText", .string("T")),
                                     ("whyInfoLabel", .string(""))]) == ["203 whyInfoLabel: is empty; omit an absent field"])
    }

    /// 2.3.1 keeps challengeInfoLabel ("CRes = OC, see Table A.20", EMVCo SB 279 p.101) beside the text template's new
    /// challengeEntryBox (p.99, with Challenge Data Entry Label): a text screen carries its label in both, so that an SDK that
    /// reads the entry box and a parser built for 2.2.0, which refuses a text screen without challengeInfoLabel, both show it.
    /// The rules take the label beside the entry box, which they still require on a 2.3.1 text screen.
    @Test func a231TextScreenCarriesItsLabelInBothPlaces() {
        var screen = ChallengeScreenContent(uiType: .text)
        (screen.header, screen.label, screen.text, screen.submitLabel) = ("Bank", "Enter your code", "Test code 1234.", "Submit")
        let members = JSONValue.object(omittingAbsent: screen.json(version: .v2_3_1, htmlEncoder: { $0 }))
        #expect(members["challengeInfoLabel"]?.stringValue == "Enter your code")
        #expect(members["challengeEntryBox"]?["challengeDataEntryLabel"]?.stringValue == "Enter your code")
        #expect(JSONValue.object(omittingAbsent: screen.json(version: .v2_2_0, htmlEncoder: { $0 }))["challengeEntryBox"] == nil)

        func violations(_ labels: [(String, JSONValue)]) -> [String] {
            let json = JSONValue.object([("messageType", .string("CRes")), ("messageVersion", .string("2.3.1")), ("acsCounterAtoS", .string("000")),
                                         ("challengeCompletionInd", .string("N")), ("acsUiType", .string("01")), ("challengeInfoHeader", .string("Bank")),
                                         ("challengeInfoText", .string("T")), ("submitAuthenticationLabel", .string("OK"))] + labels
                + ids.map { (key: $0.0, value: JSONValue.string($0.1)) })
            return ChallengeRules.cRes.validate(json, version: .v2_3_1).map(\.description)
        }
        let entryBox = ("challengeEntryBox", JSONValue.object([("challengeDataEntryLabel", .string("Code"))]))
        #expect(violations([entryBox, ("challengeInfoLabel", .string("Code"))]).isEmpty)
        #expect(violations([entryBox]).isEmpty)
        #expect(violations([("challengeInfoLabel", .string("Code"))]) == ["201 challengeEntryBox: is required for acsUiType 01"])
    }

    @Test func uiTypesOfOlderVersions() {
        #expect(ACSUIType.htmlOutOfBand.available(in: .v2_2_0) == .html)
        #expect(ACSUIType.information.available(in: .v2_1_0) == .outOfBand)
        #expect(ACSUIType.information.available(in: .v2_3_1) == .information)
        // 08 is taken on 2.1.0 but sent as 04 there; 09 and 10 are 2.3.1's, 06 before.
        #expect(ChallengeCancel.timedOutAtSDK.available(in: .v2_1_0) == .timedOutAtACS)
        #expect(ChallengeCancel.timedOutAtSDK.available(in: .v2_2_0) == .timedOutAtSDK)
        #expect(ChallengeCancel.erroToSDK.available(in: .v2_2_0) == .transactionError)
        #expect(ChallengeCancel.erroToSDK.available(in: .v2_3_1) == .erroToSDK)
    }
}
