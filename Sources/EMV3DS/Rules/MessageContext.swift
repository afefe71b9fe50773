public import JSON

/// What validation knows beyond the message itself: the version, the transaction's channel
/// and category (an RReq carries neither), and the message this one answers.
public struct MessageContext: Sendable {
    public var version: MessageVersion
    public var channel: DeviceChannel?
    public var category: MessageCategory?
    /// The message this one answers (the AReq for an ARes), for rules that depend on it.
    public var request: JSONValue?

    public init(version: MessageVersion, channel: DeviceChannel? = nil, category: MessageCategory? = nil, request: JSONValue? = nil) {
        self.version = version
        self.channel = channel
        self.category = category
        self.request = request
    }

    /// The context for `message`, its channel and category settled once: the message's own
    /// `deviceChannel` and `messageCategory`, else its request's, else the transaction's.
    func resolved(for message: JSONValue) -> MessageContext {
        var context = self
        context.channel = (message["deviceChannel"] ?? request?["deviceChannel"])?.stringValue.flatMap(DeviceChannel.init(rawValue:)) ?? channel
        context.category = (message["messageCategory"] ?? request?["messageCategory"])?.stringValue.flatMap(MessageCategory.init(rawValue:)) ?? category
        return context
    }
}
