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

/// A scenario pinned for the next `remaining` transactions of a target.
public struct Pin: Sendable {
    public let target: PinTarget
    public let scenario: Scenario
    public var remaining: Int
}

/// Pins set through the admin API; taking one is atomic, so concurrent transactions on one
/// PAN each get their own use and a count is never overrun.
public final class PinBoard: Sendable {
    private let pins = Mutex<[PinTarget: [Pin]]>([:])

    public init() {}

    /// Adds a pin behind those already set for its target (they are used first).
    public func add(_ scenario: Scenario, for target: PinTarget, count: Int) -> Pin {
        let pin = Pin(target: target, scenario: scenario, remaining: count)
        pins.withLock { $0[target, default: []].append(pin) }
        return pin
    }

    /// Uses one pin: the SDK transaction's if there is one, else the PAN's.
    public func take(pan: String, sdkTransID: String?) -> Scenario? {
        pins.withLock { pins in
            for target in [sdkTransID.map(PinTarget.sdkTransID), .pan(pan)].compactMap({ $0 }) {
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

    public var all: [Pin] { pins.withLock { $0.values.flatMap { $0 } } }

    /// Removes the pins of `target`, or all; returns how many were removed.
    @discardableResult
    public func remove(_ target: PinTarget?) -> Int {
        pins.withLock { pins in
            guard let target else {
                defer { pins = [:] }
                return pins.values.reduce(0) { $0 + $1.count }
            }
            return pins.removeValue(forKey: target)?.count ?? 0
        }
    }
}
