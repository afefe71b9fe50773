import EMV3DS
import EMVCrypto
import Foundation
import JSON
import Messaging
import Net
import Store

/// A browser transaction between `POST /3ds-server/prepare` and its authentication: the id the
/// 3DS Method and the AReq share, and whether the method ran.
struct PreparedTransaction: ArchivableRecord {
    /// Prepared transactions kept, oldest dropped first: a page that never authenticates costs
    /// this much at most.
    static let capacity = 10_000

    let threeDSServerTransID: String
    let maskedPAN: String
    /// The highest version the card's range supports, as `prepare` answered it.
    let messageVersion: MessageVersion
    let createdAt: Date
    /// The card's range has a 3DS Method URL: the page was given the method to run.
    let hasThreeDSMethod: Bool
    /// When the ACS's 3DS Method page posted to the notification URL.
    var methodCompletedAt: Date?
    /// An authentication has taken it (once: its AReq carries the id).
    var authenticating = false

    /// What the store keeps when instances share it (its row names the instance that prepared it).
    var archivedJSON: [UInt8] {
        JSONWriter.write(.object(omittingAbsent: [
            ("threeDSServerTransID", .string(threeDSServerTransID)), ("acctNumber", .string(maskedPAN)),
            ("messageVersion", .string(messageVersion.rawValue)), ("threeDSMethod", .string(hasThreeDSMethod ? "offered" : "none")),
            ("threeDSMethodCompleted", .string(methodCompletedAt.map { UTCTime.iso8601($0) })), ("authenticating", .bool(authenticating)),
        ]))
    }

    /// Once authenticating, the transaction's own record stands for it.
    var isSettled: Bool { authenticating }

    /// Y when the notification came before the AReq: the page decides how long to wait for it
    /// (10 seconds at most, Core specification: 3DS Method), and calls authenticate after.
    var threeDSCompInd: ThreeDSCompInd {
        if methodCompletedAt != nil { return .completed }
        return hasThreeDSMethod ? .notCompleted : .unavailable
    }
}

extension ThreeDSServer {
    public static let methodNotificationPath = "/3ds-server/method-notification"

    /// `POST /3ds-server/prepare` with `{"acctNumber": "…"}` (or `pan`): the browser flow's first
    /// call. A new transaction id, the highest version the card's range supports, its DS id, and
    /// when the range has one, the 3DS Method URL with the `threeDSMethodData` the page posts to
    /// it in a hidden iframe (Core specification: 3DS Method).
    func prepare(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let (pan, range) = try await enrolledRange(request)
        guard let version = range.versions.last else { throw HTTPError(.badGateway, "the card's range has no version both the ACS and the DS speak") }
        let prepared = PreparedTransaction(threeDSServerTransID: TransactionIdentifier.make(), maskedPAN: CardNumber.masked(pan), messageVersion: version,
                                           createdAt: Date(), hasThreeDSMethod: range.threeDSMethodURL != nil)
        preparedTransactions.put(prepared.threeDSServerTransID, prepared)
        let methodData = range.threeDSMethodURL.map { _ in
            Base64URL.encode(JSONWriter.write(.object([
                ("threeDSServerTransID", .string(prepared.threeDSServerTransID)),
                ("threeDSMethodNotificationURL", .string(endpoints.url(Self.methodNotificationPath))),
            ])))
        }
        return .emv(.object(omittingAbsent: [
            ("threeDSServerTransID", .string(prepared.threeDSServerTransID)),
            ("acctNumber", .string(prepared.maskedPAN)),
            ("messageVersion", .string(version.rawValue)),
            ("dsId", .string(directoryServerID(pan))),
            ("threeDSMethodURL", .string(range.threeDSMethodURL)),
            ("threeDSMethodData", .string(methodData)),
        ]))
    }

    /// `POST /3ds-server/method-notification`: the ACS's 3DS Method page posts the form field
    /// `threeDSMethodData` here once the method finished. Answered with a page for the hidden
    /// iframe that tells the merchant's page (`postMessage`), so it need not wait out its 10 seconds.
    func methodNotified(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        let methodData = try Self.json(inField: "threeDSMethodData", of: Self.form(request))
        guard let id = methodData["threeDSServerTransID"]?.stringValue else {
            throw HTTPError(.badRequest, "threeDSMethodData holds no threeDSServerTransID")
        }
        let prepared = preparedTransactions.update(id) { prepared in
            if prepared.methodCompletedAt == nil { prepared.methodCompletedAt = Date() }
            return true
        } ?? false
        guard prepared else { throw HTTPError(.badRequest, "threeDSServerTransID \(id) names no prepared transaction") }
        let message = JSONWriter.string(.object([("threeDSMethod", .string("completed")), ("threeDSServerTransID", .string(id))]))
        // The id is one of this server's (found above): nothing in the script comes from outside unchecked.
        return .html("""
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>3DS Method</title></head>
            <body><p>3DS Method completed.</p><script>if (window.parent !== window) window.parent.postMessage(\(message), "*");</script></body></html>
            """)
    }

    /// A browser authentication that names its prepared transaction goes on with it: its id, and
    /// `threeDSCompInd` from what came of its 3DS Method. A request refused before its AReq
    /// left (400) leaves the transaction prepared, for a corrected one.
    func authenticate(_ input: AuthenticationRequest, prepared id: String) async throws(HTTPError) -> (Transaction, HTTPStatus) {
        guard case .browser(var browser) = input.channel else { return try await authenticate(input) }
        let claim: Result<PreparedTransaction, HTTPError>? = preparedTransactions.update(id) { prepared in
            guard !prepared.authenticating else {
                return .failure(HTTPError(.badRequest, "threeDSServerTransID \(id) is authenticated already: its transaction is at /3ds-server/transactions/\(id)"))
            }
            guard prepared.maskedPAN == CardNumber.masked(input.acctNumber) else {
                return .failure(HTTPError(.badRequest, "acctNumber is not the card threeDSServerTransID \(id) was prepared for (\(prepared.maskedPAN))"))
            }
            prepared.authenticating = true
            return .success(prepared)
        }
        guard let claim else {
            throw HTTPError(.badRequest, "threeDSServerTransID \(id) names no prepared transaction: POST /3ds-server/prepare makes one")
        }
        let prepared = try claim.get()
        browser.threeDSCompInd = prepared.threeDSCompInd.rawValue
        var input = input
        input.channel = .browser(browser)
        do {
            return try await authenticate(input)
        } catch {
            preparedTransactions.update(id) { $0.authenticating = false }
            throw error
        }
    }

    /// The fields of what a page of the ACS posted: a form, or 400.
    static func form(_ request: HTTPRequest) throws(HTTPError) -> [String: String] {
        guard let form = request.formFields else {
            throw HTTPError(.badRequest, "expected a form (Content-Type application/x-www-form-urlencoded), got \(request.headers["Content-Type"] ?? "none")")
        }
        return form
    }

    /// The JSON object a form carries base64url-encoded in `field` (`threeDSMethodData`, `cres`).
    static func json(inField field: String, of form: [String: String]) throws(HTTPError) -> JSONValue {
        guard let value = form[field], !value.isEmpty else { throw HTTPError(.badRequest, "the form has no \(field)") }
        do { return try Base64URL.decodeObject(value).object } catch {
            switch error {
            case .notBase64URL: throw HTTPError(.badRequest, "\(field) is not base64url")
            case .notJSONObject: throw HTTPError(.badRequest, "\(field) is base64url, but not of a JSON object")
            }
        }
    }
}
