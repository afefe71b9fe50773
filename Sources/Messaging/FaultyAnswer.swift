public import EMV3DS
public import Faults
public import JSON
public import Net

/// A scenario's faults applied to an answer on the wire: what the roles use to misbehave.
public enum FaultyAnswer {
    /// An EMV message answer spoiled by `faults`: its content first, then its transport. With an `erro` fault the Erro goes
    /// instead, and the content faults spoil it.
    public static func answer(_ message: JSONValue, faults: [Fault], from component: ErrorComponent) async -> HTTPResponse {
        // Unspoilt, it goes with the value it was written from (a role of this process reads that, not the bytes).
        guard !faults.isEmpty else { return .emv(message) }
        let instead = faults.lazy.compactMap(\.erroInstead).first.map { Fault.erroMessage($0, insteadOf: message, from: component).json }
        let written = faults.write(instead ?? message)
        // Bytes that are no longer JSON are no message: nothing downstream (the journal, the metrics) may take them for one.
        let exchange = faults.contains(.malformedJSON) ? nil : MessageExchange(answer: written.message)
        let response = HTTPResponse.emv(bytes: written.bytes, exchange: exchange)
        return await transport(response, faults: instead == nil ? faults : faults.filter { $0.erroInstead == nil }, about: message, from: component)
    }

    /// `response` with the transport faults applied in order; latency is waited here.
    public static func transport(_ response: HTTPResponse, faults: [Fault], about message: JSONValue,
                                 from component: ErrorComponent) async -> HTTPResponse {
        var response = response
        for fault in faults {
            switch fault {
            case .latency(let milliseconds):
                try? await Task.sleep(for: .milliseconds(milliseconds))
            case .noAnswer:
                response.delivery = .withheld
            case .closeMidResponse:
                response.delivery = .cut(keepingBodyBytes: response.body.count / 2)
            case .erro(let code):
                response = .emv(Fault.erroMessage(code, insteadOf: message, from: component).json)
            case .httpStatus(let code):
                response = HTTPResponse(status: HTTPStatus(code: code),
                                        headers: .plainText, body: Array("scripted failure (harness fault)".utf8))
            case .contentType(let value):
                response.headers.set("Content-Type", value)
            default:
                break
            }
        }
        return response
    }

}
