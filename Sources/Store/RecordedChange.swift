/// A change made through the balancer (a pin, a load mix, a card-range change), as an instance started later makes it too.
public struct RecordedChange: Sendable, Equatable {
    /// The change's id, which every instance applied it under (a pin's id).
    public let id: String
    /// What it changes (`pins`, `load-mix`): a later change of a kind may make the earlier ones pointless.
    public let kind: String
    public let method: String
    public let target: String
    public let contentType: String?
    public let body: [UInt8]
    /// Milliseconds since 1970 when it was made, and after which it is dropped, if ever.
    public let made: Int64
    public let expires: Int64?

    public init(id: String, kind: String, method: String, target: String, contentType: String?, body: [UInt8], made: Int64, expires: Int64?) {
        self.id = id
        self.kind = kind
        self.method = method
        self.target = target
        self.contentType = contentType
        self.body = body
        self.made = made
        self.expires = expires
    }
}
