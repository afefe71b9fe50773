import EMV3DS
import EMVCrypto
import Foundation
import JOSE
import JSON
import Messaging
import Net
import Store
import Synchronization

/// The backend contract of the token style (Adyen's 3DS2 component, `Adyen/adyen-ios`
/// AdyenActions/Components/3DS2 and `Adyen/adyen-android` 3ds2): a payment call answers an
/// `action` with a `fingerprintToken`; the app's SDK fingerprints the device and the result comes
/// back through `/payments/details`, which answers a `challengeToken` or the outcome; after the
/// challenge the challenge result comes back the same way. Every token is the standard, padded
/// base64 of a JSON object, as the clients decode them.
///
/// - `POST /profiles/token/payments`: the card (`paymentMethod.number`) and amount; answers
///   `resultCode` `IdentifyShopper` with the fingerprint action, or the outcome for a card in no
///   card range (no 3-D Secure).
/// - `POST /profiles/token/payments/details`: `paymentData` and `details` holding
///   `threeds2.fingerprint` or `fingerprintResult`, then `threeds2.challengeResult` or
///   `threeDSResult`; answers `ChallengeShopper` with the challenge action, or the outcome.
/// - `POST /profiles/token/v1/submitThreeDS2Fingerprint`: the component's own call in the newer
///   flow (an action carrying an `authorisationToken`), answered as the client decodes it.
///
/// The outcome is what the ARes or the RReq decided, never what the app claims.
final class TokenProfile: Sendable {
    private let server: ThreeDSServer
    /// Payments between the payment call and the fingerprint: their card and purchase, by
    /// threeDSServerTransID (which the fingerprint token carries and `paymentData` names).
    private let pending = Mutex(PendingPayments())

    init(server: ThreeDSServer) { self.server = server }

    func register(on router: inout Router) {
        router.post("/profiles/token/payments") { request, _ async in
            do throws(HTTPError) { return .emv(try await self.payment(request)) } catch { return Self.failure(error) }
        }
        router.post("/profiles/token/payments/details") { request, _ async in
            do throws(HTTPError) { return .emv(try await self.details(request)) } catch { return Self.failure(error) }
        }
        // adyen-android and the web component post `v1/…` under their environment's URL, adyen-ios
        // `checkoutshopper/v1/…` (Submit3DS2FingerprintRequest): both, under /profiles/token/.
        for path in ["/profiles/token/v1/submitThreeDS2Fingerprint", "/profiles/token/checkoutshopper/v1/submitThreeDS2Fingerprint"] {
            router.post(path) { request, _ async in
                do throws(HTTPError) { return .emv(try await self.submitFingerprint(request)) } catch { return Self.failure(error) }
            }
        }
    }

    // MARK: The payment

