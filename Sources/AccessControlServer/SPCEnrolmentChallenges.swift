import JOSE
import Store
import Synchronization

/// The WebAuthn challenges the ACS issued for SPC enrolments (the enrolment page, `POST /acs/spc/enrol/challenge`):
/// a registration counts only with a challenge issued here, unexpired and not used before (WebAuthn Level 3, §7.1,
/// step 8), so a captured registration cannot be replayed. Bounded: the oldest go first.
final class SPCEnrolmentChallenges: Sendable {
    /// How long a challenge is good for: a person reading the enrolment page, then the platform's prompt.
    static let lifetime = Duration.seconds(600)
    static let capacity = 10_000
    private let issued = Mutex<(expiry: [[UInt8]: ContinuousClock.Instant], order: [[UInt8]])>(([:], []))
    private let clock: HarnessClock

    init(clock: HarnessClock) { self.clock = clock }

    /// A new challenge: 32 random bytes.
    func issue() -> [UInt8] {
        let challenge = randomBytes(32)
        let now = clock.instant()
        issued.withLock { issued in
            issued.expiry[challenge] = now + Self.lifetime
            issued.order.append(challenge)
            while issued.order.count > Self.capacity || issued.order.first.map({ issued.expiry[$0].map { $0 <= now } ?? true }) == true {
                issued.expiry[issued.order.removeFirst()] = nil
            }
        }
        return challenge
    }

    /// Whether `challenge` was issued here and is still good; it is good once.
    func take(_ challenge: [UInt8]) -> Bool {
        let now = clock.instant()
        return issued.withLock { issued in
            guard let expiry = issued.expiry.removeValue(forKey: challenge) else { return false }
            issued.order.removeAll { $0 == challenge }
            return expiry > now
        }
    }
}
