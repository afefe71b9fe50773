public import JSON

/// A request or response whose body may come with the value it was written from (``WrittenJSON``: a role of this process
/// called in process).
public protocol WrittenBody {
    var body: [UInt8] { get }
    var written: WrittenJSON? { get }
}

extension WrittenBody {
    /// `body` as already read: the value it was written from, unless the body was changed since.
    public var writtenJSON: JSONValue? { written?.value(ifWrittenAs: body) }

    /// The body as JSON: the value it was written from, else parsed; nil when it is not JSON.
    public var bodyJSON: JSONValue? { writtenJSON ?? (try? JSONReader.parse(body).value) }
}

extension HTTPRequest: WrittenBody {}
extension HTTPResponse: WrittenBody {}
