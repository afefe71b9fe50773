public import Foundation

/// The one clock of an instance, injected into whatever reads the time.
///
/// Two readings, for two uses. What instances sharing a store must agree on (a record's stamp, a job's due time, a
/// challenge's deadline, who announced itself lately) is wall time in milliseconds since 1970. What one process measures
/// between two moments of its own (an SDK's challenge timeout) is monotonic, so that no change of the wall time moves it.
/// Tests give a clock that jumps.
public struct HarnessClock: Sendable {
    /// Milliseconds since 1970, now.
    public let wallMilliseconds: @Sendable () -> Int64
    /// The monotonic instant, now.
    public let instant: @Sendable () -> ContinuousClock.Instant

    /// The machine's clocks, or either reading replaced.
    public init(wallMilliseconds: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
                instant: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.wallMilliseconds = wallMilliseconds
        self.instant = instant
    }

    /// The machine's clocks.
    public static let system = HarnessClock()

    /// The wall time now, as a date.
    public func date() -> Date { Date(timeIntervalSince1970: Double(wallMilliseconds()) / 1000) }
}
