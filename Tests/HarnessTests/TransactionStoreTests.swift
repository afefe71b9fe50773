@testable import Store
import Synchronization
import Testing

@Suite("Transaction store: bounded, and what it drops is told")
struct TransactionStoreTests {
    /// A challenge timer must not keep an evicted transaction alive until its time limit: the store
    /// hands each record it drops for room to `onEvict`, and the ACS cancels the record's timer there.
    @Test func recordsDroppedForRoomGoToOnEvictOldestFirst() {
        let evicted = Mutex<[Int]>([])
        let store = TransactionStore<Int>(capacity: 2) { record in evicted.withLock { $0.append(record) } }
        store.put("a", 1)
        store.put("b", 2)
        store.put("a", 10)  // a replacement is no eviction
        #expect(evicted.withLock { $0 } == [])
        store.put("c", 3)
        #expect(evicted.withLock { $0 } == [10])
        #expect(store.insert("d", 4) && !store.insert("d", 5))
        #expect(evicted.withLock { $0 } == [10, 2])
        #expect(store.get("c") == 3 && store.get("d") == 4 && store.count == 2)
    }

    /// A record that is settled or under way, as the roles' records are.
    private struct Leg: ArchivableRecord {
        var name: String
        var isSettled: Bool
        var archivedJSON: [UInt8] { Array(#"{"name":"\#(name)"}"#.utf8) }
    }

    /// With the store on, memory is its hot cache, not every record of every role up to maxTransactions
    /// (12 KB a transaction): past its bound the oldest settled records leave it (the archive answers
    /// for them), and transactions under way stay.
    @Test func pastItsMemoryBoundSettledRecordsLeaveMemoryAndTheArchiveAnswersForThem() async {
        let archive = DictionaryArchive()
        let store = TransactionStore<Leg>(capacity: 100, archive: archive, role: "acs", memoryBound: 2)
        store.put("challenge", Leg(name: "challenge", isSettled: false))
        store.put("frictionless-1", Leg(name: "frictionless-1", isSettled: true))
        store.put("frictionless-2", Leg(name: "frictionless-2", isSettled: true))
        store.put("frictionless-3", Leg(name: "frictionless-3", isSettled: true))
        // The challenge under way is the oldest and stays; the oldest settled records made room.
        #expect(store.get("challenge") != nil)
        #expect(store.get("frictionless-1") == nil && store.get("frictionless-3") != nil)
        #expect(store.count == 2 && store.stored == 4)
        #expect(await store.json("frictionless-1") == Array(#"{"name":"frictionless-1"}"#.utf8))
        // Once settled, the challenge leaves in its turn.
        store.update("challenge") { $0.isSettled = true }
        store.put("frictionless-4", Leg(name: "frictionless-4", isSettled: true))
        store.put("frictionless-5", Leg(name: "frictionless-5", isSettled: true))
        #expect(store.get("challenge") == nil)
        #expect(await store.json("challenge") == Array(#"{"name":"challenge"}"#.utf8))
        #expect(store.count == 2 && store.stored == 6)
    }

    /// Without an archive there is nowhere else to answer from: every record stays, to capacity.
    @Test func withoutAnArchiveEveryRecordStaysToCapacity() {
        let store = TransactionStore<Leg>(capacity: 100, archive: nil, role: "acs", memoryBound: 2)
        for index in 0..<10 { store.put("t\(index)", Leg(name: "t\(index)", isSettled: true)) }
        #expect(store.count == 10 && store.get("t0") != nil)
    }

    /// Ids in the form the harness makes (lowercase UUIDs) are kept as their 128 bits; every other id as its string.
    /// Either way an id is found as it was stored, and read back byte for byte.
    @Test func anIdIsFoundAndReadBackAsStoredWhetherOrNotItIsALowercaseUUID() {
        let ids = ["8a880dc0-d2d2-4067-bcb1-b08d1690b26e", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-1fff-bfff-ffffffffffff",
                   "8A880DC0-D2D2-4067-BCB1-B08D1690B26E", "8a880dc0d2d24067bcb1b08d1690b26e", "8a880dc0-d2d2-4067-bcb1-b08d1690b26g",
                   "8a880dc0-d2d2-4067-bcb1_b08d1690b26e", "", "card-range-1", "8a880dc0-d2d2-4067-bcb1-b08d1690b26e ", "é"]
        for id in ids { #expect(RecordKey(id).id == id) }
        #expect(RecordKey(ids[0]) == .uuid(0x8a88_0dc0_d2d2_4067, 0xbcb1_b08d_1690_b26e))
        #expect(ids.dropFirst(3).allSatisfy { if case .other = RecordKey($0) { true } else { false } })

        let store = TransactionStore<Int>(capacity: 100)
        for (index, id) in ids.enumerated() { store.put(id, index) }
        #expect(ids.enumerated().allSatisfy { store.get($0.element) == $0.offset })
        // An uppercase UUID is another id than its lowercase twin, as the strings are.
        #expect(store.count == ids.count && store.get("8a880dc0-d2d2-4067-bcb1-b08d1690b26E") == nil)
        #expect(store.newest(limit: 100).map(\.id) == ids.reversed())
    }

    /// Eviction reaches ids kept as their bits as it reaches any other: oldest first, each told once.
    @Test func recordsUnderUUIDIdsAreDroppedForRoomOldestFirst() {
        let evicted = Mutex<[Int]>([])
        let store = TransactionStore<Int>(capacity: 2) { record in evicted.withLock { $0.append(record) } }
        let ids = (1...4).map { "00000000-0000-1000-8000-00000000000\($0)" }
        for (index, id) in ids.enumerated() { store.put(id, index) }
        #expect(evicted.withLock { $0 } == [0, 1])
        #expect(store.get(ids[0]) == nil && store.get(ids[2]) == 2 && store.get(ids[3]) == 3)
        #expect(store.newest(limit: 5).map(\.id) == [ids[3], ids[2]])
    }
}
