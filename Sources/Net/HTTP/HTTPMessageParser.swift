import CHTTPParser

/// A head and body parsed off the wire by Node's http_parser.
struct ParsedMessage: Sendable {
    var method: HTTPMethod = .get
    var target = ""
    var statusCode = 0
    var headers = HTTPHeaders()
    var body: [UInt8] = []
    var versionMinor = 1
    var keepAlive = true
}

/// Why a message could not be parsed: each maps to one HTTP status.
enum ParseFailure: Error, Equatable {
    case headersTooLarge
    case bodyTooLarge
    case malformed(String)
    /// Not HTTP/1.x.
    case versionNotSupported(String)

    /// The answer a server gives a request stream it cannot read on.
    func refusal(maxHeaderBytes: Int, maxBodyBytes: Int) -> HTTPError {
        switch self {
        case .headersTooLarge: HTTPError(.headerFieldsTooLarge, "request header block exceeds \(maxHeaderBytes) bytes")
        case .bodyTooLarge: HTTPError(.payloadTooLarge, "request body exceeds \(maxBodyBytes) bytes")
        case .malformed(let reason): HTTPError(.badRequest, "malformed HTTP request: \(reason)")
        case .versionNotSupported(let version): HTTPError(.httpVersionNotSupported, "\(version) is not supported; use HTTP/1.1")
        }
    }
}

/// Incremental HTTP/1.1 parser over `http_parser` (requests or responses), with our
/// size limits enforced in its callbacks. Feed it bytes as they arrive; complete
/// messages come out through ``onMessage`` in order, so pipelined requests queue up.
final class HTTPMessageParser {
    let maxHeaderBytes: Int
    let maxBodyBytes: Int
    var onMessage: ((ParsedMessage) -> Void)?
    /// A request's head asked `Expect: 100-continue` and its body is within the limit.
    var onExpectContinue: (() -> Void)?
    /// True between the first byte of a message and its end.
    private(set) var inMessage = false

    private let parser: UnsafeMutablePointer<http_parser>
    private let kind: http_parser_type
    private var message = ParsedMessage()
    private var url: [UInt8] = []
    private var field: [UInt8] = []
    private var value: [UInt8] = []
    private var readingValue = false
    private var headerBytes = 0
    private var failure: ParseFailure?
    /// Requests only: what http_parser's lenient build lets through is checked here first.
    private var heads = HeadLineChecker()

    init(kind: http_parser_type, maxHeaderBytes: Int, maxBodyBytes: Int) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.kind = kind
        parser = .allocate(capacity: 1)
        http_parser_init(parser, kind)
        parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit { parser.deallocate() }

