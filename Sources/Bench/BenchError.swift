/// Why a benchmark cannot run as asked.
public struct BenchError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) { self.description = description }
}
