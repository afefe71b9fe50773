import Foundation

/// A data directory of a test's own for a `serve` it starts: harnesses that tests start side by side never share
/// a store (nor fill the repository's `data/`).
public func scratchDataDirectory(_ purpose: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("\(purpose)-\(UUID().uuidString)").path
}
