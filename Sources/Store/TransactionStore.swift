import Synchronization

/// Transactions by id, shared by every loop of a role. Bounded: past `capacity` the oldest
/// record is dropped, so a long benchmark cannot grow memory without end. With an archive,
/// memory is its hot cache: past `memoryBound` the oldest settled records leave memory (the
/// archive has them, and answers for them), while transactions under way stay.
public final class TransactionStore<Record: Sendable>: Sendable {
    /// A record on the heap, so the table's slots are one pointer each: a table keeps up to
    /// twice the slots it has records (its growth), and a transaction is kilobytes inline.
    private final class Box {
        var record: Record
        init(_ record: Record) { self.record = record }
    }

    private struct State {
        var records: [RecordKey: Box] = [:]
        /// Insertion order, for eviction; `head` skips the evicted prefix without shifting.
        var order: [RecordKey] = []
        var head = 0
        /// Records stored since start, in memory or not.
        var stored = 0
    }

    private let state = Mutex(State())
    public let capacity: Int
    /// Called with each record dropped for room (outside the lock), so that what it owns,
    /// a timer for instance, ends with it.
    private let onEvict: (@Sendable (Record) -> Void)?

    /// Where each record goes after every change, to outlive the process; nil keeps them in memory only.
    private let archiving: Archiving?
    /// A class, so that reaching it costs a reference, not a copy of its closures.
    private final class Archiving: Sendable {
        let archive: any TransactionArchive
        let role: String
        let encode: @Sendable (Record) -> [UInt8]
        /// Records past this many in memory leave it once settled.
        let memoryBound: Int
        /// Takes the record in place (inout), so that asking does not copy a record out of its box.
        let isSettled: @Sendable (inout Record) -> Bool

        init(archive: any TransactionArchive, role: String, encode: @escaping @Sendable (Record) -> [UInt8], memoryBound: Int,
             isSettled: @escaping @Sendable (inout Record) -> Bool) {
            self.archive = archive
            self.role = role
            self.encode = encode
            self.memoryBound = memoryBound
            self.isSettled = isSettled
        }
    }

    public convenience init(capacity: Int = StoreDefaults.maxTransactions, onEvict: (@Sendable (Record) -> Void)? = nil) {
        self.init(capacity: capacity, onEvict: onEvict, archiving: nil)
    }

    /// A store whose records are also saved to `archive` under `role` after each change:
    /// memory stays the cache, the archive what survives a restart. Past `memoryBound` records in
    /// memory, the oldest settled ones leave it.
    public convenience init(capacity: Int = StoreDefaults.maxTransactions, archive: (any TransactionArchive)?, role: String, memoryBound: Int? = nil,
                            onEvict: (@Sendable (Record) -> Void)? = nil) where Record: ArchivableRecord {
        self.init(capacity: capacity, onEvict: onEvict, archiving: archive.map {
            Archiving(archive: $0, role: role, encode: { $0.archivedJSON }, memoryBound: max(1, memoryBound ?? capacity), isSettled: { $0.isSettled })
        })
    }

    private init(capacity: Int, onEvict: (@Sendable (Record) -> Void)?, archiving: Archiving?) {
        precondition(capacity > 0, "a store holds at least one record")
        self.capacity = capacity
        self.onEvict = onEvict
        self.archiving = archiving
    }

    /// Queues `record` for the archive: its JSON is made on the archive's thread, not here.
    private func archive(_ id: String, _ record: Record) {
        guard let archiving else { return }
        archiving.archive.save(role: archiving.role, id: id) { archiving.encode(record) }
    }

    /// Stores `record` under `id`, replacing any earlier one.
    public func put(_ id: String, _ record: Record) {
        let key = RecordKey(id)
        let evicted = state.withLock { state in
            if state.records.updateValue(Box(record), forKey: key) == nil {
                state.order.append(key)
                state.stored += 1
            }
            return evict(&state)
        }
        archive(id, record)
        if let onEvict { evicted.forEach(onEvict) }
    }

    /// Stores `record` under `id` unless a record is there: true when it was stored. The
    /// check and the insert are one step, so two concurrent callers cannot both win.
    public func insert(_ id: String, _ record: Record) -> Bool {
        let key = RecordKey(id)
        let (inserted, evicted) = state.withLock { state -> (Bool, [Record]) in
            guard state.records[key] == nil else { return (false, []) }
            state.records[key] = Box(record)
            state.order.append(key)
            state.stored += 1
            return (true, evict(&state))
        }
        if inserted { archive(id, record) }
        if let onEvict { evicted.forEach(onEvict) }
        return inserted
    }