    private func payment(_ request: HTTPRequest) async throws(HTTPError) -> JSONValue {
        let json = try Self.body(request)
        let method = json["paymentMethod"]
        guard let pan = (method?["number"] ?? json["acctNumber"])?.stringValue else {
            throw HTTPError(.unprocessableContent, "paymentMethod.number is required: the card number")
        }
        guard let amount = json["amount"] else { throw HTTPError(.unprocessableContent, "amount is required: {\"value\": minor units, \"currency\": \"EUR\"}") }
        var members: [(key: String, value: JSONValue)] = [("acctNumber", .string(pan))] + (try Self.purchase(amount))
        if let month = method?["expiryMonth"]?.stringValue, let year = method?["expiryYear"]?.stringValue {
            guard let number = Int(month), (1...12).contains(number), month.count == 2, year.count == 4, Int(year) != nil else {
                throw HTTPError(.unprocessableContent, "paymentMethod.expiryMonth and expiryYear must be MM and YYYY")
            }
            members.append(("cardExpiryDate", .string(String(year.suffix(2)) + month)))
        }
        if let holder = method?["holderName"]?.stringValue { members.append(("cardholderName", .string(holder))) }
        members += (json.objectMembers ?? []).filter { AuthenticationRequest.passThroughFields.contains($0.key) && !members.map(\.key).contains($0.key) }
        let reference = json["reference"]?.stringValue
        guard let flow = ThreeDS2Flow(rawValue: json["threeDS2Flow"]?.stringValue ?? ThreeDS2Flow.compact.rawValue) else {
            throw HTTPError(.unprocessableContent, "threeDS2Flow must be compact or classic")
        }
        guard let keyType = TestPKI.KeyVariant(rawValue: json["dsKeyType"]?.stringValue?.lowercased() ?? TestPKI.KeyVariant.rsa.rawValue) else {
            throw HTTPError(.unprocessableContent, "dsKeyType must be RSA or EC")
        }

        guard let range = try await server.preparedRange(of: pan) else {
            // No card range holds the card: a payment provider goes on to authorisation without 3-D Secure.
            return .object(omittingAbsent: [("resultCode", .string("Authorised")), ("merchantReference", .string(reference)),
                                            ("additionalData", .object([("threeDOffered", .string("false")), ("threeDAuthenticated", .string("false")),
                                                                        ("liabilityShift", .string("false"))]))])
        }
        let requested = json["threeDS2RequestData"]?["messageVersion"]?.stringValue
        let version: MessageVersion
        if let requested {
            guard let known = MessageVersion(rawValue: requested), range.versions.contains(known) else {
                throw HTTPError(.unprocessableContent, "threeDS2RequestData.messageVersion \(requested) is not one the card's range supports: "
                                + range.versions.map(\.rawValue).joined(separator: ", "))
            }
            version = known
        } else {
            guard let highest = range.versions.last else { throw HTTPError(.badGateway, "the card's range has no version both the ACS and the DS speak") }
            version = highest
        }
        guard let rid = server.directoryServerID(pan), let directoryServer = server.tokenDirectoryServer(rid, keyType) else {
            throw HTTPError(.unprocessableContent, "no Directory Server is configured for \(CardNumber.masked(pan))")
        }

        let id = TransactionIdentifier.make()
        let tags = try request.harnessTags()
        pending.withLock { $0.add(id, PendingPayment(members: members, version: version, reference: reference, flow: flow,
                                                     tags: tags)) }
        let token = Self.token(.object(directoryServer.members + [
            ("threeDSMessageVersion", .string(version.rawValue)), ("threeDSServerTransID", .string(id)),
        ]))
        return .object(omittingAbsent: [
            ("resultCode", .string("IdentifyShopper")),
            ("action", Self.action(.fingerprint, flow: flow, token: token, paymentData: id)),
            ("merchantReference", .string(reference)),
        ])
    }

    // MARK: The details

    private func details(_ request: HTTPRequest) async throws(HTTPError) -> JSONValue {
        let json = try Self.body(request)
        guard let details = json["details"], details.objectMembers != nil else {
            throw HTTPError(.unprocessableContent, "details is required: an object with threeds2.fingerprint, fingerprintResult, threeds2.challengeResult or threeDSResult")
        }
        let paymentData = json["paymentData"]?.stringValue
        if let fingerprint = (details["threeds2.fingerprint"] ?? details["fingerprintResult"])?.stringValue {
            return try await fingerprinted(fingerprint, paymentData: paymentData)
        }
        if let result = (details["threeds2.challengeResult"] ?? details["threeDSResult"])?.stringValue {
            let claimed = try Self.decodeToken(result, name: "the challenge result")
            let id = try Self.transactionID(paymentData ?? claimed["authorisationToken"]?.stringValue)
            guard let transaction = server.transactions.get(id) else { throw Self.unknownPayment(id) }
            if let status = claimed["transStatus"]?.stringValue, let final = transaction.rreqOutcome?.transStatus.rawValue, status != final {
                let warning = "the app's challenge result says transStatus \(status); the RReq said \(final)"
                server.transactions.update(id) { if !$0.warnings.contains(warning) { $0.warnings.append(warning) } }
            }
            return Self.outcome(of: transaction, reference: nil)
        }
        guard let paymentData else {
            throw HTTPError(.unprocessableContent, "details holds none of threeds2.fingerprint, fingerprintResult, threeds2.challengeResult, threeDSResult")
        }
        // Empty details and the paymentData: where the payment stands (a decoupled one, later).
        let id = try Self.transactionID(paymentData)
        guard let transaction = server.transactions.get(id) else { throw Self.unknownPayment(id) }
        return Self.outcome(of: transaction, reference: nil)
    }

