import Synchronization

/// Transactions by id, shared by every loop of a role. Bounded: past `capacity` the oldest
/// record is dropped, so a long benchmark cannot grow memory without end.
public final class TransactionStore<Record: Sendable>: Sendable {
    private struct State {
        var records: [String: Record] = [:]
        /// Insertion order, for eviction; `head` skips the evicted prefix without shifting.
        var order: [String] = []
        var head = 0
    }

    private let state = Mutex(State())
    public let capacity: Int

    public init(capacity: Int = 100_000) {
        precondition(capacity > 0, "a store holds at least one record")
        self.capacity = capacity
    }

    /// Stores `record` under `id`, replacing any earlier one.
    public func put(_ id: String, _ record: Record) {
        state.withLock { state in
            if state.records.updateValue(record, forKey: id) == nil {
                state.order.append(id)
            }
            evict(&state)
        }
    }

    /// Stores `record` under `id` unless a record is there: true when it was stored. The
    /// check and the insert are one step, so two concurrent callers cannot both win.
    public func insert(_ id: String, _ record: Record) -> Bool {
        state.withLock { state in
            guard state.records[id] == nil else { return false }
            state.records[id] = record
            state.order.append(id)
            evict(&state)
            return true
        }
    }

    /// Drops the oldest records past `capacity`.
    private func evict(_ state: inout State) {
        while state.records.count > capacity, state.head < state.order.count {
            state.records[state.order[state.head]] = nil
            state.head += 1
        }
        // Compact the order list once the evicted prefix is half of it.
        if state.head > 1024 && state.head * 2 > state.order.count {
            state.order.removeFirst(state.head)
            state.head = 0
        }
    }

    public func get(_ id: String) -> Record? { state.withLock { $0.records[id] } }

    /// Changes the record under `id` in place; returns the new record, or nil if there is none.
    @discardableResult
    public func update<Result>(_ id: String, _ change: (inout Record) -> Result) -> Result? {
        state.withLock { state -> Result? in
            guard var record = state.records[id] else { return nil }
            let result = change(&record)
            state.records[id] = record
            return result
        }
    }

    public var count: Int { state.withLock { $0.records.count } }
}
