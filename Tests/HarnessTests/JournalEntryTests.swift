import EMV3DS
import Foundation
import JSON
@testable import Journal
@testable import Store
import Synchronization
import Testing

/// An archive in a dictionary, writing at once: what the journal saves, read back by a new journal (a
/// restart); what the roles' stores answer from for records that left memory.
final class DictionaryArchive: TransactionArchive {
    private let records = Mutex<[String: [UInt8]]>([:])
    func save(role: String, id: String, _ encode: @escaping @Sendable () -> [UInt8]) {
        let json = encode()
        records.withLock { $0[role + "/" + id] = json }
    }
    func record(role: String, id: String) async -> ArchivedRecord? {
        records.withLock { $0[role + "/" + id] }.map { ArchivedRecord(role: role, id: id, updated: 0, json: $0) }
    }
    func recent(role: String, limit: Int) async -> [ArchivedRecord] { [] }
    func recentAtStart(role: String, limit: Int) -> [ArchivedRecord] { [] }
    var status: ArchiveStatus { ArchiveStatus() }
    func close(timeoutSeconds: Double) {}
    func stored(_ id: String) -> String { String(decoding: records.withLock { $0["journal/" + id] } ?? [], as: UTF8.self) }
}

@Suite("Journal entries: stored compactly, read back whole")
struct JournalEntryTests {
    private let pan = "4000000000001000"
    private let ares = Array(#"{"messageType":"ARes","transStatus":"Y","dsTransID":"d1"}"#.utf8)

    private func journal(_ archive: DictionaryArchive) async -> Journal {
        let journal = Journal(capacity: 10, archive: archive)
        await journal.open(JournalEntry(dsTransID: "d1", ids: TransactionIDs(threeDSServerTransID: "s1", dsTransID: "d1"), pan: pan,
                                  version: "2.2.0", channel: "01", scenario: "frictionless-y"))
        journal.message("d1", from: .threeDSServer, to: .directoryServer, type: "AReq",
                        body: Array(#"{"messageType":"AReq","acctNumber":"\#(pan)"}"#.utf8))
        journal.message("d1", from: .accessControlServer, to: .directoryServer, type: "ARes", body: ares)
        journal.message("d1", from: .directoryServer, to: .threeDSServer, type: "ARes", body: ares)
        journal.check("d1", .pass(.areqElements))
        journal.end("d1", transStatus: "Y", because: "ARes Y")
        return journal
    }

    @Test func aRelayedMessageIsStoredOnceAndChecksWithoutTheirTexts() async {
        let archive = DictionaryArchive()
        _ = await journal(archive)
        let stored = archive.stored("d1")
        #expect(stored.contains(#""sameAs":1"#))
        #expect(stored.components(separatedBy: #""messageType":"ARes""#).count == 2, "the ARes is written once")
        #expect(!stored.contains(ConformanceCheck.areqElements.text))
        #expect(!stored.contains(pan), "the card number is masked in the messages")
    }

    @Test func aRelayedMessageSharesItsFirstCopysBytesInMemory() async throws {
        let journal = Journal(capacity: 10)
        await journal.open(JournalEntry(dsTransID: "d2", ids: TransactionIDs(dsTransID: "d2"), pan: pan, version: "2.2.0", channel: "01", scenario: nil))
        // Two buffers of the same bytes, as the ACS's ARes and the DS's relay of it are.
        journal.message("d2", from: .accessControlServer, to: .directoryServer, type: "ARes", body: ares.map { $0 })
        journal.message("d2", from: .directoryServer, to: .threeDSServer, type: "ARes", body: ares.map { $0 })
        journal.message("d2", from: .threeDSServer, to: .directoryServer, type: "RRes", body: Array(#"{"messageType":"RRes"}"#.utf8))
        let messages = try #require(journal.entry("d2")?.messages)
        func storage(_ body: [UInt8]) -> UnsafeRawPointer? { body.withUnsafeBytes { $0.baseAddress } }
        #expect(messages[1].body == ares)
        #expect(storage(messages[1].body) == storage(messages[0].body), "the relayed ARes is the first one's bytes")
        #expect(storage(messages[2].body) != storage(messages[0].body))
    }

    @Test func theStoredEntryReadsBackWholeAfterARestart() async throws {
        let archive = DictionaryArchive()
        let inMemory = try #require(await journal(archive).json("d1"))
        let restarted = try #require(await Journal(capacity: 10, archive: archive).json("d1"))
        #expect(restarted == inMemory)
        let messages = try #require(restarted["messages"]?.arrayValue)
        #expect(messages.count == 3)
        #expect(messages[2]["message"] == messages[1]["message"])
        #expect(messages[2]["sameAs"] == nil)
        #expect(messages[2]["from"]?.stringValue == "DS")
        let check = try #require(restarted["checks"]?.arrayValue?.first)
        #expect(check["text"]?.stringValue == ConformanceCheck.areqElements.text)
        #expect(check["party"]?.stringValue == "3ds-server")
    }

    /// The AReq the DS relays to the ACS is the 3DS Server's with the DS's members: kept as what changed (no copy of the
    /// rest), and shown whole, as it was sent, by the inspector and an instance that reads the entry back.
    @Test func theRelayedAReqIsKeptAsWhatTheDSChanged() async throws {
        let archive = DictionaryArchive()
        let journal = Journal(capacity: 10, archive: archive)
        let received = Array(#"{"messageType":"AReq","acctNumber":"\#(pan)","sdkEncData":"eyJhbGciOi.long","purchaseAmount":"101"}"#.utf8)
        await journal.open(JournalEntry(dsTransID: "d4", ids: TransactionIDs(dsTransID: "d4"), pan: pan, version: "2.2.0", channel: "01", scenario: nil))
        journal.message("d4", from: .threeDSServer, to: .directoryServer, type: "AReq", body: received)
        var relayed = try JSONReader.parse(received).value
        relayed.set("deviceInfo", .string("eyJEViI6"))
        relayed.set("sdkEncData", nil)
        relayed.set("dsTransID", .string("d4"))
        relayed.set("purchaseAmount", .string("102"))
        journal.relayed("d4", from: .directoryServer, to: .accessControlServer, type: "AReq", of: .threeDSServer,
                        original: try JSONReader.parse(received).value, relayed: relayed, body: JSONWriter.write(relayed))
        journal.end("d4", because: "test")
        let stored = archive.stored("d4")
        #expect(stored.components(separatedBy: "\"messageType\":\"AReq\"").count == 2, "the AReq is written once: \(stored)")
        #expect(stored.contains(#""removed":["sdkEncData"]"#) && !stored.contains(pan))
        let shown = try #require(await Journal(capacity: 10, archive: archive).json("d4"))
        let sent = try #require(shown["messages"]?.arrayValue?.last?["message"])
        #expect(JSONWriter.string(sent) == JSONWriter.string(relayed).replacingOccurrences(of: pan, with: CardNumber.masked(pan)))
        // Read back by another instance, it is kept as changes still.
        let entry = try #require(JournalEntry(stored: try JSONReader.parse(Array(stored.utf8)).value))
        #expect(String(decoding: entry.archivedJSON, as: UTF8.self).contains(#""changesOf":0"#))
    }

    /// The relay's changes are read in one pass when the relay changed the message in place (as `JSONValue.set` does), and
    /// by name otherwise: both readings agree where both apply, and a moved member is left to the reading by name.
    @Test func aRelayChangedInPlaceIsReadInOnePassAsByName() throws {
        let original = try JSONReader.parse(Array(#"{"messageType":"AReq","sdkEncData":"e","purchaseAmount":"101","acctNumber":"4"}"#.utf8)).value
        var relayed = original
        relayed.set("deviceInfo", .string("d"))
        relayed.set("sdkEncData", nil)
        relayed.set("purchaseAmount", .string("102"))
        relayed.set("dsTransID", .string("t"))
        let before = try #require(original.objectMembers), after = try #require(relayed.objectMembers)
        let inPlace = try #require(JournalEntry.Changes.inPlace(before, after))
        let byName = JournalEntry.Changes.byName(before, after)
        #expect(inPlace.set.map(\.key) == ["purchaseAmount", "deviceInfo", "dsTransID"] && inPlace.set.map(\.key) == byName.set.map(\.key))
        #expect(inPlace.removed == ["sdkEncData"] && inPlace.removed == byName.removed)
        #expect(JournalEntry.Changes(of: 0, original: original, relayed: relayed)?.applied(to: original) == relayed)

        let moved = JSONValue.object([(key: "acctNumber", value: .string("4")), (key: "messageType", value: .string("AReq"))])
        #expect(JournalEntry.Changes.inPlace(try #require(moved.objectMembers), [(key: "messageType", value: .string("AReq")), (key: "acctNumber", value: .string("4"))]) == nil)
    }

    /// In a cluster an open entry is saved before each answer, and the instance that takes its transaction up reads it back
    /// and goes on recording: the entry read back writes the same record, and what it records next is added to it.
    @Test func anOpenEntryTakenUpFromTheStoreGoesOnWhereItWas() async throws {
        let archive = DictionaryArchive()
        let home = Journal(capacity: 10, archive: archive, savesBeforeAnswers: true)
        await home.open(JournalEntry(dsTransID: "d3", ids: TransactionIDs(dsTransID: "d3"), pan: pan, version: "2.2.0", channel: "01", scenario: "challenge-text"))
        home.message("d3", from: .accessControlServer, to: .directoryServer, type: "ARes", body: ares)
        home.message("d3", from: .directoryServer, to: .threeDSServer, type: "ARes", body: ares)
        home.message("d3", from: .sdk, to: .accessControlServer, type: "CReq", body: Array("not JSON".utf8), isJSON: false)
        home.check("d3", .fail(.challengeEnd, "not yet"))
        #expect(archive.stored("d3").isEmpty, "an open entry waits for the answer")
        home.saveChanged()
        let saved = archive.stored("d3")
        #expect(saved.contains(#""state":"open""#))

        let taker = Journal(capacity: 10, archive: archive, savesBeforeAnswers: true)
        await taker.takeUp("d3")
        let entry = try #require(taker.entry("d3"))
        // Read back, it writes the record it was read from (but offsets, which the times' milliseconds may move by one).
        func comparable(_ text: [UInt8]) throws -> String {
            var json = try JSONReader.parse(text).value
            json.set("durationMs", nil)
            json.set("messages", .array((json["messages"]?.arrayValue ?? []).map { var message = $0; message.set("offsetMs", nil); return message }))
            return JSONWriter.string(json)
        }
        #expect(try comparable(entry.archivedJSON) == comparable(Array(saved.utf8)))
        #expect(entry.messages[2].isJSON == false && entry.messages[1].body == entry.messages[0].body)
        taker.message("d3", from: .accessControlServer, to: .sdk, type: "CRes", body: Array(#"{"messageType":"CRes","transStatus":"Y"}"#.utf8))
        taker.end("d3", transStatus: "Y", because: "CRes Y")
        let ended = try #require(await Journal(capacity: 10, archive: archive).json("d3"))
        #expect(ended["state"]?.stringValue == "ended" && ended["messages"]?.arrayValue?.count == 4 && ended["scenario"]?.stringValue == "challenge-text")
        #expect(ended["checks"]?.arrayValue?.first?["id"]?.stringValue == ConformanceCheck.challengeEnd.rawValue)
    }
}
