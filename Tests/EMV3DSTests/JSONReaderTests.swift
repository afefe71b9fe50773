import Foundation
import JSON
import Testing
@testable import EMV3DS

@Suite("Strict JSON reader")
struct JSONReaderTests {
    @Test func readsNestedValuesInOrderAndWritesThemBack() throws {
        let text = #"{"messageType":"AReq","b":[1,-2.5e3,true,false,null],"c":{"z":"\u00e9\n\"q\"","a":"\ud83d\ude00"},"d":{}}"#
        let (value, duplicates) = try JSONReader.parse(Array(text.utf8))
        #expect(duplicates.isEmpty)
        #expect(value["messageType"] == .string("AReq"))
        #expect(value["c"]?.objectMembers?.map(\.key) == ["z", "a"])
        #expect(value["c"]?["z"] == .string("é\n\"q\""))
        #expect(value["c"]?["a"] == .string("😀"))
        let rewritten = JSONWriter.write(value)
        let (again, _) = try JSONReader.parse(rewritten)
        #expect(again == value)
        // Foundation agrees on what it means.
        let foundation = try JSONSerialization.jsonObject(with: Data(rewritten)) as? [String: Any]
        #expect((foundation?["c"] as? [String: String])?["a"] == "😀")
    }

    @Test func reportsDuplicateMembersWithTheirPath() throws {
        let (value, duplicates) = try JSONReader.parse(Array(#"{"a":1,"b":{"x":1,"x":2},"a":3}"#.utf8))
        #expect(duplicates == [JSONReader.Duplicate(path: "b.x"), JSONReader.Duplicate(path: "a")])
        #expect(value["a"] == .number("1"))
    }

    @Test(arguments: [
        ("", "unexpected end of input at byte 0"),
        ("{", "expected a member name at byte 1"),
        (#"{"a" 1}"#, "expected ':' at byte 5"),
        (#"{"a":1,}"#, "expected a member name at byte 7"),
        ("[1 2]", "expected ',' or ']' at byte 3"),
        ("01", "unexpected data after the JSON value at byte 1"),
        ("1.", "invalid number at byte 2"),
        ("tru", "invalid literal at byte 0"),
        ("\"a\nb\"", "control character in string at byte 2"),
        (#""\x""#, "invalid escape at byte 3"),
        (#""\ud800""#, "unpaired surrogate at byte 7"),
        ("{} {}", "unexpected data after the JSON value at byte 3"),
    ])
    func rejectsWhatIsNotJSON(text: String, message: String) {
        #expect {
            _ = try JSONReader.parse(Array(text.utf8))
        } throws: { error in
            (error as? JSONReader.SyntaxError)?.description == message
        }
    }

    @Test func limitsNesting() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(throws: JSONReader.SyntaxError.self) { _ = try JSONReader.parse(Array(deep.utf8)) }
    }
}
