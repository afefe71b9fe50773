import JSON
import Testing
@testable import EMV3DS

/// The values negative cases give an element, and the examples a reader stands in with: each is what it claims to be
/// to the field tables.
@Suite("Negative values and format examples")
struct NegativeValueTests {
    @Test func everyFormatsExampleIsAValueOfThatFormatInEveryTable() {
        for entry in MessageTables.all {
            for rule in entry.rules.table.fields {
                guard let example = rule.format.example else { continue }
                #expect(rule.format.problem(with: example) == nil, "\(entry.name).\(rule.name): \(JSONWriter.string(example))")
            }
        }
    }

    @Test func aValueOfAnotherTypeIsNeverOfTheSameType() {
        #expect(NegativeValue.ofAnotherType(.string("05")) == .number("5"))
        #expect(NegativeValue.ofAnotherType(.string("N")) == .number("1"))
        #expect(NegativeValue.ofAnotherType(.bool(true)) == .string("true"))
        #expect(NegativeValue.ofAnotherType(.object([("a", .string("b"))])) == .string(#"{"a":"b"}"#))
        #expect(NegativeValue.ofAnotherType(.array([])) == .string("[]"))
    }

    @Test func aResizedValueKeepsItsKindOfCharacters() {
        #expect(NegativeValue.resized("000", to: 4) == "0009")
        #expect(NegativeValue.resized("000", to: 2) == "00")
        #expect(NegativeValue.resized("https://a.example", to: 20) == "https://a.exampleAAA")
        #expect(NegativeValue.resized("", to: 2) == "AA")
    }

    /// A text screen's first CRes (2.2.0): its string elements but the ids sent as numbers are refused with 203 each, alone; its
    /// counter (three digits) one character short or long, and its text one past the most Annex A allows, too.
    @Test func theCResTableRefusesAnElementOfAnotherTypeOrLengthAlone() throws {
        let id = "8a880dc0-d2d2-4067-bcb1-b08d1690b26e"
        var screen = ChallengeScreenContent(uiType: .text)
        (screen.header, screen.label, screen.text, screen.submitLabel) = ("Header", "Code", "Enter the code", "Submit")
        let cres = CRes(messageVersion: .v2_2_0, ids: TransactionIDs(threeDSServerTransID: id, acsTransID: id, sdkTransID: id), counter: 0,
                        content: .screen(screen)).json
        let context = MessageContext(version: .v2_2_0, channel: .app)
        let ofAnotherType = ChallengeRules.cRes.elementsRefusedOfAnotherType(of: cres, context: context)
        #expect(Set(["acsUiType", "acsCounterAtoS", "challengeInfoText"]).isSubset(of: ofAnotherType), "\(ofAnotherType)")
        // An id of another type names no transaction as well (301): no case of a single reading.
        #expect(!ofAnotherType.contains("acsTransID"))
        let lengths = ChallengeRules.cRes.lengthsOutsideTheirBounds(of: cres, context: context)
        #expect(lengths.contains { $0 == ("acsCounterAtoS", 2) } && lengths.contains { $0 == ("acsCounterAtoS", 4) }, "\(lengths)")
        let textBounds = try #require(ChallengeRules.cRes.lengthBounds(of: "challengeInfoText", in: .v2_2_0))
        #expect(lengths.contains { $0 == ("challengeInfoText", textBounds.upperBound + 1) })
        // A uuid has no length of its own to break: a 37-character id is refused as no UUID, the type's case.
        #expect(!lengths.contains { $0.element == "acsTransID" })
    }
}
