import Foundation
import JSON
import Net
import Testing
import TestSupport

/// The demo checkout and its web-view mode in a real browser: Browser/demo_browser.py drives
/// headless Chromium with Selenium against a harness started here, and reports what the page
/// showed (or where the web view was redirected); the harness's own record is checked beside it.
/// Screenshots of each challenge page go to `HARNESS_BROWSER_SCREENSHOTS`
/// (default /tmp/harness-browser-screenshots).
@Suite("The demo checkout in a real browser (headless Chromium, Selenium)")
struct RealBrowserTests {
    static let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    static let chromedriver = ["/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let hasSelenium = (try? ChildProcess.run("python3", ["-c", "import selenium"], timeout: 30).status) == 0

    /// Why the tests cannot run here, or nil.
    static let missing: String? = {
        var absent: [String] = []
        if chromium == nil { absent.append("chromium (apt-get install chromium)") }
        if chromedriver == nil { absent.append("chromedriver (apt-get install chromium-driver)") }
        if !hasSelenium { absent.append("selenium (python3 -m pip install --user selenium)") }
        return absent.isEmpty ? nil : "missing " + absent.joined(separator: ", ") + ": the real-browser tests are skipped"
    }()

    static let screenshots = ProcessInfo.processInfo.environment["HARNESS_BROWSER_SCREENSHOTS"] ?? "/tmp/harness-browser-screenshots"
    static let returnURL = "harness-demo://3dsecure"

    /// Runs one case of the script against `harness`: what the browser saw, as the script's last line.
    static func browse(_ name: String, _ harness: RunningHarness, pan: String? = nil) async throws -> JSONValue {
        let arguments = [
            repositoryRoot + "/Tests/FlowTests/Browser/demo_browser.py", "--base-url", harness.baseURL, "--case", name,
            "--screenshots", screenshots, "--chromium", try #require(chromium), "--chromedriver", try #require(chromedriver),
        ] + (pan.map { ["--pan", $0] } ?? [])
        // Off the cooperative pool: the browser takes seconds, and the harnesses of the tests running meanwhile need its threads.
        let result = try await offThePool { try ChildProcess.run("python3", arguments, timeout: 180) }
        try #require(result.status == 0, "\(name): \(result.output.suffix(3000))")
        let line = try #require(result.output.split(separator: "\n").last { $0.hasPrefix("{") }, "\(result.output)")
        return try JSONReader.parse(Array(line.utf8)).value
    }

    /// The 3DS Server's record of the transaction the page ran.
    static func record(_ id: String, _ harness: RunningHarness) async throws -> JSONValue {
        try JSONReader.parse(try await harness.get("/3ds-server/transactions/\(id)").body).value
    }

    /// The card of a scenario of the scenario file.
    static func pan(ofScenario name: String, _ harness: RunningHarness) async throws -> String {
        let scenarios = try JSONReader.parse(try await harness.get("/admin/scenarios").body).value
        let scenario = scenarios["scenarios"]?.arrayValue?.first { $0["name"]?.stringValue == name }
        return try #require(scenario?["pan"]?.stringValue, "the scenario file has no scenario \(name) with a pan")
    }

    /// The threeDSCompInd of the AReq the 3DS Server sent: whether the page's 3DS Method notified.
    static func threeDSCompInd(_ record: JSONValue) -> String? {
        record["messages"]?.arrayValue?.first { $0["message"]?["messageType"]?.stringValue == "AReq" }?["message"]?["threeDSCompInd"]?.stringValue
    }
}

// Two chains of one browser at a time: each case starts a Chromium of its own and mostly waits on its pages, so two
// chains side by side end sooner than one, without a dozen browsers at once on a 2-core machine.
extension RealBrowserTests {
    @Suite("The checkout's challenges and the web view", .serialized)
    struct Challenges {
        // MARK: The checkout

        @Test(.enabled(if: RealBrowserTests.missing == nil, Comment(rawValue: RealBrowserTests.missing ?? "")))
        func theCheckoutRunsThe3DSMethodThenATextChallengeWithAWrongThenTheRightCodeToY() async throws {
            try await withHarness { harness in
                let shown = try await RealBrowserTests.browse("checkout-text-challenge", harness)
                #expect(shown["transStatus"]?.stringValue == "Y", "\(shown)")
                #expect(shown["state"]?.stringValue == "completed")
                #expect(shown["eci"]?.stringValue == "05")
                #expect(shown["authenticationValue"]?.stringValue?.count == 28)
                #expect(shown["method"]?.stringValue == "completed", "the card's range has a 3DS Method: the page ran it and was told it finished")
                let id = try #require(shown["threeDSServerTransID"]?.stringValue)
                let record = try await RealBrowserTests.record(id, harness)
                #expect(record["transStatus"]?.stringValue == "Y")
                #expect(record["authenticationValue"] == shown["authenticationValue"])
                #expect(RealBrowserTests.threeDSCompInd(record) == "Y")
                #expect(shown["screenshots"]?.arrayValue?.count == 3)
            }
        }

