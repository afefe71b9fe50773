import EMV3DS
import EMVCrypto
import Foundation
import JSON
import Logging
import Messaging
import Net
import Store

public struct ThreeDSServerSettings: Sendable, Equatable {
    public var referenceNumber = "3DS_LOA_SER_HARN_020200_00001"
    public var operatorID = "HARNESS-3DSS-OPERATOR"
    public var requestorID = "harness-requestor"
    public var requestorName = "Harness Test Merchant"
    public var requestorURL = "https://merchant.example"
    /// Where AReqs go; nil means the harness's own DS.
    public var directoryServerURL: String?
    /// How long to wait for the DS's ARes.
    public var directoryServerTimeoutMs: UInt64 = 30_000
    /// Merchant defaults for payment AReqs, overridable per request.
    public var acquirerBIN = "400551"
    public var acquirerMerchantID = "harness-merchant-1"
    public var mcc = "5411"
    public var merchantCountryCode = "840"

    public init() {}
}

/// The 3DS Server role: turns the requestor app's call into an AReq, sends it to the DS,
/// answers the outcome, and receives the results of challenges (RReq).
public final class ThreeDSServer: Sendable {
    let settings: ThreeDSServerSettings
    let peer: EMVPeer
    let endpoints: LocalEndpoints
    public let transactions: TransactionStore<Transaction>
    let logger: Logger

    public init(settings: ThreeDSServerSettings, peer: EMVPeer, endpoints: LocalEndpoints, capacity: Int = 100_000, logger: Logger) {
        self.settings = settings
        self.peer = peer
        self.endpoints = endpoints
        transactions = TransactionStore(capacity: capacity)
        self.logger = logger
    }

    public func register(on router: inout Router) {
        router.post("/3ds-server/authenticate") { request, _ async throws in try await self.authenticate(request) }
        router.get("/3ds-server/transactions/{id}") { _, context in
            let id = try context.parameter("id")
            guard let transaction = self.transactions.get(id) else { throw HTTPError(.notFound, "no transaction \(id)") }
            return .emv(transaction.json)
        }
        router.post("/3ds-server/rreq") { request, _ in self.results(request) }
    }

    // MARK: Authentication

    func authenticate(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard request.headers.mediaType == "application/json" else {
            throw HTTPError(.unsupportedMediaType, "expected Content-Type application/json, got \(request.headers["Content-Type"] ?? "none")")
        }
        let input = try AuthenticationRequest(body: request.body)
        let areq = buildAReq(input)
        let violations = areq.violations(of: AReqRules.fromThreeDSServer)
        guard violations.isEmpty else {
            throw HTTPError(.badRequest, "the AReq would be invalid: " + violations.map(\.description).joined(separator: "; "))
        }
        var transaction = Transaction(areq: areq)
        transaction.record(.sent, areq.json)
        let url = settings.directoryServerURL ?? endpoints.url("/ds/areq")
        do {
            let answer = try await peer.exchange(areq.json, url: url) { bytes throws(InvalidMessage) in
                let envelope = try MessageEnvelope.read(bytes, rules: AResRules.rules, request: areq.json)
                return (ARes(validated: envelope), envelope.json)
            }
            switch answer {
            case .message(let (ares, json)):
                transaction.record(.received, json)
                if let field = areq.unechoedField(in: json) {
                    transaction.fail("the ARes does not echo the AReq's \(field)")
                } else {
                    transaction.apply(ares)
                }
            case .erro(let erro):
                transaction.record(.received, erro.json)
                transaction.fail(erro)
            }
        } catch {
            if case .invalid(_, let invalid) = error { transaction.violations = invalid.violations.map(\.description) }
            transaction.fail("DS: \(error)")
            transactions.put(transaction.threeDSServerTransID, transaction)
            logger.warning("no usable answer from the DS", metadata: ["reason": "\(error)"])
            return .emv(transaction.json, status: .badGateway)
        }
        transactions.put(transaction.threeDSServerTransID, transaction)
        return .emv(transaction.json)
    }

    func buildAReq(_ input: AuthenticationRequest) -> AReq {
        var members: [(key: String, value: JSONValue)] = [
            ("messageType", .string(MessageType.aReq.rawValue)),
            ("messageVersion", .string(input.messageVersion.rawValue)),
            ("messageCategory", .string(input.messageCategory)),
            ("deviceChannel", .string("01")),
            ("threeDSServerTransID", .string(TransactionIdentifier.make())),
            ("threeDSServerRefNumber", .string(settings.referenceNumber)),
            ("threeDSServerOperatorID", .string(settings.operatorID)),
            ("threeDSServerURL", .string(endpoints.url("/3ds-server/rreq"))),
            ("threeDSRequestorID", .string(settings.requestorID)),
            ("threeDSRequestorName", .string(settings.requestorName)),
            ("threeDSRequestorURL", .string(settings.requestorURL)),
            ("threeDSRequestorAuthenticationInd", .string("01")),
            ("acctNumber", .string(input.acctNumber)),
            ("sdkAppID", .string(input.sdkAppID)),
            ("sdkTransID", .string(input.sdkTransID)),
            ("sdkReferenceNumber", .string(input.sdkReferenceNumber)),
            ("sdkEphemPubKey", input.sdkEphemPubKey),
            ("sdkEncData", .string(input.sdkEncData)),
            ("sdkMaxTimeout", .string("05")),
            ("deviceRenderOptions", .object([("sdkInterface", .string("03")),
                                             ("sdkUiType", .array(["01", "02", "03", "04", "05"].map(JSONValue.string)))])),
        ]
        if input.messageCategory == "01" {
            members += [
                ("acquirerBIN", .string(settings.acquirerBIN)), ("acquirerMerchantID", .string(settings.acquirerMerchantID)),
                ("mcc", .string(settings.mcc)), ("merchantCountryCode", .string(settings.merchantCountryCode)),
                ("merchantName", .string(settings.requestorName)), ("purchaseExponent", .string("2")),
                ("purchaseDate", .string(UTCTime.purchaseDate(Date()))),
            ]
        }
        var areq = AReq(json: .object(members), version: input.messageVersion)
        for (key, value) in input.passThrough { areq.set(key, value) }
        return areq
    }

    // MARK: Results

    /// An RReq through the DS: the final outcome of a challenge. Answered with an RRes.
    func results(_ request: HTTPRequest) -> HTTPResponse {
        let rreq: RReq
        do { rreq = try RReq(bytes: try request.emvMessageBody()) } catch { return .erro(error, from: .threeDSServer) }
        let known = transactions.update(rreq.threeDSServerTransID) { transaction -> Bool in
            guard transaction.ids.mismatches(in: rreq.ids).filter({ $0 != "dsTransID" && $0 != "acsTransID" }).isEmpty else { return false }
            transaction.record(.received, rreq.json)
            transaction.apply(rreq)
            transaction.record(.sent, RRes(answering: rreq).json)
            return true
        }
        guard known == true else {
            let invalid = InvalidMessage(Violation(field: "threeDSServerTransID", code: .transactionIDNotRecognised,
                                                   reason: "names no transaction of this 3DS Server"), about: rreq.json)
            return .erro(invalid, from: .threeDSServer)
        }
        return .emv(RRes(answering: rreq).json)
    }
}
