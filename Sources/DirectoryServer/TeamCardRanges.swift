import Foundation
import Synchronization

/// The card ranges of each team's scope: a team's changes (`POST /admin/ds/card-ranges` under its name) are its PReqs'
/// and AReqs' alone, over the configured ranges; the changes of no team are those of no team. A team's changes go with its
/// reset. Each team's log has an epoch of its own, so that no serial one scope gave (or a team gave before its reset) is
/// taken by another: a 3DS Server that brings one is told 307 and asks for every range.
final class TeamCardRanges: Sendable {
    /// The no-team scope's log, and each team's that changed a range.
    private let shared: CardRangeLog
    private let teams = Mutex<[String: CardRangeLog]>([:])
    /// What a team that changed nothing reads: the configured ranges at serial 0 (never recorded into).
    private let unchanged: CardRangeLog

    /// The teams that may hold changes at once: each is a log the DS keeps until the team's reset.
    static let maxTeams = 1_000

    init(epoch: String?) {
        let log = epoch.map { CardRangeLog(epoch: $0) } ?? CardRangeLog()
        shared = log
        unchanged = CardRangeLog(epoch: log.epoch)
    }

    /// The log `team`'s PReqs and AReqs read.
    func log(_ team: String?) -> CardRangeLog {
        guard let team else { return shared }
        return teams.withLock { $0[team] } ?? unchanged
    }

    /// The log a change of `team` is recorded in, made for it when it has none; nil when ``maxTeams`` teams have one.
    /// `change`: the change's id, the same on every instance of a cluster (their team logs' epochs then agree).
    func logForChange(_ team: String?, change: String?) -> CardRangeLog? {
        guard let team else { return shared }
        return teams.withLock { teams in
            if let log = teams[team] { return log }
            guard teams.count < Self.maxTeams else { return nil }
            let log = CardRangeLog(epoch: Self.teamEpoch(shared.epoch, team: team, change: change ?? UUID().uuidString))
            teams[team] = log
            return log
        }
    }

    /// A team log's epoch: 8 base-36 characters of a hash of the harness's epoch, the team and the change that made the log,
    /// so that its serials (`epoch-n`) stay within the 20 characters of `serialNum`.
    static func teamEpoch(_ epoch: String, team: String, change: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a
        for byte in "\(epoch)|\(team)|\(change)".utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let text = String(hash % 2_821_109_907_456, radix: 36)  // 36^8
        return "t" + String(repeating: "0", count: 8 - text.count) + text
    }

    /// Drops `team`'s changes (its reset); how many there were.
    func drop(_ team: String) -> Int { teams.withLock { $0.removeValue(forKey: team) }?.count ?? 0 }
}
