import Foundation
import Synchronization

/// What a pin applies to: the next transactions of a card, or one SDK transaction.
public enum PinTarget: Sendable, Hashable, CustomStringConvertible {
    case pan(String)
    case sdkTransID(String)

    public var description: String {
        switch self {
        case .pan(let pan): "pan \(pan)"
        case .sdkTransID(let id): "sdkTransID \(id)"
        }
    }
}

/// A scenario pinned for the next `remaining` transactions of a target, until it expires.
public struct Pin: Sendable {
    /// The same on every instance of a cluster, where the store counts the pin's uses (``ScenarioSource/shareCounts(_:)``).
    public let id: String
    public let target: PinTarget
    /// The team whose transactions it applies to (nil: those of no team).
    public let team: String?
    public let scenario: Scenario
    public var remaining: Int
    public let expires: ContinuousClock.Instant
}

/// Pins set through the admin API; taking one is atomic, so concurrent transactions on one
/// PAN each get their own use and a count is never overrun. Pins on ids that never come
/// would stay forever: the board holds at most `capacity` and each expires.
public final class PinBoard: Sendable {
    /// A board that is full refuses new pins until some are used, removed or expired.
    public struct Full: Error, Sendable {
        public let capacity: Int
    }

    public let capacity: Int
    private let pins = Mutex<[Slot: [Pin]]>([:])

    /// Where a pin waits: its target within its team's scope.
    private struct Slot: Hashable {
        let team: String?
        let target: PinTarget
    }
    /// A pin lives this long unless it says (`expiresIn`), and at most `maxLifetime`; so do armed PRes faults, and the
    /// cluster's store counts both as long.
    public static let defaultLifetime = Duration.seconds(3600), maxLifetime = Duration.seconds(86_400)

    public init(capacity: Int = 1_000) { self.capacity = capacity }

    /// Adds a pin behind those already set for its target (they are used first), for `lifetime`.
    public func add(_ scenario: Scenario, for target: PinTarget, team: String? = nil, count: Int, lifetime: Duration = PinBoard.defaultLifetime,
                    id: String? = nil) throws(Full) -> Pin {
        let now = ContinuousClock.now
        let pin = Pin(id: id ?? UUID().uuidString.lowercased(), target: target, team: team, scenario: scenario, remaining: count, expires: now + lifetime)
        let added = pins.withLock { pins -> Bool in
            Self.dropExpired(&pins, at: now)
            guard pins.values.reduce(0, { $0 + $1.count }) < capacity else { return false }
            pins[Slot(team: team, target: target), default: []].append(pin)
            return true
        }
        guard added else { throw Full(capacity: capacity) }
        return pin
    }

    private static func dropExpired(_ pins: inout [Slot: [Pin]], at now: ContinuousClock.Instant) {
        for (target, queue) in pins {
            let live = queue.filter { $0.expires > now }
            if live.count != queue.count { pins[target] = live.isEmpty ? nil : live }
        }
    }

    /// Uses one pin of `team`'s: the SDK transaction's if there is one, else the PAN's.
    public func take(pan: String, sdkTransID: String?, team: String? = nil) -> Scenario? {
        let now = ContinuousClock.now
        return pins.withLock { pins in
            // Nearly always: no pin at all, and the list of targets need not be made.
            guard !pins.isEmpty else { return nil }
            for target in Self.slots(pan: pan, sdkTransID: sdkTransID, team: team) {
                if let queue = pins[target], queue.contains(where: { $0.expires <= now }) {
                    let live = queue.filter { $0.expires > now }
                    pins[target] = live.isEmpty ? nil : live
                }
                guard var queue = pins[target], !queue.isEmpty else { continue }
                let scenario = queue[0].scenario
                queue[0].remaining -= 1
                if queue[0].remaining == 0 { queue.removeFirst() }
                pins[target] = queue.isEmpty ? nil : queue
                return scenario
            }
            return nil
        }
    }

    /// The pin next in line for a transaction (its SDK transaction's, else its card's), left in place: in a cluster
    /// the store counts its uses, and ``used(_:exhausted:)`` says what came of one.
    public func first(pan: String, sdkTransID: String?, team: String? = nil) -> Pin? {
        let now = ContinuousClock.now
        return pins.withLock { pins in
            guard !pins.isEmpty else { return nil }
            for target in Self.slots(pan: pan, sdkTransID: sdkTransID, team: team) {
                if let pin = pins[target]?.first(where: { $0.expires > now }) { return pin }
            }
            return nil
        }
    }

    /// One use of pin `id` taken in the store (`exhausted` false), or none left there (true: dropped here too).
    public func used(_ id: String, exhausted: Bool) {
        pins.withLock { pins in
            for (target, queue) in pins {
                guard let index = queue.firstIndex(where: { $0.id == id }) else { continue }
                var queue = queue
                queue[index].remaining -= exhausted ? queue[index].remaining : 1
                if queue[index].remaining <= 0 { queue.remove(at: index) }
                pins[target] = queue.isEmpty ? nil : queue
                return
            }
        }
    }

    /// Where a transaction's pins wait, in the order they are used.
    private static func slots(pan: String, sdkTransID: String?, team: String?) -> [Slot] {
        [sdkTransID.map { Slot(team: team, target: .sdkTransID($0)) }, Slot(team: team, target: .pan(pan))].compactMap { $0 }
    }

    /// The pins of `team`'s scope (nil: those of no team).
    public func all(team: String? = nil) -> [Pin] {
        let now = ContinuousClock.now
        return pins.withLock { $0.values.flatMap { $0 }.filter { $0.team == team && $0.expires > now } }
    }

    /// Removes the pins of `target` in `team`'s scope, or all of that scope's; returns how many were removed.
    @discardableResult
    public func remove(_ target: PinTarget?, team: String? = nil) -> Int {
        pins.withLock { pins in
            guard let target else {
                let removed = pins.keys.filter { $0.team == team }
                return removed.reduce(0) { $0 + (pins.removeValue(forKey: $1)?.count ?? 0) }
            }
            return pins.removeValue(forKey: Slot(team: team, target: target))?.count ?? 0
        }
    }
}