    /// The newer component's own call after the fingerprint: `{"type": "action", "action": …}`
    /// for a challenge, else `{"type": "completed", "details": {"threeDSResult": …}}`.
    private func submitFingerprint(_ request: HTTPRequest) async throws(HTTPError) -> JSONValue {
        let json = try Self.body(request)
        guard let fingerprint = json["fingerprintResult"]?.stringValue else { throw HTTPError(.unprocessableContent, "fingerprintResult is required") }
        let answer = try await fingerprinted(fingerprint, paymentData: json["paymentData"]?.stringValue)
        if let action = answer["action"] { return .object([("type", .string("action")), ("action", action)]) }
        let result = Self.token(.object(omittingAbsent: [("transStatus", answer["threeDS2Result"]?["transStatus"]),
                                                         ("authorisationToken", answer["pspReference"])]))
        return .object([("type", .string("completed")), ("details", .object([("threeDSResult", .string(result))]))])
    }

    /// The app's fingerprint result: the SDK's authentication request parameters, under the
    /// names adyen-ios and adyen-android encode them (`sdkEncData`, `sdkEphemPubKey` as an object).
    private func fingerprinted(_ fingerprint: String, paymentData: String?) async throws(HTTPError) -> JSONValue {
        let parameters = try Self.decodeToken(fingerprint, name: "the fingerprint result")
        let id = try Self.transactionID(paymentData)
        func alreadyFingerprinted() -> HTTPError {
            server.transactions.get(id) == nil ? Self.unknownPayment(id) : HTTPError(.unprocessableContent, "the payment \(id) was fingerprinted already")
        }
        guard let payment = pending.withLock({ $0.peek(id) }) else { throw alreadyFingerprinted() }
        var members = payment.members + (parameters.objectMembers ?? []).filter { Self.fingerprintFields.contains($0.key) }
        // The version the SDK reports (adyen-android sends it), else the token's.
        if parameters["messageVersion"] == nil { members.append(("messageVersion", .string(payment.version.rawValue))) }
        // Bad parameters leave the payment waiting: the app may send a corrected fingerprint.
        var input = try AuthenticationRequest(json: .object(members))
        input.threeDSServerTransID = id
        input.tags = payment.tags
        guard pending.withLock({ $0.take(id) }) != nil else { throw alreadyFingerprinted() }
        let transaction: ThreeDSServer.Transaction
        do {
            (transaction, _) = try await server.authenticate(input)
        } catch {
            // Refused before the AReq left (it would break its table): the payment waits again.
            pending.withLock { $0.add(id, payment) }
            throw error
        }
        guard transaction.aresOutcome?.transStatus == .challenge else { return Self.outcome(of: transaction, reference: payment.reference) }
        let ares = transaction.receivedARes
        let token = Self.token(.object(omittingAbsent: [
            ("acsReferenceNumber", .string(ares?["acsReferenceNumber"]?.stringValue)),
            ("acsSignedContent", .string(ares?["acsSignedContent"]?.stringValue)),
            ("acsTransID", .string(transaction.ids.acsTransID)),
            ("acsURL", .string(ares?["acsURL"]?.stringValue)),
            ("messageVersion", .string(transaction.messageVersion.rawValue)),
            ("threeDSServerTransID", .string(id)),
        ]))
        return .object(omittingAbsent: [("resultCode", .string("ChallengeShopper")),
                                        ("action", Self.action(.challenge, flow: payment.flow, token: token, paymentData: id)),
                                        ("merchantReference", .string(payment.reference))])
    }

    /// What a fingerprint result may carry into the AReq.
    private static let fingerprintFields: Set<String> = [
        "sdkAppID", "sdkEncData", "sdkEphemPubKey", "sdkReferenceNumber", "sdkTransID", "messageVersion",
    ]

    // MARK: Answers

