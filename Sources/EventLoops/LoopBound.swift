/// An object that belongs to one loop: the reference may travel between threads, but the
/// object is used only on its loop, and every access checks that (as swift-nio's
/// `NIOLoopBound`). A violation stops the process at the access, instead of corrupting state
/// unseen. A struct around the reference: binding costs no allocation.
public struct LoopBound<Value: AnyObject>: @unchecked Sendable {
    public let loop: EventLoop
    private let object: Value

    /// May be made anywhere; only access is confined to `loop`.
    public init(_ object: Value, on loop: EventLoop) {
        self.loop = loop
        self.object = object
    }

    public var value: Value {
        precondition(loop.inLoop, "an object bound to loop \(loop.index) used from another thread")
        return object
    }
}
