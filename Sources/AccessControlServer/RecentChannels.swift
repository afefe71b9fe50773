import EMVCrypto
import Synchronization

/// The secure channels of this ACS's latest app challenges, to name the one a CReq was sealed with when it was not its
/// own challenge's (an SDK that kept an earlier challenge's key or reference number). Bounded: the oldest goes first.
final class RecentChannels: Sendable {
    struct Entry: Sendable {
        let acsTransID: String
        let sdkReferenceNumber: String
        let channel: SecureChannel
    }

    static let capacity = 64
    private let entries = Mutex<[Entry]>([])

    func add(_ entry: Entry) {
        entries.withLock { entries in
            entries.append(entry)
            if entries.count > Self.capacity { entries.removeFirst(entries.count - Self.capacity) }
        }
    }

    /// The channels of challenges other than `acsTransID`'s, newest first, and their reference numbers.
    func others(than acsTransID: String) -> (references: [String], channels: [(acsTransID: String, channel: SecureChannel)]) {
        let others = entries.withLock { $0.reversed().filter { $0.acsTransID != acsTransID } }
        return (others.map(\.sdkReferenceNumber), others.map { ($0.acsTransID, $0.channel) })
    }
}
