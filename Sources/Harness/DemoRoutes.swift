import EMV3DS
import Foundation
import JSON
import Net
import Scenarios
import Store
import ThreeDSServer

/// The demo merchant (docs/demo.md): pages that run the browser channel through this harness's
/// own 3DS Server API from their script, by relative URLs, as a merchant's page would.
///
/// - `GET /demo/checkout`: a shop's checkout; the challenge opens in an iframe of the chosen size.
/// - `GET /demo/webview?acctNumber=…&returnURL=…` (or `POST` with the same as JSON): the HTML a
///   mobile app loads into a web view; the flow runs top level and ends on a redirect to the
///   app's custom scheme (`harness-demo://3dsecure?summaryStatus=Y&threeDSServerTransID=…`).
/// - `GET /demo/webview/return?threeDSServerTransID=…&returnURL=…`: the merchant's redirect page
///   for what ends without a challenge (frictionless, errors), which the notification's own
///   redirect covers after one.
struct DemoRoutes: Sendable {
    static let checkoutPath = "/demo/checkout"
    static let webViewPath = "/demo/webview"
    static let returnPath = "/demo/webview/return"

    let templates: DemoTemplates
    let scenarios: ScenarioSource
    let threeDSServer: ThreeDSServer

    /// Reads the demo's templates from `templateFolder` (the ACS's `pageTemplates`); a missing one is a 404 of its page.
    init(templateFolder: String, scenarios: ScenarioSource, threeDSServer: ThreeDSServer) {
        templates = DemoTemplates(folder: templateFolder)
        self.scenarios = scenarios
        self.threeDSServer = threeDSServer
    }

    func register(on router: inout Router) {
        router.get(Self.checkoutPath) { request, _ in checkout(request) }
        router.get(Self.webViewPath) { request, _ in
            // A web view shows what it loads: a refusal is a page with the reason.
            do throws(HTTPError) { return try webView(WebViewOrder(fields: request.queryItems), request) } catch { return Self.refusal(error) }
        }
        router.post(Self.webViewPath) { request, _ in
            // The app's server asks: a refusal is the API's JSON.
            guard request.headers.mediaType == "application/json" else {
                throw HTTPError(.unsupportedMediaType, "expected Content-Type application/json, got \(request.headers["Content-Type"] ?? "none")")
            }
            let order = try WebViewOrder(json: request.jsonBody())
            // Without its template the body cannot be made: 404 as JSON, like any refusal of this call.
            guard templates.webView != nil else { throw HTTPError(.notFound, templates.missing(DemoTemplates.webViewFile)) }
            return webView(order, request)
        }
        router.get(Self.returnPath) { request, _ async in
            do throws(HTTPError) { return try await returnRedirect(request.queryItems) } catch { return Self.refusal(error) }
        }
    }

    // MARK: Pages

    private func checkout(_ request: HTTPRequest) -> HTTPResponse {
        guard let template = templates.checkout else { return Self.refusal(HTTPError(.notFound, templates.missing(DemoTemplates.checkoutFile))) }
        let cards = DemoCard.offered(by: scenarios.catalog.scenarios)
        return .html(Markup.render(template, text: ["acceptHeader": Self.acceptHeader(request)],
                                   html: ["cardOptions": DemoCard.options(cards), "cardList": DemoCard.list(cards), "demoScript": templates.script]))
    }

    private func webView(_ order: WebViewOrder, _ request: HTTPRequest) -> HTTPResponse {
        guard let template = templates.webView else { return Self.refusal(HTTPError(.notFound, templates.missing(DemoTemplates.webViewFile))) }
        return .html(Markup.render(template, text: [
            "acctNumber": order.acctNumber, "returnURL": order.returnURL, "returnIdParameter": order.returnIdParameter,
            "purchaseAmount": order.purchaseAmount,
            "purchaseCurrency": order.purchaseCurrency, "challengeWindowSize": order.challengeWindowSize,
            "messageVersion": order.messageVersion ?? "", "acceptHeader": Self.acceptHeader(request),
        ], html: ["demoScript": templates.script]))
    }

    /// The AReq's browserAcceptHeader: what the browser asked this page with (a script cannot read
    /// it), as a merchant's server copies it into the page. An app's server posting for its web
    /// view sends its own, or none: then the web view's usual one.
    private static func acceptHeader(_ request: HTTPRequest) -> String {
        let header = request.method == .get ? request.headers["Accept"] ?? "" : ""
        return header.isEmpty ? "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" : String(header.prefix(2048))
    }

