import Configuration
import EMV3DS
import Foundation
import Harness
import JSON
import Net
import SDKSimulator
import Testing
import TestSupport

/// The demo merchant over HTTP: the checkout page, the web view's body, the merchant's return
/// redirect, and what the notification page tells a checkout's iframe. RealBrowserTests runs
/// the same pages in Chromium.
@Suite("Demo checkout and web-view mode over HTTP")
struct DemoCheckoutTests {
    // MARK: The checkout

    @Test func theCheckoutIsAPlainPageWithItsCardFormAndTheScenariosCards() async throws {
        try await withHarness { harness in
            let response = try await harness.client.get(harness.baseURL + "/demo/checkout", headers: ["Accept": "text/html,application/xhtml+xml"])
            #expect(response.status == .ok)
            #expect(response.headers.mediaType == "text/html")
            let page = response.bodyText
            for element in [#"<form id="checkout""#, #"<label for="card-number">"#, #"list="test-cards""#, #"<datalist id="test-cards">"#,
                            #"<label for="window-size">"#, #"<label for="message-version">"#, #"id="pay""#, #"role="status""#] {
                #expect(page.contains(element), "\(element)")
            }
            // The cards come from the scenario file, each with its scenario's name.
            for (pan, name) in [("4000000000001000", "frictionless-y"), ("4000000000110009", "challenge-text"),
                                ("4000000000120008", "challenge-single-select"), ("4000000000140006", "challenge-oob"),
                                ("4000000000710006", "method-never-notifies")] {
                #expect(page.contains(#"<option value="\#(pan)">\#(name)</option>"#), "\(name)")
            }
            for size in ["01", "02", "03", "04", "05"] { #expect(page.contains(#"<option value="\#(size)""#), "\(size)") }
            // What the browser asked the page with goes into the AReq's browserAcceptHeader.
            #expect(page.contains(#"data-accept-header="text/html,application/xhtml+xml""#))
            // Nothing loaded from elsewhere, and every placeholder filled in.
            #expect(!page.contains("<link") && !page.contains("src=") && !page.contains("{{"))
            // The harness's API by relative URL: the page works on whichever port served it.
            for call in ["'/3ds-server/prepare'", "'/3ds-server/authenticate'", "'/3ds-server/transactions/'"] { #expect(page.contains(call), "\(call)") }
            #expect(!page.contains(harness.baseURL))
        }
    }

    @Test func theNotificationPageTellsTheCheckoutsIframeThatTheChallengeFinished() async throws {
        try await withHarness { harness in
            let record = try JSONReader.parse(try await harness.post("/3ds-server/authenticate",
                                                                     JSONWriter.write(browserRequest(pan: "4000000000110009", version: .v2_2_0))).body).value
            let id = try #require(record["threeDSServerTransID"]?.stringValue)
            let challenge = try #require(record["browserChallenge"])
            let first = try ACSPage(try await harness.postForm(try #require(challenge["acsURL"]?.stringValue), [
                ("creq", try #require(challenge["creq"]?.stringValue)), ("threeDSSessionData", try #require(challenge["threeDSSessionData"]?.stringValue)),
            ]).bodyText)
            let final = try ACSPage(try await harness.postForm(first.action, [("answer", "1234"), ("action", "submit")]).bodyText)
            let notified = try await harness.postForm(final.action, final.fields)
            #expect(notified.status == .ok)
            #expect(notified.bodyText.contains(#"window.parent.postMessage({"challenge":"finished","transStatus":"Y","threeDSServerTransID":"\#(id)"}, "*")"#),
                    "\(notified.bodyText)")
            #expect(notified.bodyText.contains("if (window.parent !== window)"))
        }
    }

    // MARK: The web view's body

    @Test func theWebViewBodyCarriesTheOrderForItsScript() async throws {
        try await withHarness { harness in
            let loaded = try await harness.get("/demo/webview?acctNumber=4000000000110009&returnURL=gatewaysdk%3A%2F%2F3dsecure&challengeWindowSize=03")
            #expect(loaded.status == .ok)
            #expect(loaded.headers.mediaType == "text/html")
            for attribute in [#"data-acct-number="4000000000110009""#, #"data-return-url="gatewaysdk://3dsecure""#,
                              #"data-challenge-window-size="03""#, #"data-purchase-amount="1099""#, #"data-purchase-currency="978""#,
                              #"data-message-version="""#] {
                #expect(loaded.bodyText.contains(attribute), "\(attribute)")
            }
            #expect(!loaded.bodyText.contains("{{") && !loaded.bodyText.contains("src="))
            // The same order as JSON from the app's server; the defaults fill in what it leaves out.
            let posted = try await harness.post("/demo/webview", Array(#"{"acctNumber":"4000000000001000","messageVersion":"2.2.0"}"#.utf8))
            #expect(posted.status == .ok)
            #expect(posted.headers.mediaType == "text/html")
            for attribute in [#"data-acct-number="4000000000001000""#, #"data-return-url="harness-demo://3dsecure""#,
                              #"data-challenge-window-size="05""#, #"data-message-version="2.2.0""#] {
                #expect(posted.bodyText.contains(attribute), "\(attribute)")
            }
        }
    }

    @Test func aReturnURLThatCouldBreakOutOfItsAttributeIsEscaped() async throws {
        try await withHarness { harness in
            let body = JSONWriter.write(.object([("acctNumber", .string("4000000000001000")), ("returnURL", .string(#"app://done?x="><script>alert(1)</script>"#))]))
            let response = try await harness.post("/demo/webview", body)
            #expect(response.status == .ok)
            #expect(response.bodyText.contains(#"data-return-url="app://done?x=&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;""#))
            #expect(!response.bodyText.contains("<script>alert"))
        }
    }

    @Test func anOrderTheWebViewCannotTakeIs400WithTheReason() async throws {
        try await withHarness { harness in
            for (query, reason) in [
                ("", "acctNumber is required"),
                ("acctNumber=4000", "acctNumber must be 13-19 digits"),
                ("acctNumber=4000000000001000&returnURL=not%20a%20url", "returnURL must be an absolute URL"),
                ("acctNumber=4000000000001000&returnURL=app%3A%2F%2Fx%0D%0ASet-Cookie%3A%20a%3D1", "returnURL must be an absolute URL"),
                ("acctNumber=4000000000001000&challengeWindowSize=06", #"challengeWindowSize "06" is not one of 01, 02, 03, 04, 05"#),
                ("acctNumber=4000000000001000&messageVersion=2.0.0", #"messageVersion "2.0.0" is not one of"#),
                ("acctNumber=4000000000001000&purchaseAmount=10.99", "purchaseAmount must be 1-12 digits"),
            ] {
                let response = try await harness.get("/demo/webview?" + query)
                #expect(response.status == .badRequest, "\(query)")
                #expect(response.headers.mediaType == "text/html", "\(query)")
                #expect(response.bodyText.contains(Markup.escape(reason)), "\(query): \(response.bodyText)")
            }
            // Every problem at once.
            let both = try await harness.get("/demo/webview?returnURL=nope&challengeWindowSize=9")
            #expect(both.bodyText.contains("acctNumber is required") && both.bodyText.contains("returnURL must be") && both.bodyText.contains("challengeWindowSize"))

            // The app's server gets the API's JSON.
            for (body, contentType, status, reason) in [
                (#"{"acctNumber":4000000000001000}"#, "application/json", 400, "acctNumber must be a string"),
                (#"{"acctNumber":"4000000000001000","returnURL":"gatewaysdk"}"#, "application/json", 400, "returnURL must be an absolute URL"),
                ("[1]", "application/json", 400, "body must be a JSON object"),
                ("acctNumber=4000000000001000", "application/x-www-form-urlencoded", 415, "expected Content-Type application/json"),
            ] {
                let response = try await harness.post("/demo/webview", Array(body.utf8), contentType: contentType)
                #expect(response.status.code == status, "\(body)")
                #expect(response.headers.mediaType == "application/json")
                #expect(try JSONReader.parse(response.body).value["error"]?.stringValue?.contains(reason) == true, "\(response.bodyText)")
            }
        }
    }

    // MARK: The merchant's return page

    @Test func theReturnPageRedirectsToTheAppWithTheTransactionsStatusAndID() async throws {
        try await withHarness { harness in
            for (pan, status) in [("4000000000001000", "Y"), ("4000000000003006", "N")] {
                let record = try JSONReader.parse(try await harness.post("/3ds-server/authenticate",
                                                                         JSONWriter.write(browserRequest(pan: pan, version: .v2_3_1))).body).value
                let id = try #require(record["threeDSServerTransID"]?.stringValue)
                for (returnURL, expected) in [("gatewaysdk%3A%2F%2F3dsecure", "gatewaysdk://3dsecure?"),
                                              ("https%3A%2F%2Fshop.example%2Fdone%3Forder%3D7", "https://shop.example/done?order=7&"),
                                              ("", "harness-demo://3dsecure?")] {
                    let response = try await harness.get("/demo/webview/return?threeDSServerTransID=\(id)&returnURL=\(returnURL)")
                    #expect(response.status == .seeOther, "\(response.bodyText)")
                    #expect(response.headers["Location"] == "\(expected)summaryStatus=\(status)&threeDSServerTransID=\(id)")
                    #expect(response.headers.mediaType == "text/html")
                }
            }
        }
    }

    @Test func aFlowThatFailedReturnsToTheAppWithSummaryStatusErrorAndTheReason() async throws {
        try await withHarness { harness in
            let response = try await harness.get("/demo/webview/return?returnURL=gatewaysdk%3A%2F%2F3dsecure&error=card+not+enrolled%3A+400000%2A%2A%2A%2A%2A%2A1000")
            #expect(response.status == .seeOther)
            #expect(response.headers["Location"] == "gatewaysdk://3dsecure?summaryStatus=error&error=card%20not%20enrolled%3A%20400000%2A%2A%2A%2A%2A%2A1000")
            // The id the page had, passed on (encoded: it comes from the page, not from the 3DS Server).
            let withID = try await harness.get("/demo/webview/return?error=x&threeDSServerTransID=a%26b")
            #expect(withID.headers["Location"] == "harness-demo://3dsecure?summaryStatus=error&error=x&threeDSServerTransID=a%26b")
            // Under the name the app's SDK reads (a gateway SDK's 3DSecureId); a name a URL cannot carry as it is, refused.
            let gateway = try await harness.get("/demo/webview/return?returnURL=gatewaysdk%3A%2F%2F3dsecure&error=x&threeDSServerTransID=t1&returnIdParameter=3DSecureId")
            #expect(gateway.headers["Location"] == "gatewaysdk://3dsecure?summaryStatus=error&error=x&3DSecureId=t1")
            let refused = try await harness.get("/demo/webview/return?error=x&returnIdParameter=a%26b")
            #expect(refused.status == .badRequest && refused.bodyText.contains("returnIdParameter must be"))
        }
    }

    @Test func theReturnPageRefusesABadReturnURLAndAnUnknownTransaction() async throws {
        try await withHarness { harness in
            let unknown = UUID().uuidString.lowercased()
            for (query, status, reason) in [
                ("threeDSServerTransID=\(unknown)&returnURL=not%20a%20url", 400, "returnURL must be an absolute URL"),
                ("threeDSServerTransID=\(unknown)&returnURL=app%3A%2F%2Fx%0AInjected%3A%201", 400, "returnURL must be an absolute URL"),
                ("threeDSServerTransID=\(unknown)", 404, "no transaction \(unknown) at this 3DS Server"),
                ("returnURL=gatewaysdk%3A%2F%2F3dsecure", 400, "threeDSServerTransID is required"),
            ] {
                let response = try await harness.get("/demo/webview/return?" + query)
                #expect(response.status.code == status, "\(query)")
                #expect(response.headers["Location"] == nil)
                #expect(response.headers.mediaType == "text/html")
                #expect(response.bodyText.contains(Markup.escape(reason)), "\(query): \(response.bodyText)")
            }
        }
    }

    // MARK: Without templates

    /// Both pages carry the script they share (demo-3ds.js): without it, neither is served, and the 404 names it.
    @Test func withoutTheSharedScriptTheDemoIs404NamingIt() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("templates-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for file in ["acs-challenge.html", "acs-final.html", "demo-checkout.html", "demo-webview.html"] {
            try FileManager.default.copyItem(atPath: repositoryRoot + "/config/templates/" + file, toPath: folder + "/" + file)
        }
        try await withHarness(configure: { $0.accessControlServer.pageTemplates = folder }) { harness in
            for path in ["/demo/checkout", "/demo/webview?acctNumber=4000000000001000"] {
                let page = try await harness.get(path)
                #expect(page.status == .notFound, "\(path)")
                #expect(page.bodyText.contains("demo-3ds.js is not in the page templates folder"), "\(page.bodyText)")
            }
        }
    }

    @Test func withoutItsTemplatesTheDemoIs404SayingWhichFileIsMissing() async throws {
        // The ACS's templates only: the harness starts, the demo's pages are missing.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("templates-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for file in ["acs-challenge.html", "acs-final.html"] {
            try FileManager.default.copyItem(atPath: repositoryRoot + "/config/templates/" + file, toPath: folder + "/" + file)
        }
        try await withHarness(configure: { $0.accessControlServer.pageTemplates = folder }) { harness in
            let checkout = try await harness.get("/demo/checkout")
            #expect(checkout.status == .notFound)
            #expect(checkout.bodyText.contains("demo-checkout.html is not in the page templates folder"), "\(checkout.bodyText)")
            #expect(!checkout.bodyText.contains(folder))
            let webView = try await harness.get("/demo/webview?acctNumber=4000000000001000")
            #expect(webView.status == .notFound)
            #expect(webView.bodyText.contains("demo-webview.html"))
            let posted = try await harness.post("/demo/webview", Array(#"{"acctNumber":"4000000000001000"}"#.utf8))
            #expect(posted.status == .notFound)
            #expect(posted.headers.mediaType == "application/json")
        }
    }
}
