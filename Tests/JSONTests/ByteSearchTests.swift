import Testing
@testable import JSON

@Suite("Finding and masking in JSON text without decoding it")
struct ByteSearchTests {
    private let pan = Array("4000000000001000".utf8), masked = Array("400000******1000".utf8)

    private func masking(_ text: String) -> String {
        var bytes = Array(text.utf8)
        ByteSearch.replaceAllInStrings(pan, with: masked, in: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func aCardNumberIsMaskedInsideStringsAndLeftInANumberSoTheTextStaysJSON() throws {
        // A member, the middle of a longer string, a string after an escaped quote and after an escaped backslash: masked.
        // The same digits as a number (an extension's free-form data) are left: stars there would not be JSON.
        let text = #"{"acctNumber":"4000000000001000","ref":4000000000001000,"note":"card 4000000000001000 \" 4000000000001000","#
            + #""path":"\\","after":4000000000001000,"list":["4000000000001000"]}"#
        let result = masking(text)
        #expect(result == #"{"acctNumber":"400000******1000","ref":4000000000001000,"note":"card 400000******1000 \" 400000******1000","#
            + #""path":"\\","after":4000000000001000,"list":["400000******1000"]}"#)
        #expect(throws: Never.self) { try JSONReader.parse(Array(result.utf8)) }
    }

    @Test func aStringValueAloneIsReadFromItsOpeningQuote() {
        #expect(masking(#""4000000000001000""#) == #""400000******1000""#)
        #expect(masking("4000000000001000") == "4000000000001000", "a bare number")
    }

    @Test func aReplacementThatWouldEndTheStringIsRefused() {
        var bytes = Array(#"{"a":"4000000000001000"}"#.utf8)
        ByteSearch.replaceAllInStrings(pan, with: Array(#"400000"*****1000"#.utf8), in: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"a":"4000000000001000"}"#)
    }
}