    /// 303 to the returnURL with `summaryStatus` (the transaction's transStatus, or `error`) and
    /// the id (under `returnIdParameter`), as the notification redirects after a challenge; with `error=`
    /// (the page's flow failed before it had an outcome), `summaryStatus=error` and the reason.
    private func returnRedirect(_ query: [String: String]) async throws(HTTPError) -> HTTPResponse {
        let returnURL = try WebViewOrder.returnURL(query["returnURL"])
        let idParameter = try WebViewOrder.returnIdParameter(query["returnIdParameter"])
        let id = query["threeDSServerTransID"].flatMap { $0.isEmpty ? nil : $0 }
        let status: String
        var extra: [(String, String)] = []
        if let error = query["error"] {
            // What the page says went wrong, kept short: it ends up in an app's URL.
            status = "error"
            extra = [("error", String(error.prefix(300)))]
        } else {
            guard let id else { throw HTTPError(.badRequest, "threeDSServerTransID is required (or error, when the flow failed before it had a transaction)") }
            guard let bytes = await threeDSServer.transactions.json(id), let record = try? JSONReader.parse(bytes).value else {
                throw HTTPError(.notFound, "no transaction \(id) at this 3DS Server: authenticate first")
            }
            status = record["transStatus"]?.stringValue ?? "error"
        }
        let location = ReturnRedirect(returnURL: returnURL, idParameter: idParameter).location(summaryStatus: status, id: id, extra: extra)
        // No link to the returnURL in the body: it may be any scheme (javascript: too), and only the redirect should follow it.
        var response = HTTPResponse.notice(title: "Returning to the app", paragraph: "Authentication ended: returning to the app.", status: .seeOther)
        response.headers.set("Location", location)
        return response
    }

    /// A refusal as a page: the status and the reason.
    private static func refusal(_ error: HTTPError) -> HTTPResponse {
        .notice(title: "Demo checkout: cannot continue", paragraph: Markup.escape(error.message), status: error.status)
    }

}

/// The demo's page templates, read once at start from the folder of the ACS's (`config/templates/`):
/// `{{name}}` is a value escaped for HTML, `{{{name}}}` HTML the harness built. A file that cannot
/// be read leaves its page answering 404 with the reason, rather than stopping the harness. The
/// script both pages share (`demo-3ds.js`) goes into each; without it neither page is served.
struct DemoTemplates: Sendable {
    static let checkoutFile = "demo-checkout.html"
    static let webViewFile = "demo-webview.html"
    static let scriptFile = "demo-3ds.js"

    private let checkoutTemplate: String?
    private let webViewTemplate: String?
    private let sharedScript: String?

    init(folder: String) {
        func read(_ name: String) -> String? { try? String(contentsOfFile: folder + "/" + name, encoding: .utf8) }
        checkoutTemplate = read(Self.checkoutFile)
        webViewTemplate = read(Self.webViewFile)
        sharedScript = read(Self.scriptFile)
    }

    /// A page's template, when it and the shared script were read.
    var checkout: String? { sharedScript == nil ? nil : checkoutTemplate }
    var webView: String? { sharedScript == nil ? nil : webViewTemplate }
    var script: String { sharedScript ?? "" }

    /// The reason a page is missing; the folder is named by its key, not by its path on this machine.
    func missing(_ file: String) -> String {
        let absent = (file == Self.checkoutFile ? checkoutTemplate : webViewTemplate) == nil ? file : Self.scriptFile
        return "the demo's page template \(absent) is not in the page templates folder (accessControlServer.pageTemplates, config/templates by default)"
    }

}

/// A test card the checkout offers: a scenario of the scenario file with its own PAN.
struct DemoCard: Sendable {
    /// The scenarios offered, in this order: one per kind of outcome a web developer wants to see.
    /// A name the scenario file lacks (or that has no PAN) is left out.
    static let scenarioNames = [
        "frictionless-y", "frictionless-n", "frictionless-a", "challenge-text", "challenge-single-select", "challenge-multi-select",
        "challenge-oob", "challenge-information", "challenge-two-steps", "challenge-html", "challenge-whitelisting", "decoupled",
        "method-slow", "method-never-notifies", "method-unavailable", "method-incomplete-challenge",
    ]

    let pan: String
    let name: String
    let description: String

    static func offered(by scenarios: [Scenario]) -> [DemoCard] {
        scenarioNames.compactMap { name in
            guard let scenario = scenarios.first(where: { $0.name == name }), let pan = scenario.pan else { return nil }
            return DemoCard(pan: pan, name: name, description: scenario.description)
        }
    }

    /// The `<option>`s of the card field's datalist.
    static func options(_ cards: [DemoCard]) -> String {
        cards.map { "<option value=\"\(Markup.escape($0.pan))\">\(Markup.escape($0.name))</option>" }.joined(separator: "\n")
    }

