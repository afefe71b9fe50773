import EMV3DS
import Foundation
import Journal
import JSON
import Messaging
import Net
import Scenarios
import Store

/// The page templates of the browser challenge, read from files (`config/templates/`): the
/// challenge page, and the final page that posts the CRes to the 3DS Requestor's notificationURL.
/// Filled in by `Markup.render`.
public struct BrowserChallengePages: Sendable {
    public let challenge: String
    public let final: String

    public init(challenge: String, final: String) {
        self.challenge = challenge
        self.final = final
    }
}

/// What a browser challenge keeps besides the cardholder's progress: where its result goes, and
/// the 3DS Requestor's session data, which the final form carries back.
struct BrowserChallenge: Sendable {
    let notificationURL: String
    /// Set when the CReq's form came.
    var started = false
    /// The 3DS Requestor's session data, when its form carried one (it is optional): the final form posts it back.
    var threeDSSessionData: String?
    var windowSize: String?
}

/// The browser channel's challenge (Core specification 5.1.7, 6.2.3.3): the 3DS Requestor's
/// page posts the CReq as the form field `creq` (base64url JSON) with `threeDSSessionData` to the
/// acsURL; the ACS answers HTML pages, one per step, whose forms post back to it; at the end it
/// sends the RReq through the DS, then answers a page that posts the final CRes (`cres`) and the
/// session data to the notificationURL.
extension AccessControlServer {
    public static let browserChallengePath = "/acs/browser/challenge"

    func registerBrowserChallenge(on router: inout Router) {
        router.post(Self.browserChallengePath, tag: transaction(.formJSON(field: "creq", member: "acsTransID"))) { request, _ async in
            await self.browserCReq(request)
        }
        router.post(Self.browserChallengePath + "/{acsTransID}", tag: transaction(.pathParameter("acsTransID"))) { request, context async in
            await self.browserAnswer(request, acsTransID: (try? context.parameter("acsTransID")) ?? "")
        }
    }

    /// A refusal shown to the cardholder's browser: a plain page with the reason.
    struct BrowserRefusal: Error {
        let status: HTTPStatus
        let reason: String
        /// Whether the form itself is wrong (the 3DS Server's page's doing, graded), not when it came
        /// (a reload, a challenge the ACS's time limit ended).
        let formIsWrong: Bool
        init(_ reason: String, status: HTTPStatus = .badRequest, formIsWrong: Bool = false) {
            self.status = status
            self.reason = reason
            self.formIsWrong = formIsWrong
        }
    }

    // MARK: The CReq

    func browserCReq(_ request: HTTPRequest) async -> HTTPResponse {
        do { return try await openBrowserChallenge(request) } catch {
            gradeBrowserForm(request, refusal: error)
            return Self.errorPage(error)
        }
    }

    /// A refused form is the 3DS Server's page's doing: graded on the transaction its creq names,
    /// when it names one (a creq that does not read, or names no transaction, is only refused).
    private func gradeBrowserForm(_ request: HTTPRequest, refusal: BrowserRefusal) {
        guard refusal.formIsWrong, let encoded = request.formPairs?.first(where: { $0.name == "creq" })?.value,
              let (json, _) = try? Base64URL.decodeObject(encoded), let acsTransID = json["acsTransID"]?.stringValue,
              let transaction = transactions.get(acsTransID) else { return }
        journal?.check(transaction.ids.dsTransID, .fail(.browserCReqForm, refusal.reason))
    }

