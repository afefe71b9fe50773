/// The shared store gave no answer (a query failed, or the store is closed): not the same as an answer of none, such as a
/// record that names no home.
public struct StoreUnavailable: Error, Sendable, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { "the shared store gave no answer: \(reason)" }
}
