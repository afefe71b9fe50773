public import EMV3DS
import Glibc
public import JSON
public import Net

extension HTTPResponse {
    /// An EMV message as an answer: plain JSON, HTTP 200 (an `Erro` too: it is a message, not a failure of HTTP).
    public static func emv(_ json: JSONValue, status: HTTPStatus = .ok) -> HTTPResponse {
        .emv(WrittenJSON(json), status: status)
    }

    /// An EMV message answered as `message`'s bytes, with its value for a role of this process that called in process.
    public static func emv(_ message: WrittenJSON, status: HTTPStatus = .ok) -> HTTPResponse {
        var response = HTTPResponse.emv(bytes: message.bytes, exchange: MessageExchange(answer: message.value), status: status)
        response.written = message
        return response
    }

    /// An EMV message answered as `bytes` (a relay passes on what it received; a fault spoils
    /// them), with what it is for the server's observer.
    public static func emv(bytes: [UInt8], exchange: MessageExchange?, status: HTTPStatus = .ok) -> HTTPResponse {
        var response = HTTPResponse(status: status, headers: .json, body: bytes)
        response.annotation = exchange
        return response
    }

    /// An `Erro` answer from `component` about an invalid message.
    public static func erro(_ invalid: InvalidMessage, from component: ErrorComponent) -> HTTPResponse {
        .emv(invalid.erro(from: component).json)
    }
}

extension HTTPRequest {
    /// The body of a request that must carry an EMV message: JSON by Content-Type.
    /// A wrong or missing Content-Type is Erro 101 (the message is not recognised).
    public func emvMessageBody() throws(InvalidMessage) -> [UInt8] {
        guard headers.mediaType == "application/json" else {
            throw InvalidMessage(.wrongContentType(headers["Content-Type"]), about: bodyJSON)
        }
        return body
    }
}

/// A peer's answer as its reader gets it: the bytes, and the value they were written from when the peer is a role of this
/// process (one parse per hop: ``MessageEnvelope/read(_:written:rules:request:channel:)`` reads it instead of the bytes).
public struct ReceivedBody: Sendable {
    public let bytes: [UInt8]
    public let written: JSONValue?
}

/// What a peer answered: the message asked for, or an `Erro`.
public enum PeerAnswer<Message: Sendable>: Sendable {
    case message(Message)
    case erro(ErroMessage)
}

/// Why a peer gave no usable answer.
public enum PeerFailure: Error, Sendable, CustomStringConvertible {
    /// No HTTP answer: refused, timed out, TLS failure.
    case unreachable(url: String, HTTPClientError)
    /// An HTTP status other than 2xx.
    case httpStatus(url: String, Int, body: String)
    /// An answer that is neither the expected message nor an Erro, or one that breaks its rules.
    case invalid(url: String, InvalidMessage)
    /// An Erro that cannot be read as one (no errorCode, an unknown one, no errorComponent): the exchange ends, and no Erro
    /// answers it. "A receiving component never responds to the sending component of an Error Message, also when it is in
    /// error" (EMVCo 3DS FAQ, Technical Questions, April 2026, Q52); it may tell the transaction's other parties.
    case invalidErro(url: String, InvalidMessage)

    /// Without the peer's URL or library messages: what the party outside is told (Erro
    /// descriptions, transaction records); ``description`` is for the log.
    public var summary: String {
        switch self {
        case .unreachable(_, let error): error.summary
        case .httpStatus(_, let status, _): "answered HTTP \(status)"
        case .invalid(_, let invalid): "answered an invalid message: \(invalid)"
        case .invalidErro(_, let invalid): "answered an invalid Erro: \(invalid)"
        }
    }

    public var description: String {
        switch self {
        case .unreachable(let url, let error): "\(url): \(error)"
        case .httpStatus(let url, let status, let body): "\(url) answered HTTP \(status): \(body.prefix(200))"
        case .invalid(let url, let invalid): "\(url) answered an invalid message: \(invalid)"
        case .invalidErro(let url, let invalid): "\(url) answered an invalid Erro: \(invalid)"
        }
    }
}

