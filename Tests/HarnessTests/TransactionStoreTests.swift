import Store
import Synchronization
import Testing

@Suite("Transaction store: bounded, and what it drops is told")
struct TransactionStoreTests {
    /// Challenge timers kept evicted transactions alive until their time limit (issue 12,
    /// item 11): the store hands each record it drops for room to `onEvict`, and the ACS
    /// cancels the record's timer there.
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
}