    /// The visible list of test cards, each a button that fills the card field.
    static func list(_ cards: [DemoCard]) -> String {
        cards.map { card in
            "<li><button type=\"button\" class=\"card-pick\" data-pan=\"\(Markup.escape(card.pan))\">\(Markup.escape(card.pan))</button> "
                + "<strong>\(Markup.escape(card.name))</strong>: \(Markup.escape(card.description))</li>"
        }.joined(separator: "\n")
    }
}

/// What the web view's page pays for and where it returns, from the query or a JSON body; every
/// problem found is named in one 400.
struct WebViewOrder: Sendable {
    static let defaultReturnURL = "harness-demo://3dsecure"
    static let windowSizes = ChallengeWindowSize.allowed

    var acctNumber = ""
    var returnURL = defaultReturnURL
    /// The query parameter the app's SDK reads the transaction's id under.
    var returnIdParameter = ReturnRedirect.defaultIDParameter
    /// Minor units (cents), as the AReq's purchaseAmount.
    var purchaseAmount = "1099"
    /// ISO 4217 numeric.
    var purchaseCurrency = "978"
    var challengeWindowSize = "05"
    /// Nil: the highest version the card's range supports, as `prepare` answers it.
    var messageVersion: String?

    init(json: JSONValue) throws(HTTPError) {
        guard let members = json.objectMembers else { throw HTTPError(.badRequest, "body must be a JSON object") }
        var fields: [String: String] = [:]
        var problems: [String] = []
        for (key, value) in members where Self.names.contains(key) {
            if let text = value.stringValue { fields[key] = text } else { problems.append("\(key) must be a string") }
        }
        try self.init(fields: fields, problems: problems)
    }

    init(fields: [String: String], problems: [String] = []) throws(HTTPError) {
        var problems = problems
        let pan = (fields["acctNumber"] ?? fields["pan"] ?? "").filter { $0 != " " }
        if pan.isEmpty {
            problems.append("acctNumber is required: the card number, 13-19 digits")
        } else if !(13...19).contains(pan.count) || !pan.allSatisfy(\.isASCII) || !pan.allSatisfy(\.isNumber) {
            problems.append("acctNumber must be 13-19 digits")
        }
        acctNumber = pan
        do { returnURL = try Self.returnURL(fields["returnURL"]) } catch { problems.append(error.message) }
        do { returnIdParameter = try Self.returnIdParameter(fields["returnIdParameter"]) } catch { problems.append(error.message) }
        if let amount = fields["purchaseAmount"] {
            if (1...12).contains(amount.count), amount.allSatisfy({ $0.isASCII && $0.isNumber }) { purchaseAmount = amount } else {
                problems.append("purchaseAmount must be 1-12 digits, in minor units (1099 is 10.99)")
            }
        }
        if let currency = fields["purchaseCurrency"] {
            if currency.count == 3, currency.allSatisfy({ $0.isASCII && $0.isNumber }) { purchaseCurrency = currency } else {
                problems.append("purchaseCurrency must be an ISO 4217 numeric code (978 is EUR)")
            }
        }
        if let size = fields["challengeWindowSize"] {
            if Self.windowSizes.contains(size) { challengeWindowSize = size } else {
                problems.append("challengeWindowSize \"\(size)\" is not one of \(Self.windowSizes.joined(separator: ", "))")
            }
        }
        if let version = fields["messageVersion"], !version.isEmpty {
            if MessageVersion(rawValue: version) != nil { messageVersion = version } else {
                problems.append("messageVersion \"\(version)\" is not one of \(MessageVersion.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        guard problems.isEmpty else { throw HTTPError(.badRequest, problems.joined(separator: "; ")) }
    }

    /// The members a web view's order reads.
    private static let names: Set<String> = ["acctNumber", "pan", "returnURL", "returnIdParameter", "purchaseAmount", "purchaseCurrency",
                                             "challengeWindowSize", "messageVersion"]

    /// `returnIdParameter` as given (checked as `authenticate` checks it), or the default.
    static func returnIdParameter(_ given: String?) throws(HTTPError) -> String {
        guard let given, !given.isEmpty else { return ReturnRedirect.defaultIDParameter }
        if let problem = ReturnRedirect.problem(withParameterName: given) { throw HTTPError(.badRequest, problem) }
        return given
    }

    /// `returnURL` as given, or the default; checked as `authenticate` checks its own.
    static func returnURL(_ given: String?) throws(HTTPError) -> String {
        guard let given, !given.isEmpty else { return defaultReturnURL }
        guard ThreeDSServer.isRedirectTarget(given) else {
            throw HTTPError(.badRequest, "returnURL must be an absolute URL of at most 2048 printable ASCII characters (any scheme, e.g. \(defaultReturnURL))")
        }
        return given
    }
}
