/// JSON bytes with the value they were written from: a message one role of this process sends another in process is
/// read from its value, not parsed again (one parse per hop). Never on the wire.
///
/// The value counts only for the very bytes written from it: bytes changed since (a fault that spoils a message makes new
/// ones) are parsed as any others.
public struct WrittenJSON: Sendable {
    public let value: JSONValue
    public let bytes: [UInt8]

    /// `value` written. It must have no repeated member names: reading it stands for parsing bytes that the reader would
    /// find no duplicate in (a message the harness built, or one it read and checked).
    public init(_ value: JSONValue) {
        self.value = value
        bytes = JSONWriter.write(value)
    }

    /// `bytes` already read as `value` and found without a repeated name (a message read and checked, which a relay
    /// passes on as it came).
    public init(_ value: JSONValue, readFrom bytes: [UInt8]) {
        self.value = value
        self.bytes = bytes
    }

    /// The value, when `body` is the buffer written from it (the same storage, not only equal bytes: comparing would cost
    /// what it saves).
    public func value(ifWrittenAs body: [UInt8]) -> JSONValue? {
        guard body.count == bytes.count else { return nil }
        let same = body.withUnsafeBufferPointer { body in bytes.withUnsafeBufferPointer { $0.baseAddress == body.baseAddress } }
        return same ? value : nil
    }
}