/// Sends EMV messages to other parties over HTTP(S) and reads their answers; to a role of this
/// process in process, when `inProcess` is given (the same route, bytes and faults, no socket).
public struct EMVPeer: Sendable {
    public let client: HTTPClient
    public let inProcess: InProcessCalls?

    public init(client: HTTPClient, inProcess: InProcessCalls? = nil) {
        self.client = client
        self.inProcess = inProcess
    }

    /// POSTs `body` to `url`: in process when it is this process's (with `written`, the value it was written from, if
    /// any), else over HTTP.
    private func post(_ url: String, body: [UInt8], written: WrittenJSON? = nil, headers: HTTPHeaders = [:]) async throws(HTTPClientError) -> HTTPResponse {
        if let inProcess, let answer = try await inProcess.post(url, body: body, written: written, contentType: "application/json", headers: headers,
                                                                 readTimeoutMilliseconds: client.configuration.readTimeoutMilliseconds) {
            return answer
        }
        return try await client.post(url, body: body, headers: headers)
    }

    /// Posts `message` to `url` and reads the answer with `read`, or as an `Erro`.
    public func exchange<Message: Sendable>(_ message: JSONValue, url: String,
                                            read: (ReceivedBody) throws(InvalidMessage) -> Message) async throws(PeerFailure) -> PeerAnswer<Message> {
        try await exchange(WrittenJSON(message), url: url, read: read)
    }

    /// Posts `message`, already written, to `url` (a role of this process called in process reads its value).
    public func exchange<Message: Sendable>(_ message: WrittenJSON, url: String, headers: HTTPHeaders = [:],
                                            read: (ReceivedBody) throws(InvalidMessage) -> Message) async throws(PeerFailure) -> PeerAnswer<Message> {
        try await exchange(bytes: message.bytes, written: message, url: url, headers: headers, read: read)
    }

    /// Posts a message as `bytes` (a relay passes on what it received, unchanged) and reads the answer.
    public func exchange<Message: Sendable>(bytes: [UInt8], written: WrittenJSON? = nil, url: String, headers: HTTPHeaders = [:],
                                            read: (ReceivedBody) throws(InvalidMessage) -> Message) async throws(PeerFailure) -> PeerAnswer<Message> {
        let response: HTTPResponse
        do { response = try await post(url, body: bytes, written: written, headers: headers) } catch {
            throw .unreachable(url: url, error)
        }
        guard (200..<300).contains(response.status.code) else {
            throw .httpStatus(url: url, response.status.code, body: response.bodyText)
        }
        guard response.headers.mediaType == "application/json" else {
            throw .invalid(url: url, InvalidMessage(.wrongContentType(response.headers["Content-Type"]), about: nil))
        }
        do {
            return .message(try read(ReceivedBody(bytes: response.body, written: response.writtenJSON)))
        } catch {
            guard let json = response.bodyJSON, json["messageType"]?.stringValue == MessageType.erro.rawValue else { throw .invalid(url: url, error) }
            do throws(MessageError) { return .erro(try ErroMessage(json: json)) } catch {
                throw .invalidErro(url: url, InvalidMessage(error.violation, about: json))
            }
        }
    }
}

extension EMVPeer {
    /// Posts an Erro, which is not answered with a message; nil when it was taken (any 2xx),
    /// else why not, for the transaction record.
    public func notify(_ erro: ErroMessage, url: String) async -> String? {
        do {
            let response = try await post(url, body: JSONWriter.write(erro.json))
            return (200..<300).contains(response.status.code) ? nil : "HTTP \(response.status.code)"
        } catch {
            return "\(error)"
        }
    }
}

