import EMV3DS
import Foundation
import JSON
import Logging
import Messaging
import Net
import Synchronization

/// What an instance answers in place of an answer whose records the store did not take, when `store.durability` is
/// `answered` or `synced` (nothing is acknowledged that a restart or another instance cannot read): to an AReq, RReq or
/// PReq the Erro 403 (Transient System Failure) of the role it was sent to, with the message's ids, as the
/// specification has a component answer a message it cannot process for a system failure; to anything else HTTP 503
/// with the reason.
final class NotStoredAnswer: Sendable {
    static let reason = "the harness's store did not take this transaction's records (store.durability answered): nothing was acknowledged; try again"
    private let logger: Logger
    /// When a withheld answer was last logged: one line a second at most through an outage.
    private let lastLogged = Mutex<ContinuousClock.Instant?>(nil)

    init(logger: Logger) { self.logger = logger }

    func response(for request: HTTPRequest) -> HTTPResponse {
        let now = ContinuousClock.now
        let log = lastLogged.withLock { last -> Bool in
            guard last.map({ now - $0 >= .seconds(1) }) ?? true else { return false }
            last = now
            return true
        }
        if log { logger.error("answer withheld: its records are not stored", metadata: ["path": "\(request.path)"]) }
        let json = request.headers.mediaType == "application/json" ? try? JSONReader.parse(request.body).value : nil
        let type = json?["messageType"]?.stringValue
        guard let json, let type, [MessageType.aReq, .rReq, .pReq].map(\.rawValue).contains(type), let component = Self.component(of: request.path) else {
            return HTTPResponse(status: .serviceUnavailable, headers: .json,
                                body: JSONWriter.write(.object([("error", .string(Self.reason))])))
        }
        let version = json["messageVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)) ?? .latest
        let ids = TransactionIDs(json: json)
        var erro = ErroMessage(messageVersion: version.rawValue, errorCode: .transientSystemFailure, errorComponent: component,
                               errorDetail: "store", errorMessageType: type, threeDSServerTransID: ids.threeDSServerTransID,
                               acsTransID: ids.acsTransID, dsTransID: ids.dsTransID, sdkTransID: ids.sdkTransID)
        erro.explain(Self.reason)
        return .emv(erro.json)
    }

    /// The role a path belongs to.
    static func component(of path: Substring) -> ErrorComponent? {
        if path.hasPrefix("/ds/") { return .directoryServer }
        if path.hasPrefix("/acs/") { return .acs }
        if path.hasPrefix("/3ds-server/") { return .threeDSServer }
        return nil
    }
}
