import EMV3DS
import EMVCrypto
import Foundation
import JSON
import Messaging
import Net
import Synchronization

/// A 3DS Server under test, as a team would write one against the docs: it posts AReqs straight
/// to the harness's DS (tagged with their run case), reads each answer with the protocol model,
/// answers an ARes it cannot use with an Erro, and answers RReqs at its own URL. Each `Bug` is a
/// common mistake a rehearsal must catch; with none it is a correct party.
final class SimulatedThreeDSServer: @unchecked Sendable {
    enum Bug: String, CaseIterable, Sendable {
        /// Takes an invalid ARes without telling the DS.
        case noErroAboutInvalidARes
        /// Answers every invalid ARes with Erro 203, whatever was wrong.
        case sameErroCodeForEverything
        /// Refuses a valid ARes with an Erro (a validation table stricter than Annex A).
        case erroAboutValidARes
        /// Answers the RReq with an RRes whose acsTransID is not the RReq's.
        case rresWithWrongAcsTransID
        /// Sends an AReq again with the same threeDSServerTransID.
        case reusesThreeDSServerTransID
        /// Answers every RReq with an RRes, without validating it or looking its transaction up.
        case rresToEveryRReq
        /// Refuses a valid RReq with an Erro (a validation table stricter than Annex A).
        case erroAboutValidRReq
        /// Answers the RReq after ``slowRResDelay``, past the DS's time limit in the test that sets it lower.
        case slowRRes
    }

    let bugs: Set<Bug>
    static let slowRResDelay = Duration.milliseconds(1500)
    private let harness: RunningHarness
    private let group = EventLoopGroup(loopCount: 1)
    private var server: HTTPServer!
    private var resultsURL: String { "http://127.0.0.1:\(server.httpPort ?? 0)/rreq" }
    /// What the RReq rules read of each ARes (decoupled or not), by the threeDSServerTransID of its AReq: an RReq naming another is refused.
    private let sent = Mutex([String: JSONValue]())

