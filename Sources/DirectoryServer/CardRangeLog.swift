import EMV3DS
import Foundation
import Synchronization

/// The DS's card ranges as a numbered history, so that a 3DS Server can ask for what changed since
/// its last PRes (PReq `serialNum`) instead of every range again. The configured ranges are serial
/// 0; each change (`actionInd` A add, M modify, D delete) makes the next serial. A serial is
/// written `<epoch>-<n>`, the epoch being this process's start, so a serial from before a restart is
/// unknown (Erro 307) and the 3DS Server loads every range again. In a cluster the epoch is the shared
/// store's, so that the instances' serials agree (a restarted instance knows serial 0, not the changes).
final class CardRangeLog: Sendable {
    private struct Change {
        let serial: Int
        let range: CardRangeData
    }

    let epoch: String
    private let changes = Mutex<[Change]>([])

    init(epoch: String = String(Int(Date().timeIntervalSince1970))) {
        self.epoch = epoch
    }

    var serial: String { text(changes.withLock { $0.last?.serial ?? 0 }) }

    /// Whether any change has been made: until then the configured ranges stand.
    var hasChanges: Bool { count > 0 }

    /// How many changes have been made.
    var count: Int { changes.withLock { $0.count } }

    private func text(_ number: Int) -> String { "\(epoch)-\(number)" }

    /// The number of a serial this DS gave, or nil.
    private func number(_ serial: String) -> Int? {
        guard serial.hasPrefix(epoch + "-"), let number = Int(serial.dropFirst(epoch.count + 1)), number >= 0 else { return nil }
        return number <= changes.withLock({ $0.last?.serial ?? 0 }) ? number : nil
    }

    /// Every range as it stands: `base` (the configured ranges) with the changes applied in order.
    func current(base: [CardRangeData]) -> [CardRangeData] {
        changes.withLock { changes in
            changes.reduce(into: base) { ranges, change in Self.apply(change.range, to: &ranges) }
        }
    }

    /// The changes after `serial`, in order, or nil when this DS never gave that serial.
    func changes(since serial: String) -> [CardRangeData]? {
        guard let after = number(serial) else { return nil }
        return changes.withLock { $0.filter { $0.serial > after }.map(\.range) }
    }

    /// Records a change and gives its serial. A change's range is checked by the caller against `current`.
    @discardableResult
    func record(_ range: CardRangeData) -> String {
        text(changes.withLock { changes in
            let serial = (changes.last?.serial ?? 0) + 1
            changes.append(Change(serial: serial, range: range))
            return serial
        })
    }

    static func apply(_ change: CardRangeData, to ranges: inout [CardRangeData]) {
        let same = { (range: CardRangeData) in range.startRange == change.startRange && range.endRange == change.endRange }
        var added = change
        added.actionInd = "A"  // as a full listing gives it
        switch change.actionInd {
        case "D": ranges.removeAll(where: same)
        case "M": if let index = ranges.firstIndex(where: same) { ranges[index] = added }
        default: ranges.append(added)
        }
    }
}

extension CardRangeData {
    /// Whether `pan` is in the range.
    func contains(pan: String) -> Bool { CardNumber.isIn(pan, from: startRange, to: endRange) }

    /// The versions the range offers: those both its ACS and the DS speak.
    var versions: ClosedRange<MessageVersion>? {
        let low = max(acsStartProtocolVersion, dsStartProtocolVersion), high = min(acsEndProtocolVersion, dsEndProtocolVersion)
        return low <= high ? low...high : nil
    }
}