    /// Parses `bytes`; throws at the first malformed or oversized message.
    ///
    /// A request asking to upgrade the protocol (`Upgrade: h2c`, `websocket`) is a plain
    /// HTTP/1.1 request to this server, which ignores the header (RFC 9110, 7.8): it is
    /// delivered, and parsing goes on after it. `CONNECT` is refused before delivery, so
    /// either way one request gets one answer.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(ParseFailure) {
        if let failure { throw failure }
        var rest = bytes
        while !rest.isEmpty {
            var segment = rest
            // A request head goes to http_parser once its lines are checked; the body as it comes.
            if kind == HTTP_REQUEST, heads.inHead {
                switch heads.scan(rest) {
                case .failure(let error):
                    failure = error
                    throw error
                case .success(let count): segment = UnsafeRawBufferPointer(rebasing: rest[..<count])
                }
            }
            let parsed = try execute(segment)
            rest = UnsafeRawBufferPointer(rebasing: rest[parsed...])
        }
    }

    /// Runs http_parser over `bytes`; returns how many it took: all of them, or up to the end
    /// of a request (it pauses there so the next head is checked) or of an upgrade request.
    private func execute(_ bytes: UnsafeRawBufferPointer) throws(ParseFailure) -> Int {
        let parsed = bytes.withMemoryRebound(to: CChar.self) {
            http_parser_execute(parser, &Self.settings, $0.baseAddress, $0.count)
        }
        if let failure { throw failure }
        var errno = http_errno(rawValue: parser.pointee.http_errno)
        if errno == HPE_PAUSED {
            http_parser_pause(parser, 0)
            errno = HPE_OK
        }
        // An error first: an upgrade request whose body fails keeps its upgrade flag, and what
        // follows must not be read as another request.
        guard errno == HPE_OK else { throw fail(with: String(cString: http_errno_description(errno))) }
        if parser.pointee.upgrade != 0 {
            // http_parser stops after a complete upgrade request; start afresh on what follows.
            http_parser_init(parser, kind)
            parser.pointee.data = Unmanaged.passUnretained(self).toOpaque()
            return parsed
        }
        if (parsed != bytes.count && kind != HTTP_REQUEST) || parsed == 0 {
            throw fail(with: String(cString: http_errno_description(errno)))
        }
        return parsed
    }

    private func fail(with reason: String) -> ParseFailure {
        let error = ParseFailure.malformed(reason)
        failure = error
        return error
    }

    /// Tells the parser the peer closed; completes a response delimited by close.
    func finish() throws(ParseFailure) {
        http_parser_execute(parser, &Self.settings, nil, 0)
        if let failure { throw failure }
        if http_errno(rawValue: parser.pointee.http_errno) != HPE_OK { throw .malformed("message cut short") }
    }

    // MARK: callbacks

    /// Records the failure and stops the parser. -1, because 1 from on_headers_complete
    /// would mean "skip the body" rather than "error".
    private func fail(_ failure: ParseFailure) -> Int32 {
        self.failure = failure
        return -1
    }

    private func countHeaderBytes(_ count: Int) -> Int32 {
        headerBytes += count
        return headerBytes > maxHeaderBytes ? fail(.headersTooLarge) : 0
    }

    private func storeHeader() {
        guard !field.isEmpty else { return }
        message.headers.add(String(decoding: field, as: UTF8.self), String(decoding: value, as: UTF8.self))
        field.removeAll(keepingCapacity: true)
        value.removeAll(keepingCapacity: true)
    }

    private static func instance(_ parser: UnsafeMutablePointer<http_parser>?) -> HTTPMessageParser {
        Unmanaged<HTTPMessageParser>.fromOpaque(parser!.pointee.data).takeUnretainedValue()
    }

    private static func bytes(_ at: UnsafePointer<CChar>?, _ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: at, count: count)
    }

    nonisolated(unsafe) private static var settings: http_parser_settings = {
        var settings = http_parser_settings()
        settings.on_message_begin = { parser in
            let this = instance(parser)
            this.inMessage = true
            this.message = ParsedMessage()
            this.url.removeAll(keepingCapacity: true)
            this.headerBytes = 0
            this.readingValue = false
            return 0
        }
        settings.on_url = { parser, at, count in
            let this = instance(parser)
            this.url.append(contentsOf: bytes(at, count))
            return this.countHeaderBytes(count)
        }
        settings.on_header_field = { parser, at, count in
            let this = instance(parser)
            if this.readingValue {
                this.storeHeader()
                this.readingValue = false
            }
            this.field.append(contentsOf: bytes(at, count))
            return this.countHeaderBytes(count + 4)  // ": " and CRLF count toward the block
        }
        settings.on_header_value = { parser, at, count in
            let this = instance(parser)
            this.readingValue = true
            this.value.append(contentsOf: bytes(at, count))
            return this.countHeaderBytes(count)
        }
        settings.on_headers_complete = { parser in
            let this = instance(parser)
            this.storeHeader()
            this.readingValue = false
            guard let parser else { return 1 }
            let major = parser.pointee.http_major, minor = parser.pointee.http_minor
            if this.kind == HTTP_REQUEST {
                // RFC 9110 2.5: a later HTTP/1 minor version is read as 1.1; another major is not ours.
                guard major == 1 else { return this.fail(.versionNotSupported("HTTP/\(major).\(minor)")) }
                // A tunnel is not a request this server can route: one 400, never delivered.
                if http_method(rawValue: parser.pointee.method) == HTTP_CONNECT {
                    return this.fail(.malformed("CONNECT is not supported"))
                }
            }
            let length = parser.pointee.content_length
            if length != UInt64.max && length > UInt64(this.maxBodyBytes) { return this.fail(.bodyTooLarge) }
            if length != UInt64.max { this.message.body.reserveCapacity(Int(length)) }
            if this.kind == HTTP_REQUEST, minor >= 1, this.message.headers["Expect"]?.lowercased() == "100-continue" {
                this.onExpectContinue?()
            }
            return 0
        }
        settings.on_body = { parser, at, count in
            let this = instance(parser)
            guard this.message.body.count + count <= this.maxBodyBytes else { return this.fail(.bodyTooLarge) }
            this.message.body.append(contentsOf: bytes(at, count))
            return 0
        }
        settings.on_message_complete = { parser in
            let this = instance(parser)
            guard let parser else { return 1 }
            this.message.method = HTTPMethod(rawValue: String(cString: http_method_str(http_method(rawValue: parser.pointee.method))))
            this.message.target = String(decoding: this.url, as: UTF8.self)
            this.message.statusCode = Int(parser.pointee.status_code)
            this.message.versionMinor = Int(parser.pointee.http_minor)
            this.message.keepAlive = http_should_keep_alive(parser) != 0
            this.inMessage = false
            this.onMessage?(this.message)
            if this.kind == HTTP_REQUEST {
                // Pause so that feed() checks the next head's lines before http_parser reads it.
                this.heads.startHead()
                http_parser_pause(parser, 1)
            }
            return 0
        }
        return settings
    }()
}