        @Test(.enabled(if: RealBrowserTests.missing == nil, Comment(rawValue: RealBrowserTests.missing ?? "")))
        func aSingleSelectChallengeInA390By400IframeEndsY() async throws {
            try await withHarness { harness in
                let shown = try await RealBrowserTests.browse("checkout-single-select", harness)
                #expect(shown["transStatus"]?.stringValue == "Y", "\(shown)")
                let record = try await RealBrowserTests.record(try #require(shown["threeDSServerTransID"]?.stringValue), harness)
                #expect(record["state"]?.stringValue == "completed")
                #expect(record["transStatus"]?.stringValue == "Y")
            }
        }

        @Test(.enabled(if: RealBrowserTests.missing == nil, Comment(rawValue: RealBrowserTests.missing ?? "")))
        func anOutOfBandChallengeOnTheFullPageEndsYWhenTheCardholderContinues() async throws {
            try await withHarness { harness in
                let shown = try await RealBrowserTests.browse("checkout-oob", harness)
                #expect(shown["transStatus"]?.stringValue == "Y", "\(shown)")
                let record = try await RealBrowserTests.record(try #require(shown["threeDSServerTransID"]?.stringValue), harness)
                #expect(record["transStatus"]?.stringValue == "Y")
            }
        }

        @Test(.enabled(if: RealBrowserTests.missing == nil, Comment(rawValue: RealBrowserTests.missing ?? "")))
        func aCancelledChallengeEndsNWithChallengeCancel01() async throws {
            try await withHarness { harness in
                let shown = try await RealBrowserTests.browse("checkout-cancel", harness)
                #expect(shown["transStatus"]?.stringValue == "N", "\(shown)")
                #expect(shown["challengeCancel"]?.stringValue == "01")
                let record = try await RealBrowserTests.record(try #require(shown["threeDSServerTransID"]?.stringValue), harness)
                #expect(record["transStatus"]?.stringValue == "N")
                #expect(record["challengeCancel"]?.stringValue == "01")
            }
        }

        // MARK: The web view

        @Test(.enabled(if: RealBrowserTests.missing == nil, Comment(rawValue: RealBrowserTests.missing ?? "")))
        func theWebViewRunsTheChallengeTopLevelAndEndsOnTheAppsScheme() async throws {
            try await withHarness { harness in
                let seen = try await RealBrowserTests.browse("webview-challenge", harness)
                let redirect = try #require(seen["redirect"]?.stringValue, "\(seen)")
                #expect(seen["redirectStatus"] == .number("303"))
                #expect(seen["redirectFrom"]?.stringValue == harness.baseURL + "/3ds-server/notification")
                // The page asked for the id under a gateway SDK's name (returnIdParameter=3DSecureId).
                let prefix = RealBrowserTests.returnURL + "?summaryStatus=Y&3DSecureId="
                #expect(redirect.hasPrefix(prefix), "\(redirect)")
                let record = try await RealBrowserTests.record(String(redirect.dropFirst(prefix.count)), harness)
                #expect(record["state"]?.stringValue == "completed", "\(record)")
                #expect(record["transStatus"]?.stringValue == "Y")
            }
        }

        @Test(.enabled(if: RealBrowserTests.missing == nil, Comment(rawValue: RealBrowserTests.missing ?? "")))
        func aFrictionlessWebViewEndsOnTheAppsSchemeThroughTheReturnPage() async throws {
            try await withHarness { harness in
                let seen = try await RealBrowserTests.browse("webview-frictionless", harness)
                let redirect = try #require(seen["redirect"]?.stringValue, "\(seen)")
                #expect(seen["redirectFrom"]?.stringValue?.hasPrefix(harness.baseURL + "/demo/webview/return?") == true, "\(seen)")
                let prefix = RealBrowserTests.returnURL + "?summaryStatus=Y&threeDSServerTransID="
                #expect(redirect.hasPrefix(prefix), "\(redirect)")
                let record = try await RealBrowserTests.record(String(redirect.dropFirst(prefix.count)), harness)
                #expect(record["state"]?.stringValue == "frictionless", "\(record)")
            }
        }

        @Test(.enabled(if: RealBrowserTests.missing == nil, Comment(rawValue: RealBrowserTests.missing ?? "")))
        func aCardInNoRangeEndsTheWebViewWithSummaryStatusError() async throws {
            try await withHarness { harness in
                let seen = try await RealBrowserTests.browse("webview-unenrolled", harness)
                let redirect = try #require(seen["redirect"]?.stringValue, "\(seen)")
                #expect(redirect.hasPrefix(RealBrowserTests.returnURL + "?summaryStatus=error&error="), "\(redirect)")
                #expect(redirect.contains("not%20enrolled"), "\(redirect)")
            }
        }
    }

    @Suite("Secure Payment Confirmation, frictionless payments and the 3DS Method", .serialized)
    struct Payments {
        // MARK: Secure Payment Confirmation (2.3.1)

        /// The issuer's page enrols a credential of Chromium's virtual authenticator (DevTools WebAuthn domain), the checkout
        /// pays at 2.3.1, the ARes S makes the page run SPC (DevTools Page.setSPCTransactionMode autoAccept), and the assertion
        /// Chromium signed verifies at the ACS: the second AReq ends Y, graded areq.spc pass.
        @Test(.enabled(if: RealBrowserTests.missing == nil, Comment(rawValue: RealBrowserTests.missing ?? "")))
        func secureConfirmationOfAnEnrolledCardEndsYWithTheAssertionChromiumSigned() async throws {
            try await withHarness { harness in
                let shown = try await RealBrowserTests.browse("checkout-spc", harness)
                #expect(shown["transStatus"]?.stringValue == "Y", "\(shown)")
                #expect(shown["state"]?.stringValue == "frictionless")
                let second = try await RealBrowserTests.record(try #require(shown["threeDSServerTransID"]?.stringValue), harness)
                let areq = try #require(sentAReq(second))
                let assertion = try #require(areq["threeDSRequestorAuthenticationInfo"]?.arrayValue?.first?["threeDSReqAuthData"]?.stringValue)
                let clientData = try JSONReader.parse(Base64URL.decodeLeniently(try #require(JSONReader.parse(Array(assertion.utf8)).value["response"]?["clientDataJSON"]?.stringValue))).value
                // Chromium's own client data: an SPC assertion, for the payee and amount the ACS asked it to show.
                #expect(clientData["type"]?.stringValue == "payment.get", "\(clientData)")
                #expect(clientData["payment"]?["payeeOrigin"]?.stringValue == "https://merchant.example")
                #expect(clientData["payment"]?["total"]?["currency"]?.stringValue == "EUR")
                #expect(try await harness.check("areq.spc", of: second) == "pass")
                let checks = try await harness.checks(of: second)
                #expect(!checks.isEmpty && checks.allSatisfy { $0.verdict != "fail" }, "\(checks)")
                #expect(shown["screenshots"]?.arrayValue?.count == 2)
            }
        }

        /// The cardholder declines the browser's prompt (autoReject): the page sends spcIncompInd 02, the ACS falls back to
        /// the scenario's text challenge, and the right code ends it Y.
        @Test(.enabled(if: RealBrowserTests.missing == nil, Comment(rawValue: RealBrowserTests.missing ?? "")))
        func aDeclinedSecureConfirmationFallsBackToTheChallenge() async throws {
            try await withHarness { harness in
                let shown = try await RealBrowserTests.browse("checkout-spc-declined", harness)
                #expect(shown["transStatus"]?.stringValue == "Y", "\(shown)")
                #expect(shown["state"]?.stringValue == "completed")
                let second = try await RealBrowserTests.record(try #require(shown["threeDSServerTransID"]?.stringValue), harness)
                #expect(sentAReq(second)?["spcIncompInd"]?.stringValue == "02", "\(second)")
                #expect(try await harness.check("areq.spc", of: second) == "pass")
            }
        }

        @Test(.enabled(if: RealBrowserTests.missing == nil, Comment(rawValue: RealBrowserTests.missing ?? "")))
        func aFrictionlessPaymentShowsItsResultWithoutAChallenge() async throws {
            try await withHarness { harness in
                let shown = try await RealBrowserTests.browse("checkout-frictionless", harness)
                #expect(shown["transStatus"]?.stringValue == "Y", "\(shown)")
                #expect(shown["state"]?.stringValue == "frictionless")
                #expect(shown["eci"]?.stringValue == "05")
            }
        }

        @Test(.enabled(if: RealBrowserTests.missing == nil, Comment(rawValue: RealBrowserTests.missing ?? "")))
        func aCardWhoseRangeHasNo3DSMethodPaysWithoutOne() async throws {
            try await withHarness { harness in
                let shown = try await RealBrowserTests.browse("checkout-frictionless", harness, pan: try await RealBrowserTests.pan(ofScenario: "method-unavailable", harness))
                #expect(shown["method"]?.stringValue == "not offered", "\(shown)")
                let record = try await RealBrowserTests.record(try #require(shown["threeDSServerTransID"]?.stringValue), harness)
                #expect(RealBrowserTests.threeDSCompInd(record) == "U")
            }
        }

        @Test(.enabled(if: RealBrowserTests.missing == nil, Comment(rawValue: RealBrowserTests.missing ?? "")))
        func aMethodThatNeverNotifiesIsWaitedForTenSecondsThenTheAuthenticationGoesOn() async throws {
            try await withHarness { harness in
                let shown = try await RealBrowserTests.browse("checkout-frictionless", harness, pan: try await RealBrowserTests.pan(ofScenario: "method-never-notifies", harness))
                #expect(shown["method"]?.stringValue == "timed out after 10 s", "\(shown)")
                let record = try await RealBrowserTests.record(try #require(shown["threeDSServerTransID"]?.stringValue), harness)
                #expect(RealBrowserTests.threeDSCompInd(record) == "N")
            }
        }

    }
}