    /// Drops the oldest records past `capacity`, then settled ones past the memory bound; returns them.
    private func evict(_ state: inout State) -> [Record] {
        var evicted: [Record] = []
        while state.records.count > capacity, state.head < state.order.count {
            if let box = state.records.removeValue(forKey: state.order[state.head]) { evicted.append(box.record) }
            state.head += 1
        }
        if let archiving, state.records.count > archiving.memoryBound {
            // A few of the oldest at a time (each insert adds one): a settled one leaves, one under
            // way goes to the back of the order, to be looked at again when it comes round.
            for _ in 0..<4 where state.records.count > archiving.memoryBound && state.head < state.order.count {
                let key = state.order[state.head]
                state.head += 1
                guard let box = state.records[key] else { continue }
                if archiving.isSettled(&box.record) {
                    state.records.removeValue(forKey: key)
                    evicted.append(box.record)
                } else {
                    state.order.append(key)
                }
            }
        }
        // Compact the order list once the evicted prefix is half of it.
        if state.head > 1024 && state.head * 2 > state.order.count {
            state.order.removeFirst(state.head)
            state.head = 0
        }
        return evicted
    }

    public func get(_ id: String) -> Record? {
        let key = RecordKey(id)
        return state.withLock { $0.records[key]?.record }
    }

    /// Takes record `id` up from the store that several instances share (`sharing`), when memory does not hold it: read,
    /// made a record by `restore` (nil: it cannot go on here), its home claimed for this instance (a compare-and-set from
    /// `previousHome`; without one, only where the store names no other instance), and kept. The record taken up; nil when
    /// memory holds it already (or took it meanwhile), or it was not taken up.
    public func takeUp(_ id: String, through sharing: any SharedWork, previousHome: String? = nil, restore: ([UInt8]) -> Record?) async -> Record? {
        guard sharing.isShared, let archiving, !contains(id), let stored = await archiving.archive.record(role: archiving.role, id: id),
              let record = restore(stored.json), await sharing.claimHome(of: RecordID(role: archiving.role, id: id), from: previousHome),
              insert(id, record) else { return nil }
        return record
    }

    /// True when memory holds a record under `id` (without copying it out).
    public func contains(_ id: String) -> Bool {
        let key = RecordKey(id)
        return state.withLock { $0.records[key] != nil }
    }

    /// Changes the record under `id` in place; returns the new record, or nil if there is none.
    @discardableResult
    public func update<Result>(_ id: String, _ change: (inout Record) -> Result) -> Result? {
        let key = RecordKey(id)
        let changed = state.withLock { state -> (Result, Record?)? in
            // The box is reached only under the lock: changed in place, no copy of the record
            // (but the one the archive takes).
            guard let box = state.records[key] else { return nil }
            let result = change(&box.record)
            return (result, archiving == nil ? nil : box.record)
        }
        if let record = changed?.1 { archive(id, record) }
        return changed?.0
    }

    /// Records in memory.
    public var count: Int { state.withLock { $0.records.count } }
    /// Records stored since start, in memory or not (past the memory bound, or past capacity).
    public var stored: Int { state.withLock { $0.stored } }
}

extension TransactionStore where Record: ArchivableRecord {
    /// The record's JSON: from memory, else as the archive last wrote it (a transaction of an
    /// earlier run, or one evicted from memory).
    public func json(_ id: String) async -> [UInt8]? {
        if let record = get(id) { return record.archivedJSON }
        guard let archiving else { return nil }
        return await archiving.archive.record(role: archiving.role, id: id)?.json
    }

    /// The JSON of up to `limit` records, newest first, that `include` accepts: memory, then the
    /// archive for records memory no longer holds. At most `scanLimit` records of each are looked at.
    public func newestJSON(limit: Int, scanLimit: Int = 10_000, where include: ([UInt8]) -> Bool) async -> [[UInt8]] {
        var found: [(id: String, json: [UInt8])] = []
        for (id, record) in newest(limit: scanLimit) where found.count < limit {
            let json = record.archivedJSON
            if include(json) { found.append((id, json)) }
        }
        guard found.count < limit, let archiving else { return found.map(\.json) }
        let seen = Set(found.map(\.id))
        for record in await archiving.archive.recent(role: archiving.role, limit: scanLimit) where found.count < limit && !seen.contains(record.id) {
            if include(record.json) { found.append((record.id, record.json)) }
        }
        return found.map(\.json)
    }
}

extension TransactionStore {
    /// Up to `limit` records, the newest first (by when they were first stored), that `include` accepts.
    public func newest(limit: Int, where include: (Record) -> Bool = { _ in true }) -> [(id: String, record: Record)] {
        // The ids are written back from their keys after the lock, not while the loops wait for it.
        state.withLock { state in
            var found: [(key: RecordKey, record: Record)] = []
            var index = state.order.count - 1
            while index >= state.head, found.count < limit {
                let key = state.order[index]
                if let box = state.records[key], include(box.record) { found.append((key, box.record)) }
                index -= 1
            }
            return found
        }.map { ($0.key.id, $0.record) }
    }
}

/// The limits a store has unless configured otherwise, each written once.
public enum StoreDefaults {
    /// The transactions each role keeps (`store.maxTransactions`); the oldest go first.
    public static let maxTransactions = 100_000
    /// The records an archive holds waiting for its writer; past them a save is counted as lost.
    public static let maxPendingRecords = 50_000
}
