import Synchronization

/// The card ranges of each team's scope: a team's changes (`POST /admin/ds/card-ranges` under its name) are its PReqs'
/// and AReqs' alone, over the configured ranges; the changes of no team are those of no team. Each scope numbers its own
/// serials from one epoch (a cluster's: the instances agree). A team's changes go with its reset.
final class TeamCardRanges: Sendable {
    private let epoch: String
    /// The no-team scope's log, and each team's that changed a range.
    private let shared: CardRangeLog
    private let teams = Mutex<[String: CardRangeLog]>([:])
    /// What a team that changed nothing reads: the configured ranges at serial 0 (never recorded into).
    private let unchanged: CardRangeLog

    /// The teams that may hold changes at once: each is a log the DS keeps until the team's reset.
    static let maxTeams = 1_000

    init(epoch: String?) {
        let log = epoch.map { CardRangeLog(epoch: $0) } ?? CardRangeLog()
        self.epoch = log.epoch
        shared = log
        unchanged = CardRangeLog(epoch: log.epoch)
    }

    /// The log `team`'s PReqs and AReqs read.
    func log(_ team: String?) -> CardRangeLog {
        guard let team else { return shared }
        return teams.withLock { $0[team] } ?? unchanged
    }

    /// The log a change of `team` is recorded in, made for it when it has none; nil when ``maxTeams`` teams have one.
    func logForChange(_ team: String?) -> CardRangeLog? {
        guard let team else { return shared }
        return teams.withLock { teams in
            if let log = teams[team] { return log }
            guard teams.count < Self.maxTeams else { return nil }
            let log = CardRangeLog(epoch: epoch)
            teams[team] = log
            return log
        }
    }

    /// Drops `team`'s changes (its reset); how many there were.
    func drop(_ team: String) -> Int { teams.withLock { $0.removeValue(forKey: team) }?.count ?? 0 }
}
