import EMV3DS
import Synchronization

/// Cards issued to the cases of test runs. A transaction on one gets the scenario of its case,
/// as one on the scenario's own card does, and the run registry attaches it to that case: the
/// card binds a transaction as exactly as an `X-Harness-Case` tag, for a party whose test code
/// can choose a card but not a header.
public final class IssuedCards: Sendable {
    private let cards = Mutex<[String: String]>([:])

    public init() {}

    /// The name of the scenario `pan` was issued for, if it was.
    public func scenario(of pan: String) -> String? {
        cards.withLock { $0.isEmpty ? nil : $0[pan] }
    }

    /// A new card for `scenario`, like `pan` (its first six digits and its length, so the same
    /// card range and scheme take it), that passes the Luhn check and that neither `isTaken` nor
    /// an earlier issue claims.
    public func issue(like pan: String, for scenario: String, unless isTaken: (String) -> Bool) -> String {
        let prefix = String(pan.prefix(6))
        let middle = max(pan.count - prefix.count - 1, 1)
        return cards.withLock { cards in
            while true {
                let body = prefix + String((0..<middle).map { _ in Character(String(Int.random(in: 0...9))) })
                let card = body + String(CardNumber.luhnCheckDigit(for: body))
                if cards[card] == nil, !isTaken(card) {
                    cards[card] = scenario
                    return card
                }
            }
        }
    }

    /// Takes back a card issued before (read back with its run after a restart).
    public func restore(_ card: String, for scenario: String) {
        cards.withLock { $0[card] = scenario }
    }

    /// Withdraws cards whose run is no longer kept: they are ordinary cards again.
    public func withdraw(_ withdrawn: [String]) {
        guard !withdrawn.isEmpty else { return }
        cards.withLock { cards in for card in withdrawn { cards[card] = nil } }
    }
}
