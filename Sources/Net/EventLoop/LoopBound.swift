/// A value that belongs to one loop: it may travel between threads, but it is read and
/// changed only on its loop, and every access checks that (as swift-nio's `NIOLoopBound`).
/// A violation stops the process at the access, instead of corrupting state unseen.
public final class LoopBound<Value>: @unchecked Sendable {
    public let loop: EventLoop
    private var stored: Value

    /// May be made anywhere; only access is confined to `loop`.
    public init(_ value: Value, on loop: EventLoop) {
        self.loop = loop
        stored = value
    }

    public var value: Value {
        get {
            precondition(loop.inLoop, "a value bound to loop \(loop.index) read from another thread")
            return stored
        }
        set {
            precondition(loop.inLoop, "a value bound to loop \(loop.index) changed from another thread")
            stored = newValue
        }
    }
}