    /// The payment's outcome as the client decodes it: `resultCode` from the final transStatus,
    /// `threeDS2Result` as the ARes or RReq gave it, and the liability in `additionalData`.
    static func outcome(of transaction: ThreeDSServer.Transaction, reference: String?) -> JSONValue {
        let final = transaction.finalOutcome
        let authenticated = final.map { [.authenticated, .attempted].contains($0.transStatus) } ?? false
        let (resultCode, refusal) = resultCode(of: transaction)
        return .object(omittingAbsent: [
            ("resultCode", .string(resultCode)),
            ("refusalReason", .string(refusal)),
            ("pspReference", .string(transaction.threeDSServerTransID)),
            ("merchantReference", .string(reference)),
            ("threeDS2Result", final.map { final in .object(omittingAbsent: [
                ("transStatus", .string(final.transStatus.rawValue)),
                ("transStatusReason", .string(final.transStatusReason)),
                ("eci", .string(final.eci)),
                ("authenticationValue", .string(final.authenticationValue)),
                ("challengeCancel", .string(final.challengeCancel)),
                ("threeDSServerTransID", .string(transaction.threeDSServerTransID)),
                ("dsTransID", .string(transaction.ids.dsTransID)),
                ("messageVersion", .string(transaction.messageVersion.rawValue)),
            ]) }),
            ("additionalData", .object(omittingAbsent: [
                ("threeDOffered", .string("true")),
                ("threeDAuthenticated", .string(String(authenticated))),
                ("liabilityShift", .string(String(authenticated))),
                ("threeDSVersion", .string(transaction.messageVersion.rawValue)),
                ("cavv", .string(final?.authenticationValue)),
                ("eci", .string(final?.eci)),
            ])),
        ])
    }

    /// Y, A and I go on to authorisation (Authorised); U too, without a liability shift; N and R
    /// are Refused, a cancelled challenge Cancelled; a challenge without its result yet, or a
    /// decoupled authentication, Pending; no usable answer from the DS, Error.
    private static func resultCode(of transaction: ThreeDSServer.Transaction) -> (String, String?) {
        switch transaction.state {
        case .error: return ("Error", transaction.error ?? "no usable answer from the Directory Server")
        case .challenge, .spc, .decoupledFallback: return ("Pending", nil)
        case .frictionless, .completed: break
        }
        guard let final = transaction.finalOutcome else { return ("Error", transaction.error) }
        // Only 01 is the cardholder's cancel; a timeout or an error (04-08) ends as its transStatus says.
        if transaction.rreqOutcome?.challengeCancel == "01" { return ("Cancelled", "Cancelled by shopper") }
        switch final.transStatus {
        case .authenticated, .attempted, .informational, .unavailable: return ("Authorised", nil)
        case .notAuthenticated, .rejected: return ("Refused", "3D Not Authenticated")
        case .challenge, .decoupled, .securePaymentConfirmation: return ("Pending", nil)
        }
    }

    enum ActionStep: String { case fingerprint, challenge }

    /// The compact flow's `threeDS2` action with its subtype and `authorisationToken` (the
    /// payment's id: what the component's results carry back); the classic flow's
    /// `threeDS2Fingerprint` / `threeDS2Challenge`, which send the app's backend the results.
    private static func action(_ step: ActionStep, flow: ThreeDS2Flow, token: String, paymentData: String) -> JSONValue {
        switch flow {
        case .compact:
            .object([("type", .string("threeDS2")), ("subtype", .string(step.rawValue)), ("token", .string(token)),
                     ("paymentData", .string(paymentData)), ("authorisationToken", .string(paymentData)), ("paymentMethodType", .string("scheme"))])
        case .classic:
            .object([("type", .string(step == .fingerprint ? "threeDS2Fingerprint" : "threeDS2Challenge")), ("token", .string(token)),
                     ("paymentData", .string(paymentData)), ("paymentMethodType", .string("scheme"))])
        }
    }

    /// Adyen's error shape: `{"status", "errorCode", "message", "errorType"}`.
    static func failure(_ error: HTTPError) -> HTTPResponse {
        let type = error.status.code == 422 || error.status.code == 400 || error.status.code == 415 ? "validation" : "internal"
        return .emv(.object([("status", .number(String(error.status.code))), ("errorCode", .string(String(error.status.code))),
                             ("message", .string(error.message)), ("errorType", .string(type))]), status: error.status)
    }

    // MARK: Tokens

    /// Standard, padded base64 of the JSON: what adyen-ios's `Coder.decodeBase64` and
    /// adyen-android's `Base64.decode(…, DEFAULT)` read.
    static func token(_ json: JSONValue) -> String { Data(JSONWriter.write(json)).base64EncodedString() }

