import EMV3DS
import Foundation
import JSON
import Messaging
import Net
import Store

/// `challengeWindowSize` of the browser CReq: the size of the iframe the merchant's page opens
/// for the ACS's challenge (01 250x400, 02 390x400, 03 500x600, 04 600x400, 05 full screen).
public enum ChallengeWindowSize {
    static let fullScreen = "05"

    /// The sizes the browser CReq's table allows.
    public static let allowed: [String] = {
        let rule = ChallengeRules.browserCReq.fields.first { $0.name == "challengeWindowSize" }
        guard case .oneOf(let values)? = rule?.format else { return [] }
        return values
    }()
}

extension ThreeDSServer.Transaction {
    /// What a browser transaction keeps beyond its AReq, for its challenge and the end of it.
    struct BrowserOptions: Sendable {
        /// One of `ChallengeWindowSize.allowed`.
        let challengeWindowSize: String
        /// Where the notification page sends the browser once the challenge ended (a web view's custom scheme).
        let returnTo: ReturnRedirect?
    }

    /// The form the merchant's page posts to `acsURL` to open the challenge of an ARes C on the
    /// browser channel: `creq` (base64url of the CReq) and `threeDSSessionData` (base64url of the
    /// transaction's id, which the ACS posts back to the notificationURL with the final CRes).
    func browserChallenge(answering ares: JSONValue) -> JSONValue? {
        guard let browserOptions, ares["transStatus"]?.stringValue == TransStatus.challenge.rawValue,
              let acsURL = ares["acsURL"]?.stringValue, let acsTransID = ids.acsTransID else { return nil }
        let creq = ChallengeRules.browserCReq.build([
            ("messageType", .string(MessageType.cReq.rawValue)), ("messageVersion", .string(messageVersion.rawValue)),
            ("threeDSServerTransID", .string(threeDSServerTransID)), ("acsTransID", .string(acsTransID)),
            ("challengeWindowSize", .string(browserOptions.challengeWindowSize)),
        ], version: messageVersion)
        return .object([
            ("acsURL", .string(acsURL)),
            ("creq", .string(Base64URL.encode(JSONWriter.write(creq)))),
            ("threeDSSessionData", .string(Base64URL.encode(threeDSServerTransID))),
        ])
    }
}

extension ThreeDSServer {
    public static let notificationPath = "/3ds-server/notification"

    /// The end of a browser challenge as the notification page shows it.
    private struct ChallengeEnd {
        let threeDSServerTransID: String
        let transStatus: TransStatus
        let returnTo: ReturnRedirect?
    }

    /// `POST /3ds-server/notification`, the browser AReq's notificationURL: the ACS's last page
    /// posts the form fields `cres` (base64url of the final CRes) and `threeDSSessionData`. The
    /// CRes goes on the transaction's trail; the RReq stays the authority for the result. The
    /// browser gets a page saying so, which tells the merchant's page when it is in its challenge
    /// iframe (`postMessage({"challenge": "finished", "transStatus", "threeDSServerTransID"})`),
    /// or with a `returnURL`, a redirect there (303) with `summaryStatus` and the id (under
    /// `returnIdParameter`, `threeDSServerTransID` by default). Anything else is a 400 page with the reason.
    func challengeNotified(_ request: HTTPRequest) async -> HTTPResponse {
        let end: ChallengeEnd
        do { end = try await receiveFinalCRes(request) } catch {
            return .notice(title: "Authentication not finished", paragraph: Markup.escape(error.message), status: error.status)
        }
        let id = Markup.escape(end.threeDSServerTransID)
        let message = JSONWriter.string(.object([
            ("challenge", .string("finished")), ("transStatus", .string(end.transStatus.rawValue)),
            ("threeDSServerTransID", .string(end.threeDSServerTransID)),
        ]))
        // A transStatus and one of this server's ids (found above); `<` escaped all the same, so
        // nothing in the JSON can close the script.
        let script = message.replacingOccurrences(of: "<", with: "\\u003c")
        let finished = HTTPResponse.html("""
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>Authentication finished</title></head>
            <body><h1>Authentication finished</h1>
            <p>transStatus <strong>\(end.transStatus.rawValue)</strong> for threeDSServerTransID \(id). The result is the RReq's: \
            <a href="/3ds-server/transactions/\(id)">the transaction</a>.</p>
            <script>if (window.parent !== window) window.parent.postMessage(\(script), "*");</script></body></html>
            """)
        guard let returnTo = end.returnTo else { return finished }
        let location = returnTo.location(summaryStatus: end.transStatus.rawValue, id: end.threeDSServerTransID)
        var redirect = finished
        redirect.status = .seeOther
        redirect.headers.set("Location", location)
        return redirect
    }

    /// Reads the form and records its final CRes on the transaction it names, once.
    private func receiveFinalCRes(_ request: HTTPRequest) async throws(HTTPError) -> ChallengeEnd {
        let form = try Self.form(request)
        let cres = try Self.json(inField: "cres", of: form)
        guard let sessionData = form["threeDSSessionData"], !sessionData.isEmpty else {
            throw HTTPError(.badRequest, "the form has no threeDSSessionData: the ACS must post back the one the CReq's form carried")
        }
        guard let idBytes = try? Base64URL.decodeLeniently(sessionData) else { throw HTTPError(.badRequest, "threeDSSessionData is not base64url") }
        let id = String(decoding: idBytes, as: UTF8.self)
        guard cres["threeDSServerTransID"]?.stringValue == id else {
            throw HTTPError(.badRequest, "the CRes's threeDSServerTransID is not the one threeDSSessionData names")
        }
        let outcome: Result<ChallengeEnd, HTTPError>? = transactions.update(id) { transaction in
            func refuse(_ reason: String) -> Result<ChallengeEnd, HTTPError> { .failure(HTTPError(.badRequest, reason)) }
            guard transaction.channel == .browser, transaction.aresOutcome?.transStatus == .challenge else {
                return refuse("transaction \(id) has no browser challenge")
            }
            let version = transaction.messageVersion
            guard cres["messageVersion"]?.stringValue == version.rawValue else { return refuse("the CRes's messageVersion is not the transaction's \(version.rawValue)") }
            let violations = ChallengeRules.browserFinalCRes.check(cres, context: MessageContext(version: version, channel: .browser)).violations
            guard violations.isEmpty else { return refuse("the final CRes is invalid: " + violations.map(\.description).joined(separator: "; ")) }
            guard cres["acsTransID"]?.stringValue == transaction.ids.acsTransID else { return refuse("the CRes's acsTransID is not the transaction's") }
            guard transaction.received(.cRes) == nil else { return refuse("transaction \(id) has received its final CRes already") }
            // The table allows only the statuses a final CRes of the version carries.
            guard let status = cres["transStatus"]?.stringValue.flatMap(TransStatus.init(rawValue:)) else { return refuse("the CRes has no transStatus") }
            transaction.record(.received, cres)
            return .success(ChallengeEnd(threeDSServerTransID: id, transStatus: status, returnTo: transaction.browserOptions?.returnTo))
        }
        guard let outcome else { throw HTTPError(.badRequest, "threeDSSessionData names no transaction of this 3DS Server") }
        return try outcome.get()
    }
}
