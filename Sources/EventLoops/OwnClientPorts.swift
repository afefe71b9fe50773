import Synchronization

/// The local ports of the connections a group's HTTP clients have open.
///
/// The roles call each other through the server's own listeners. A server shutting down
/// still accepts connections from these ports during its grace period, so a request
/// accepted before the signal can finish the calls it makes; everyone else is turned away.
/// Keyed by port alone: a stranger that happens to use the same source port within the
/// grace period is served one request, which is harmless.
public final class OwnClientPorts: Sendable {
    private let ports = Mutex<Set<Int>>([])

    public init() {}

    package func insert(_ port: Int) { _ = ports.withLock { $0.insert(port) } }
    package func remove(_ port: Int) { _ = ports.withLock { $0.remove(port) } }
    package func contains(_ port: Int) -> Bool { ports.withLock { $0.contains(port) } }
}
