import Foundation
import JSON
import Testing

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

    @Test func namesADuplicateInsideArraysAndNestedObjectsByItsWholePath() throws {
        let text = #"{"list":[{"k":1},{"k":1,"k":2}],"deep":{"in":[[{"z":0,"y":1,"z":2}]]},"list":[]}"#
        let (_, duplicates) = try JSONReader.parse(Array(text.utf8))
        #expect(duplicates == [JSONReader.Duplicate(path: "list[1].k"), JSONReader.Duplicate(path: "deep.in[0][0].z"),
                               JSONReader.Duplicate(path: "list")])
    }

    /// Past 16 members the names are kept in a set (a whole message): a name repeated early or late is found there too.
    @Test func findsADuplicateInALargeObject() throws {
        let names = (0..<20).map { "member\($0)" } + ["member1", "member19", "member20"]
        let text = "{" + names.map { #""\#($0)":0"# }.joined(separator: ",") + "}"
        let (value, duplicates) = try JSONReader.parse(Array(text.utf8))
        #expect(duplicates == [JSONReader.Duplicate(path: "member1"), JSONReader.Duplicate(path: "member19")])
        #expect(value.objectMembers?.count == 23)
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

    @Test(arguments: [
        ([0x22, 0x61, 0xC3, 0x22] as [UInt8], "invalid UTF-8 in string at byte 3"),         // a lead byte with no continuation
        ([0x22, 0xFF, 0x22], "invalid UTF-8 in string at byte 2"),
        ([0x22, 0xED, 0xA0, 0x80, 0x22], "invalid UTF-8 in string at byte 4"),            // an encoded surrogate
        ([0x22, 0xC0, 0xAF, 0x22], "invalid UTF-8 in string at byte 3"),                   // overlong "/"
        ([0x7B, 0x22, 0xC3, 0x28, 0x22, 0x3A, 0x31, 0x7D], "invalid UTF-8 in string at byte 4"),  // in a member name
        (Array(#""\u+041""#.utf8), "invalid \\u escape at byte 3"),
        (Array(#""\u 041""#.utf8), "invalid \\u escape at byte 3"),
    ])
    func rejectsInvalidUTF8AndLooseEscapes(bytes: [UInt8], message: String) throws {
        // RFC 8259 8.1: JSON text is UTF-8; 7: \u takes exactly four hex digits. Repairing either would
        // let two parties read different strings from the same bytes.
        #expect {
            _ = try JSONReader.parse(bytes)
        } throws: { error in
            (error as? JSONReader.SyntaxError)?.description == message
        }
        #expect(try JSONReader.parse(Array(#""caf\u00E9 é""#.utf8)).value == .string("café é"))
    }

    @Test func limitsNesting() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(throws: JSONReader.SyntaxError.self) { _ = try JSONReader.parse(Array(deep.utf8)) }
    }
}

/// A message one role of the process sends another in process goes with the value it was written from; the value stands for
/// those very bytes only.
@Suite("JSON written from a value")
struct WrittenJSONTests {
    let value = JSONValue.object([(key: "messageType", value: .string("AReq")), (key: "purchaseAmount", value: .string("101"))])

    @Test func itsOwnBytesAreReadAsTheValue() {
        let written = WrittenJSON(value)
        #expect(written.bytes == JSONWriter.write(value))
        #expect(written.value(ifWrittenAs: written.bytes) == value)
    }

    @Test func equalBytesElsewhereOrBytesChangedSinceAreNot() {
        let written = WrittenJSON(value)
        // Equal bytes in other storage (the same message parsed from the wire) are parsed as any.
        #expect(written.value(ifWrittenAs: JSONWriter.write(value)) == nil)
        // A fault that spoils the body changes a copy: the copy is not the value's writing.
        var spoilt = written.bytes
        spoilt[spoilt.count - 1] = UInt8(ascii: " ")
        #expect(written.value(ifWrittenAs: spoilt) == nil)
        #expect(written.value(ifWrittenAs: Array(written.bytes.dropLast())) == nil)
    }
}

@Suite("Writing a record whose long parts follow as bytes")
struct OpenObjectWritingTests {
    @Test func anObjectLeftOpenTakesTheNextMemberAfterItsOwnOrAlone() throws {
        var out: [UInt8] = []
        JSONWriter.appendObject([("a", .string("x")), ("gone", nil)], continuingWith: "messages", to: &out)
        out += #"[{"m":1}]}"#.utf8
        #expect(String(decoding: out, as: UTF8.self) == #"{"a":"x","messages":[{"m":1}]}"#)
        var alone: [UInt8] = []
        JSONWriter.appendObject([("gone", nil)], continuingWith: "messages", to: &alone)
        alone += "[]}".utf8
        #expect(String(decoding: alone, as: UTF8.self) == #"{"messages":[]}"#)
        #expect(throws: Never.self) { try JSONReader.parse(alone) }
    }
}
