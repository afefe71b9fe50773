import Synchronization

/// This instance's URL as the others of its cluster reach it, set once its listener is bound.
final class InstanceURL: Sendable {
    private let url = Mutex<String?>(nil)
    func set(_ value: String) { url.withLock { $0 = value } }
    var value: String? { url.withLock { $0 } }
}