    private func openBrowserChallenge(_ request: HTTPRequest) async throws(BrowserRefusal) -> HTTPResponse {
        let form = request.formPairs ?? []
        guard let encoded = form.first(where: { $0.name == "creq" })?.value, !encoded.isEmpty else {
            throw BrowserRefusal("the form has no creq field: post the CReq, base64url, as creq")
        }
        // Optional: the 3DS Requestor's own state, posted back with the final CRes when it was given.
        let sessionData = form.first(where: { $0.name == "threeDSSessionData" }).flatMap { $0.value.isEmpty ? nil : $0.value }
        guard (sessionData?.utf8.count ?? 0) <= 1024 else {
            throw BrowserRefusal("threeDSSessionData is longer than 1024 characters", formIsWrong: true)
        }
        let (json, bytes): (JSONValue, [UInt8])
        do { (json, bytes) = try Base64URL.decodeObject(encoded) } catch {
            throw BrowserRefusal(error == .notBase64URL ? "creq is not base64url" : "creq is not a JSON object")
        }
        let version = json["messageVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)) ?? .v2_2_0
        let violations = ChallengeRules.browserCReq.check(json, context: MessageContext(version: version)).violations
        guard violations.isEmpty else {
            throw BrowserRefusal("the CReq is invalid: " + violations.map(\.description).joined(separator: "; "), formIsWrong: true)
        }
        let acsTransID = json["acsTransID"]?.stringValue ?? ""
        guard let transaction = transactions.get(acsTransID) else { throw BrowserRefusal("no transaction \(acsTransID) at this ACS", status: .notFound) }
        journal?.message(transaction.ids.dsTransID, from: .browser, to: .accessControlServer, type: MessageType.cReq.rawValue, body: bytes,
                         note: "the creq form field, decoded")
        guard json["threeDSServerTransID"]?.stringValue == transaction.ids.threeDSServerTransID,
              json["messageVersion"]?.stringValue == transaction.version.rawValue else {
            throw BrowserRefusal("the CReq's threeDSServerTransID or messageVersion is not its transaction's", formIsWrong: true)
        }
        let shown: Result<ChallengeScreenContent, BrowserRefusal> = transactions.update(acsTransID) { transaction in
            guard case .challenge(var state) = transaction.phase, case .browser(var browser) = state.medium else {
                return .failure(BrowserRefusal("transaction \(acsTransID) has no browser challenge open"))
            }
            guard !browser.started else { return .failure(BrowserRefusal("the challenge has started already: its CReq came before")) }
            browser.started = true
            browser.threeDSSessionData = sessionData
            browser.windowSize = json["challengeWindowSize"]?.stringValue
            state.medium = .browser(browser)
            state.nextCounter = 1
            guard case .show(let screen) = state.session.handle(.none, isFirst: true) else {
                return .failure(BrowserRefusal("the challenge has no step to show"))
            }
            transaction.phase = .challenge(state)
            return .success(screen)
        } ?? .failure(BrowserRefusal("no transaction \(acsTransID) at this ACS", status: .notFound))
        let screen = try shown.get()
        // A padded creq is read (the verdict fails it, the cardholder's challenge goes on).
        journal?.check(transaction.ids.dsTransID, Base64URLPadding.problem(in: encoded, named: "creq").map { .fail(.browserCReqForm, $0) } ?? .pass(.browserCReqForm))
        return try page(screen, transaction: transaction)
    }

    // MARK: The cardholder's answers

    func browserAnswer(_ request: HTTPRequest, acsTransID: String) async -> HTTPResponse {
        do { return try await answerBrowser(request, acsTransID: acsTransID) } catch { return Self.errorPage(error) }
    }

    private func answerBrowser(_ request: HTTPRequest, acsTransID: String) async throws(BrowserRefusal) -> HTTPResponse {
        let form = request.formPairs ?? []
        let decided: Result<(ChallengeSession.Decision, Transaction, BrowserChallenge), BrowserRefusal> = transactions.update(acsTransID) { transaction in
            guard case .challenge(var state) = transaction.phase, case .browser(let browser) = state.medium else {
                return .failure(BrowserRefusal("transaction \(acsTransID) has no browser challenge open (it has ended, or it is not a browser one)"))
            }
            guard browser.started else { return .failure(BrowserRefusal("the challenge has not started: post its CReq first")) }
            let type = state.session.screen().uiType
            let action = Self.action(form, body: request.body, showing: type)
            let decision = state.session.handle(action, isFirst: false,
                                                whitelisting: form.first { $0.name == "whitelisting" }.map { $0.value == "Y" ? "Y" : "N" })
            state.nextCounter += 1
            if case .finish = decision {
                transaction.leaveChallenge(for: .ended("browser challenge finished"))
            } else {
                transaction.phase = .challenge(state)
            }
            return .success((decision, transaction, browser))
        } ?? .failure(BrowserRefusal("no transaction \(acsTransID) at this ACS", status: .notFound))
        let (decision, transaction, browser) = try decided.get()
        switch decision {
        case .show(let screen):
            return try page(screen, transaction: transaction)
        case .finish(let result):
            // As for the app: the RReq (and its RRes) before the final CRes.
            await report(acsTransID, result)
            return finalPage(result, transaction: transaction, browser: browser)
        }
    }

    /// The cardholder's action as the page's buttons and fields say it.
    static func action(_ form: [(name: String, value: String)], body: [UInt8], showing type: ACSUIType) -> CReq.Action {
        let pressed = form.first { $0.name == "action" }?.value ?? "submit"
        switch pressed {
        case "cancel": return .cancel(.cardholderCancelled)
        case "resend": return .resend
        case "continue": return type == .information ? .noEntry : .oobContinue
        default:
            if type.isHTML { return .htmlDataEntry(String(decoding: body, as: UTF8.self)) }
            return .dataEntry(form.filter { $0.name == "answer" }.map(\.value).joined(separator: ","))
        }
    }

    // MARK: Pages

    private func page(_ screen: ChallengeScreenContent, transaction: Transaction) throws(BrowserRefusal) -> HTTPResponse {
        guard let pages = settings.browserPages else { throw BrowserRefusal("the ACS has no page templates", status: .internalServerError) }
        let acsTransID = transaction.ids.acsTransID ?? ""
        let action = endpoints.url(Self.browserChallengePath + "/" + acsTransID)
        if screen.uiType.isHTML, let html = screen.html {
            // The scenario's own HTML posts to https://emv3ds/challenge, the SDK's address: here, the ACS's.
            return .html(html.replacingOccurrences(of: "https://emv3ds/challenge", with: action))
        }
        let page = Markup.render(pages.challenge, text: [
            "header": screen.header ?? "Purchase authentication",
            "text": screen.text ?? "",
            "warningClass": screen.textIsWarning ? " warning" : "",
            "issuer": "Harness Test Bank",
            "scheme": transaction.scheme?.name ?? "",
            "action": action,
            "acsTransID": acsTransID,
        ], html: ["fields": Self.fields(screen), "buttons": Self.buttons(screen)])
        return .html(page)
    }

    /// The entry fields of a screen, each with its label.
    static func fields(_ screen: ChallengeScreenContent) -> String {
        let escape = Markup.escape
        var html = ""
        switch screen.uiType {
        case .text:
            html += """
                <label for="answer">\(escape(screen.label ?? "Code"))</label>
                <input type="text" id="answer" name="answer" autocomplete="one-time-code" inputmode="numeric" autofocus>
                """
        case .singleSelect, .multiSelect:
            let type = screen.uiType == .singleSelect ? "radio" : "checkbox"
            html += "<fieldset><legend>\(escape(screen.label ?? "Choose"))</legend>\n"
            for (index, option) in screen.options.enumerated() {
                html += "<label><input type=\"\(type)\" name=\"answer\" value=\"\(escape(option.key))\"\(index == 0 && type == "radio" ? " required" : "")> \(escape(option.label))</label>\n"
            }
            html += "</fieldset>"
        case .outOfBand, .htmlOutOfBand, .information, .html:
            break
        }
        if let whitelisting = screen.whitelistingInfoText {
            html += "\n<label><input type=\"checkbox\" name=\"whitelisting\" value=\"Y\"> \(escape(whitelisting))</label>"
        }
        return html
    }

    static func buttons(_ screen: ChallengeScreenContent) -> String {
        let escape = Markup.escape
        var html: [String] = []
        switch screen.uiType {
        case .outOfBand, .htmlOutOfBand:
            html.append("<button type=\"submit\" name=\"action\" value=\"continue\">\(escape(screen.oobContinueLabel ?? "Continue"))</button>")
        case .information:
            html.append("<button type=\"submit\" name=\"action\" value=\"continue\">Continue</button>")
        case .text, .singleSelect, .multiSelect, .html:
            html.append("<button type=\"submit\" name=\"action\" value=\"submit\">\(escape(screen.submitLabel ?? "Submit"))</button>")
        }
        if screen.uiType == .text, let resend = screen.resendInformationLabel {
            html.append("<button type=\"submit\" class=\"secondary\" name=\"action\" value=\"resend\" formnovalidate>\(escape(resend))</button>")
        }
        html.append("<button type=\"submit\" class=\"secondary\" name=\"action\" value=\"cancel\" formnovalidate>Cancel</button>")
        return html.joined(separator: "\n")
    }

    /// The page that posts the final CRes and the session data to the notificationURL.
    private func finalPage(_ result: ChallengeResult, transaction: Transaction, browser: BrowserChallenge) -> HTTPResponse {
        let cres = JSONValue.object([
            ("messageType", .string(MessageType.cRes.rawValue)), ("messageVersion", .string(transaction.version.rawValue)),
            ("threeDSServerTransID", .string(transaction.ids.threeDSServerTransID ?? "")), ("acsTransID", .string(transaction.ids.acsTransID ?? "")),
            ("challengeCompletionInd", .string("Y")), ("transStatus", .string(result.transStatus.inFinalCRes.rawValue)),
        ])
        let bytes = JSONWriter.write(cres)
        journal?.message(transaction.ids.dsTransID, from: .accessControlServer, to: .browser, type: MessageType.cRes.rawValue, body: bytes,
                         note: "posted to the notificationURL as the cres form field")
        guard let pages = settings.browserPages else { return Self.errorPage(BrowserRefusal("the ACS has no page templates", status: .internalServerError)) }
        // threeDSSessionData goes back only when the CReq's form carried it.
        let sessionField = browser.threeDSSessionData.map { #"<input type="hidden" name="threeDSSessionData" value="\#(Markup.escape($0))">"# } ?? ""
        return .html(Markup.render(pages.final, text: [
            "notificationURL": browser.notificationURL, "cres": Base64URL.encode(bytes), "threeDSSessionData": browser.threeDSSessionData ?? "",
        ], html: ["threeDSSessionDataField": sessionField]))
    }

    static func errorPage(_ refusal: BrowserRefusal) -> HTTPResponse {
        .notice(title: "Authentication error", paragraph: Markup.escape(refusal.reason), status: refusal.status)
    }
}
