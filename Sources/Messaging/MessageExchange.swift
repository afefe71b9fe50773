public import EMV3DS
public import JSON
public import Net

/// What an EMV endpoint received and answered, attached to its HTTP response as its
/// annotation: the server's observer counts it (metrics) without parsing anything again.
public struct MessageExchange: Sendable, Equatable {
    /// The message that came: the endpoint's own (AReq at `/ds/areq`) or an Erro in its place.
    public var received: MessageType?
    /// The message that went back; nil for an Erro taken (answered with an empty 200).
    public var answered: MessageType?
    /// The answer's `transStatus`, when it has one.
    public var transStatus: String?
    /// The code of the Erro received or sent.
    public var errorCode: ErrorCode?
    /// The transaction's ids, as the answer (or the Erro taken) carries them: for the message log.
    public var ids = TransactionIDs()

    public init(received: MessageType? = nil, answered: MessageType? = nil, transStatus: String? = nil, errorCode: ErrorCode? = nil,
                ids: TransactionIDs = TransactionIDs()) {
        self.received = received
        self.answered = answered
        self.transStatus = transStatus
        self.errorCode = errorCode
        self.ids = ids
    }

    /// The answer `json` as an exchange; nil when it is no EMV message (an admin record).
    public init?(answer json: JSONValue) {
        guard let type = json["messageType"]?.stringValue.flatMap(MessageType.init(rawValue:)) else { return nil }
        answered = type
        transStatus = json["transStatus"]?.stringValue
        errorCode = type == .erro ? json["errorCode"]?.stringValue.flatMap(ErrorCode.init(rawValue:)) : nil
        ids = TransactionIDs(json: json)
    }
}

extension HTTPResponse {
    /// The exchange attached by the handler, if any.
    public var messageExchange: MessageExchange? { annotation as? MessageExchange }

    /// An Erro taken: Erro messages are not answered with a message, so an empty 200.
    public static func taken(_ erro: ErroMessage) -> HTTPResponse {
        var response = HTTPResponse(status: .ok, headers: ["Content-Length": "0"], body: [])
        response.annotation = MessageExchange(received: .erro, errorCode: erro.errorCode,
                                              ids: TransactionIDs(threeDSServerTransID: erro.threeDSServerTransID, acsTransID: erro.acsTransID,
                                                                  dsTransID: erro.dsTransID, sdkTransID: erro.sdkTransID))
        return response
    }
}

extension Router {
    /// `POST path`, an endpoint for `message`: its answers say they received it (unless the
    /// handler says it received an Erro instead).
    public mutating func emv(_ path: String, receives message: MessageType, transaction: TransactionRoute? = nil,
                             _ handle: @escaping @Sendable (HTTPRequest) async -> HTTPResponse) {
        post(path, tag: transaction) { request, _ async in await handle(request).receiving(message) }
    }

    /// The same, for a handler that answers at once.
    public mutating func emv(_ path: String, receives message: MessageType, transaction: TransactionRoute? = nil,
                             _ handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse) {
        post(path, tag: transaction) { request, _ in handle(request).receiving(message) }
    }
}

extension HTTPResponse {
    fileprivate func receiving(_ message: MessageType) -> HTTPResponse {
        var response = self
        var exchange = messageExchange ?? MessageExchange()
        if exchange.received == nil { exchange.received = message }
        response.annotation = exchange
        return response
    }
}
