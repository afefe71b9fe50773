import EMV3DS
import Foundation
import JSON
import Testing
@testable import ThreeDSServer

/// The 3DS Server's record is written from the trail's bytes (docs/benchmarks.md): what it shows must be
/// what the messages said, however they were written.
@Suite("3DS Server transaction record")
struct ThreeDSServerRecordTests {
    private static let signedContent = "eyJhbGciOiJQUzI1NiJ9.eyJhY3NVUkwiOiJodHRwczovL2FjcyJ9.c2lnbmF0dXJl"

    /// An app transaction whose ARes C came as `aresText`.
    private func challenged(aresText: String) throws -> ThreeDSServer.Transaction {
        let areq = AReq(json: .object([("threeDSServerTransID", .string("8a880dc0-d2d2-4067-bcb1-b08d1690b26e")),
                                       ("acctNumber", .string("4000000000001000")), ("deviceChannel", .string("01"))]), version: .v2_2_0)
        var transaction = ThreeDSServer.Transaction(areq: areq)
        transaction.record(.sent, bytes: Array(#"{"messageType":"AReq","acctNumber":"4000000000001000"}"#.utf8))
        let bytes = Array(aresText.utf8)
        let ares = ARes(validated: try MessageEnvelope(bytes: bytes, expected: [.aRes]))
        transaction.record(.received, bytes: bytes)
        transaction.apply(ares)
        return transaction
    }

    private func aresText(signedContent: String) -> String {
        #"{"messageType":"ARes","messageVersion":"2.2.0","threeDSServerTransID":"8a880dc0-d2d2-4067-bcb1-b08d1690b26e","#
            + #""acsTransID":"f0b5c7a2-0d4b-4f67-9b59-3f1c1a1b2c3d","dsTransID":"d1a2b3c4-0d4b-4f67-9b59-3f1c1a1b2c3d","transStatus":"C","#
            + #""acsSignedContent":""# + signedContent + #""}"#
    }

    @Test func anAppChallengeStartsFromTheSignedContentAsTheAResCarriedIt() throws {
        let record = try challenged(aresText: aresText(signedContent: Self.signedContent)).json
        #expect(record["challenge"]?["acsSignedContent"]?.stringValue == Self.signedContent)
    }

    @Test func aSignedContentWrittenWithEscapesIsReadFromTheParsedARes() throws {
        // "\u0065" is the JWS's first "e": the bytes differ from the value, so the record cannot take it where it lies.
        let escaped = #"\u0065"# + Self.signedContent.dropFirst()
        let record = try challenged(aresText: aresText(signedContent: escaped)).json
        #expect(record["challenge"]?["acsSignedContent"]?.stringValue == Self.signedContent)
    }

    @Test func theCardNumberWrittenAsANumberLeavesTheRecordJSON() throws {
        // The requestor API passes messageExtension through: its free-form data may hold the card's digits as a number.
        var transaction = try challenged(aresText: aresText(signedContent: Self.signedContent))
        transaction.record(.received, bytes: Array(#"{"messageType":"RReq","data":{"ref":4000000000001000}}"#.utf8))
        let record = try JSONReader.parse(transaction.archivedJSON).value
        #expect(record["messages"]?.arrayValue?.count == 3)
        #expect(record["messages"]?.arrayValue?.first?["message"]?["acctNumber"]?.stringValue == "400000******1000")
    }

    @Test func aRecordTakenUpFromTheStoreMasksWhatItRecordsFromThen() throws {
        // Its trail came masked and it no longer knows the number: a later message carrying one is masked as it is recorded.
        let stored = try JSONReader.parse(try challenged(aresText: aresText(signedContent: Self.signedContent)).archivedJSON).value
        var restored = try #require(ThreeDSServer.Transaction(stored: stored))
        restored.record(.received, bytes: Array(#"{"messageType":"RReq","acctNumber":"4000000000001000"}"#.utf8))
        #expect(!String(decoding: restored.archivedJSON, as: UTF8.self).contains("4000000000001000"))
        #expect(restored.json["messages"]?.arrayValue?.last?["message"]?["acctNumber"]?.stringValue == "400000******1000")
        #expect(restored.json["challenge"]?["acsSignedContent"]?.stringValue == Self.signedContent, "the span found again in the stored trail")
    }

    @Test func theCardNumberIsMaskedInEveryMessageOfTheTrail() throws {
        let record = try challenged(aresText: aresText(signedContent: Self.signedContent)).archivedJSON
        #expect(!String(decoding: record, as: UTF8.self).contains("4000000000001000"))
        let trail = try JSONReader.parse(record).value["messages"]?.arrayValue ?? []
        #expect(trail.map { $0["direction"]?.stringValue } == ["sent", "received"])
        #expect(trail.first?["message"]?["acctNumber"]?.stringValue == "400000******1000")
    }
}
