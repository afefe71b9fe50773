import EMV3DS
import Foundation
import JSON
import Net
import SDKSimulator
import Testing

@Suite("Browser challenge at the ACS: the creq form, one page per step, the final CRes to the notificationURL")
struct BrowserChallengeTests {
    /// Authenticates a browser challenge PAN and opens the challenge as the merchant page's form does.
    private func open(_ harness: RunningHarness, pan: String = "4000000000110009", version: MessageVersion = .v2_2_0) async throws
        -> (id: String, firstPage: String) {
        let answer = try await harness.postMessage("/3ds-server/authenticate", browserRequest(pan: pan, version: version))
        #expect(answer["transStatus"]?.stringValue == "C", "\(JSONWriter.string(answer))")
        let challenge = try #require(answer["browserChallenge"], "no browserChallenge in \(JSONWriter.string(answer))")
        let acsURL = try #require(challenge["acsURL"]?.stringValue)
        let first = try await harness.postForm(acsURL, [("creq", challenge["creq"]?.stringValue ?? ""),
                                                         ("threeDSSessionData", challenge["threeDSSessionData"]?.stringValue ?? "")])
        #expect(first.status == .ok, "\(first.bodyText)")
        #expect(first.headers["Content-Type"]?.hasPrefix("text/html") == true)
        return (try #require(answer["threeDSServerTransID"]?.stringValue), first.bodyText)
    }

    @Test(arguments: MessageVersion.allCases)
    func aTextChallengeWithAWrongThenTheRightCodeEndsYAtTheNotificationURL(version: MessageVersion) async throws {
        try await withHarness { harness in
            let (id, page) = try await open(harness, version: version)
            #expect(page.contains("<label for=\"answer\">"), "an accessible text field")
            let form = try ACSPage(page)
            let wrong = try await harness.postForm(form.action, [("answer", "0000"), ("action", "submit")])
            #expect(wrong.bodyText.contains("class=\"info warning\""), "the warning after a wrong code")
            let final = try await harness.postForm(form.action, [("answer", "1234"), ("action", "submit")])
            let finalForm = try ACSPage(final.bodyText)
            #expect(finalForm.action.hasSuffix("/3ds-server/notification"))
            let cresBytes = try Base64URL.decode(try #require(finalForm.field("cres")))
            let cres = try JSONReader.parse(cresBytes).value
            #expect(cres["messageType"]?.stringValue == "CRes" && cres["transStatus"]?.stringValue == "Y" && cres["challengeCompletionInd"]?.stringValue == "Y")
            #expect(ChallengeRules.browserFinalCRes.check(cres, context: MessageContext(version: version)).violations.isEmpty)
            // The RReq came before the final page: the 3DS Server has the result already.
            let record = try JSONReader.parse(try await harness.get("/3ds-server/transactions/" + id).body).value
            #expect(record["state"]?.stringValue == "completed" && record["transStatus"]?.stringValue == "Y", "\(JSONWriter.string(record))")
            // The page's form as the browser posts it; then again, replayed.
            let notified = try await harness.postForm(finalForm.action, finalForm.fields)
            #expect(notified.status.code < 400, "\(notified.bodyText)")
            let replayed = try await harness.postForm(finalForm.action, finalForm.fields)
            #expect(replayed.status == .badRequest)
            // A page posted after the end is refused with a page.
            let late = try await harness.postForm(form.action, [("answer", "1234"), ("action", "submit")])
            #expect(late.status == .badRequest && late.bodyText.contains("has no browser challenge open"))
        }
    }

    @Test func cancellingEndsNWithChallengeCancel01() async throws {
        try await withHarness { harness in
            let (id, page) = try await open(harness)
            let final = try await harness.postForm(try ACSPage(page).action, [("action", "cancel")])
            let cres = try JSONReader.parse(try Base64URL.decode(try #require(try ACSPage(final.bodyText).field("cres")))).value
            #expect(cres["transStatus"]?.stringValue == "N")
            let record = try JSONReader.parse(try await harness.get("/3ds-server/transactions/" + id).body).value
            #expect(record["challengeCancel"]?.stringValue == "01", "\(JSONWriter.string(record))")
        }
    }

    @Test(arguments: [
        ("creq=%%%&threeDSSessionData=abc", "creq is not base64url"),
        ("creq=bm90IGpzb24&threeDSSessionData=abc", "creq is not a JSON object"),
        ("threeDSSessionData=abc", "the form has no creq field"),
        // threeDSSessionData is optional (it is the 3DS Requestor's own state): without it, the CReq is read.
        ("creq=eyJhIjoxfQ", "the CReq is invalid"),
        ("creq=eyJtZXNzYWdlVHlwZSI6IkNSZXEifQ&threeDSSessionData=abc", "the CReq is invalid"),
    ])
    func aBadCReqFormIsRefusedWithAPage(body: String, reason: String) async throws {
        try await withHarness { harness in
            let response = try await harness.client.post(harness.baseURL + "/acs/browser/challenge", body: Array(body.utf8),
                                                         contentType: "application/x-www-form-urlencoded")
            #expect(response.status == .badRequest)
            #expect(response.headers["Content-Type"]?.hasPrefix("text/html") == true)
            #expect(response.bodyText.contains(reason), "\(response.bodyText)")
        }
    }

    @Test func aCReqForAnUnknownTransactionIsNotFound() async throws {
        try await withHarness { harness in
            let creq = JSONValue.object([("messageType", .string("CReq")), ("messageVersion", .string("2.2.0")),
                                         ("threeDSServerTransID", .string("8a880dc0-d2d2-4067-bcb1-b08d1690b26e")),
                                         ("acsTransID", .string("8a880dc0-d2d2-4067-bcb1-b08d1690b26f")), ("challengeWindowSize", .string("05"))])
            let response = try await harness.postForm(harness.baseURL + "/acs/browser/challenge",
                                              [("creq", Base64URL.encode(JSONWriter.write(creq))), ("threeDSSessionData", "abc")])
            #expect(response.status == .notFound && response.bodyText.contains("no transaction"))
        }
    }
}