/// The header by which the party under test attaches a transaction to a test run's case:
/// `RUN/CASE` (`8c0…/challenge-text/2.2.0/app`), or `RUN` alone. Sent with an AReq to the DS,
/// or with an authentication request to the 3DS Server, which passes it on with its AReq.
public enum HarnessCaseHeader {
    public static let name = "X-Harness-Case"
    /// Longer values are not read: a run id, a slash and a case id are well under it.
    public static let maxLength = 200
}

/// The header a change made on every instance of a cluster (a pin, armed PRes faults) carries its id in, from the
/// instance that took it to the others, and to a role that counts its uses in the store under that id.
public enum HarnessChangeHeader {
    public static let name = "X-Harness-Change-ID"
}

/// What a requestor's request says of its transaction beyond the message: the run case it belongs to
/// (``HarnessCaseHeader``) and its team (``HarnessTeam``), passed on with every AReq sent for it.
public struct HarnessTags: Sendable, Equatable {
    public var harnessCase: String?
    public var team: String?

    public init(harnessCase: String? = nil, team: String? = nil) {
        self.harnessCase = harnessCase
        self.team = team
    }

    /// The headers that carry them to the DS.
    public var headers: HTTPHeaders {
        var headers = HTTPHeaders()
        if let harnessCase { headers.add(HarnessCaseHeader.name, harnessCase) }
        if let team { headers.add(HarnessTeam.header, team) }
        return headers
    }
}

extension HTTPRequest {
    /// The request's run case and team; 400 for a team name that is not one.
    public func harnessTags() throws(HTTPError) -> HarnessTags { HarnessTags(harnessCase: harnessCase, team: try team()) }

    /// The `X-Harness-Case` header, when it is there and of a readable length.
    public var harnessCase: String? {
        guard let value = headers[HarnessCaseHeader.name], !value.isEmpty,
              value.utf8.count <= HarnessCaseHeader.maxLength else { return nil }
        return value
    }

    /// The body as an Erro when it is one: an Erro may arrive where a party posts its
    /// requests (a 3DS Server's Erro about an ARes comes to the DS's AReq URL).
    public var erroMessage: ErroMessage? {
        guard headers.mediaType == "application/json", Self.mentionsErro(body),
              let json = bodyJSON, json["messageType"]?.stringValue == MessageType.erro.rawValue else { return nil }
        return try? ErroMessage(json: json)
    }

    /// A quick look for `"Erro"` before parsing, so requests on the hot path are parsed once.
    private static func mentionsErro(_ body: [UInt8]) -> Bool {
        // memchr jumps from quote to quote (an AReq has kilobytes of base64 between its few hundred).
        body.withUnsafeBytes { bytes in
            guard var at = bytes.baseAddress, bytes.count >= 6 else { return false }
            let end = at + bytes.count
            while end - at >= 6, let quote = memchr(at, Int32(UInt8(ascii: "\"")), end - at - 5) {
                if memcmp(quote, "\"Erro\"", 6) == 0 { return true }
                at = UnsafeRawPointer(quote) + 1
            }
            return false
        }
    }
}

extension Violation {
    /// An EMV message sent as anything but JSON: not recognised (101).
    static func wrongContentType(_ value: String?) -> Violation {
        Violation(field: "Content-Type", code: .messageNotRecognised, reason: "must be application/json, got \(value ?? "none")")
    }
}

extension Router {
    /// `GET path`, a path ending in `{id}`: the record `lookup` finds by that id, as JSON, or
    /// 404 naming `what` ("DS transaction").
    public mutating func record(_ path: String, _ what: String, transaction: TransactionRoute? = nil,
                                _ lookup: @escaping @Sendable (String) async -> [UInt8]?) {
        get(path, tag: transaction) { _, context async throws in
            let id = try context.parameter("id")
            guard let record = await lookup(id) else { throw HTTPError(.notFound, "no \(what) \(id)") }
            return HTTPResponse(headers: .json, body: record)
        }
    }
}