    init(_ harness: RunningHarness, bugs: Set<Bug> = []) throws {
        self.harness = harness
        self.bugs = bugs
        var router = Router()
        router.post("/rreq") { [unowned self] (request, _) async throws -> HTTPResponse in
            if self.bugs.contains(.slowRRes) { try await Task.sleep(for: Self.slowRResDelay) }
            let rreq = try JSONReader.parse(request.body).value
            if !self.bugs.contains(.rresToEveryRReq), let refusal = self.refusal(of: request.body, rreq) {
                return HTTPResponse(headers: ["Content-Type": "application/json"], body: JSONWriter.write(refusal.json))
            }
            var rres = JSONValue.object([
                ("messageType", .string("RRes")), ("messageVersion", rreq["messageVersion"] ?? .null),
                ("threeDSServerTransID", rreq["threeDSServerTransID"] ?? .null), ("acsTransID", rreq["acsTransID"] ?? .null),
                ("dsTransID", rreq["dsTransID"] ?? .null), ("sdkTransID", rreq["sdkTransID"] ?? .null), ("resultsStatus", .string("01")),
            ])
            if self.bugs.contains(.rresWithWrongAcsTransID) { rres.set("acsTransID", .string(UUID().uuidString.lowercased())) }
            return HTTPResponse(headers: ["Content-Type": "application/json"], body: JSONWriter.write(rres))
        }
        server = try HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", httpPort: 0, httpsPort: nil, tls: nil),
                                router: router, group: group, logger: silentLogger)
        try server.start()
    }

    /// The Erro an RReq calls for: one naming a transaction this server never began (301), or one Annex A refuses.
    private func refusal(of body: [UInt8], _ rreq: JSONValue) -> ErroMessage? {
        let invalid: InvalidMessage
        let ares = rreq["threeDSServerTransID"]?.stringValue.flatMap { id in sent.withLock { $0[id] } }
        if bugs.contains(.erroAboutValidRReq) {
            invalid = InvalidMessage(Violation(field: "interactionCounter", code: .formatInvalid, reason: "a stricter table"), about: rreq)
        } else if let ares {
            do { _ = try RReq(bytes: body, channel: .app, ares: ares); return nil } catch { invalid = error }
        } else {
            invalid = InvalidMessage(Violation(field: "threeDSServerTransID", code: .transactionIDNotRecognised, reason: "names no AReq of this 3DS Server"),
                                     about: rreq)
        }
        var erro = invalid.erro(from: .threeDSServer)
        erro.errorMessageType = "RReq"
        return erro
    }

    func stop() {
        server.shutdown()
        group.shutdown()
    }

    /// One app-channel authentication of `pan` in `version`, tagged `tag`: the DS's answer, and the Erro sent about it, if any.
    @discardableResult
    func authenticate(pan: String, version: MessageVersion = .v2_2_0, tag: String?) async throws -> (answer: PeerAnswer<JSONValue>?, erro: ErroMessage?) {
        let areq = try appAReq(pan: pan, version: version, replacing: [
            "threeDSServerURL": .string(resultsURL),
            // Decoupled asked for, so a decoupled scenario answers D (2.2.0 and later).
            "threeDSRequestorDecReqInd": version >= .v2_2_0 ? .string("Y") : nil, "threeDSRequestorDecMaxTime": version >= .v2_2_0 ? .string("00010") : nil,
        ])
        let result = try await send(areq, tag: tag)
        if bugs.contains(.reusesThreeDSServerTransID) { _ = try await send(areq, tag: tag) }
        return result
    }

    private func send(_ areq: JSONValue, tag: String?) async throws -> (answer: PeerAnswer<JSONValue>?, erro: ErroMessage?) {
        if let id = areq["threeDSServerTransID"]?.stringValue { sent.withLock { $0[id] = .null } }
        let url = harness.baseURL + "/ds/areq"
        let peer = EMVPeer(client: harness.client)
        let headers: HTTPHeaders = tag.map { [HarnessCaseHeader.name: $0] } ?? [:]
        let version = areq["messageVersion"]?.stringValue ?? ""
        var erro: ErroMessage?
        var answer: PeerAnswer<JSONValue>?
        do {
            answer = try await peer.exchange(bytes: JSONWriter.write(areq), url: url, headers: headers) { bytes throws(InvalidMessage) in
                let envelope = try MessageEnvelope.read(bytes, rules: AResRules.rules, request: areq)
                return envelope.json
            }
            if case .message(let ares)? = answer, bugs.contains(.erroAboutValidARes) {
                erro = ErroMessage(messageVersion: version, errorCode: .formatInvalid, errorComponent: .threeDSServer, errorDetail: "acsReferenceNumber",
                                   errorMessageType: "ARes", threeDSServerTransID: ares["threeDSServerTransID"]?.stringValue,
                                   acsTransID: ares["acsTransID"]?.stringValue, dsTransID: ares["dsTransID"]?.stringValue)
            }
        } catch {
            // An answer that arrived but is no usable ARes: the Erro the failure calls for, in the AReq's version, with its ids.
            if case .invalid(_, let invalid) = error, !bugs.contains(.noErroAboutInvalidARes) {
                var refusal = invalid.erro(from: .threeDSServer)
                refusal.messageVersion = version
                refusal.threeDSServerTransID = areq["threeDSServerTransID"]?.stringValue
                refusal.errorMessageType = "ARes"
                if bugs.contains(.sameErroCodeForEverything) { refusal.errorCode = .formatInvalid }
                erro = refusal
            }
        }
        if case .message(let ares)? = answer, let id = areq["threeDSServerTransID"]?.stringValue {
            sent.withLock { $0[id] = ResultsRules.aresContext(ares) }
        }
        if let erro { _ = await peer.notify(erro, url: url) }
        return (answer, erro)
    }
}