    /// A token the app sent: base64 (standard or URL-safe, padded or not) of a JSON object.
    static func decodeToken(_ text: String, name: String) throws(HTTPError) -> JSONValue {
        // adyen-android encodes with Base64.DEFAULT: lines of 76 characters, a final newline.
        let urlSafe = String(text.unicodeScalars.filter { !CharacterSet.whitespacesAndNewlines.contains($0) })
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        guard let json = try? Base64URL.decodeObject(urlSafe).object else {
            throw HTTPError(.unprocessableContent, "\(name) is not the base64 of a JSON object")
        }
        return json
    }

    private static func transactionID(_ paymentData: String?) throws(HTTPError) -> String {
        guard let paymentData, !paymentData.isEmpty else { throw HTTPError(.unprocessableContent, "paymentData is required: the one the last action carried") }
        return paymentData
    }

    private static func unknownPayment(_ id: String) -> HTTPError {
        HTTPError(.unprocessableContent, "no payment \(id): paymentData must be the one the last action carried")
    }

    private static func body(_ request: HTTPRequest) throws(HTTPError) -> JSONValue {
        guard request.headers.mediaType == "application/json" else {
            throw HTTPError(.unsupportedMediaType, "expected Content-Type application/json, got \(request.headers["Content-Type"] ?? "none")")
        }
        let json = try request.jsonBody()
        guard json.objectMembers != nil else { throw HTTPError(.badRequest, "body must be a JSON object") }
        return json
    }

    /// `amount` as the client sends it, `{"value": 1099, "currency": "EUR"}`, in the AReq's
    /// terms: minor units, the ISO 4217 numeric code, its exponent.
    private static func purchase(_ amount: JSONValue) throws(HTTPError) -> [(key: String, value: JSONValue)] {
        guard let value = amount["value"]?.numberText ?? amount["value"]?.stringValue, (1...12).contains(value.count),
              value.allSatisfy({ ("0"..."9").contains($0) }) else {
            throw HTTPError(.unprocessableContent, "amount.value must be a whole number of minor units")
        }
        guard let code = amount["currency"]?.stringValue, let currency = Currency(code) else {
            throw HTTPError(.unprocessableContent, "amount.currency must be an ISO 4217 code: one of \(Currency.known.keys.sorted().joined(separator: ", ")), or a 3-digit numeric code")
        }
        return [("purchaseAmount", .string(value)), ("purchaseCurrency", .string(currency.numeric)),
                ("purchaseExponent", .string(String(currency.exponent)))]
    }
}

/// Payments awaiting their fingerprint, oldest first; the oldest goes when there are too many.
private struct PendingPayments {
    static let capacity = 10_000
    private var payments: [String: PendingPayment] = [:]
    /// Ids in the order they came, from `head` on; ids of payments taken since stay until compacted.
    private var order: [String] = []
    private var head = 0

    mutating func add(_ id: String, _ payment: PendingPayment) {
        if payments.updateValue(payment, forKey: id) == nil { order.append(id) }
        while payments.count > Self.capacity {
            payments[order[head]] = nil
            head += 1
        }
        // Bounded: the ids before `head` go once there are as many as the capacity, and those of
        // payments taken go once the list holds twice as many ids as it may hold payments.
        if head >= Self.capacity || order.count - head > 2 * Self.capacity {
            order = order[head...].filter { payments[$0] != nil }
            head = 0
        }
    }

    func peek(_ id: String) -> PendingPayment? { payments[id] }

    mutating func take(_ id: String) -> PendingPayment? { payments.removeValue(forKey: id) }
}

private struct PendingPayment: Sendable {
    /// The card and purchase as AReq fields.
    let members: [(key: String, value: JSONValue)]
    /// The fingerprint token's version.
    let version: MessageVersion
    let reference: String?
    let flow: ThreeDS2Flow
    /// The run case and the team the payment request named: its AReq carries them on.
    let tags: HarnessTags
}

/// Who posts the fingerprint and the challenge result. Compact: the component itself
/// (adyen-ios and adyen-android handle every `threeDS2` action so, submitting the fingerprint
/// to `…/v1/submitThreeDS2Fingerprint`); the app's backend gets one `threeDSResult` last.
/// Classic: the app's backend, through `/payments/details`, after the older
/// `threeDS2Fingerprint` and `threeDS2Challenge` actions.
enum ThreeDS2Flow: String, Sendable {
    case compact, classic
}
