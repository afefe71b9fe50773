import EMV3DS
import Foundation
import JSON
import Net
import Testing

/// A browser authentication's body for `POST /3ds-server/authenticate`: the browser's fields as
/// a merchant page collects them.
private func browserAuthentication(pan: String, version: MessageVersion) -> [UInt8] {
    var members: [(key: String, value: JSONValue)] = [
        ("deviceChannel", .string("02")), ("messageVersion", .string(version.rawValue)), ("acctNumber", .string(pan)),
        ("purchaseAmount", .string("1099")), ("purchaseCurrency", .string("978")),
        ("browserAcceptHeader", .string("text/html,application/xhtml+xml")), ("browserUserAgent", .string("Mozilla/5.0 (X11; Linux x86_64)")),
        ("browserIP", .string("192.0.2.10")), ("browserJavaEnabled", .bool(false)), ("browserLanguage", .string("en-GB")),
        ("browserColorDepth", .string("24")), ("browserScreenHeight", .string("1080")), ("browserScreenWidth", .string("1920")),
        ("browserTZ", .string("0")), ("challengeWindowSize", .string("05")),
    ]
    if version >= .v2_2_0 { members.append(("browserJavascriptEnabled", .bool(true))) }
    if version >= .v2_3_1 { members.append(("acceptLanguage", .array([.string("en-GB")]))) }
    return JSONWriter.write(.object(members))
}

/// A page's form: where it posts and its hidden fields.
private struct PageForm {
    let action: String
    let hidden: [String: String]

    init(_ page: String) throws {
        func capture(_ pattern: String, in text: String) -> [[String]] {
            guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
            return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
                (1..<match.numberOfRanges).compactMap { Range(match.range(at: $0), in: text).map { String(text[$0]) } }
            }
        }
        action = try #require(capture(#"<form method="post" action="([^"]+)""#, in: page).first?.first, "no form in \(page.prefix(300))")
        var hidden: [String: String] = [:]
        for pair in capture(#"<input type="hidden" name="([^"]+)" value="([^"]*)""#, in: page) where pair.count == 2 { hidden[pair[0]] = pair[1] }
        self.hidden = hidden
    }
}

private func formBody(_ fields: [(String, String)]) -> [UInt8] {
    let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
    return Array(fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&").utf8)
}

private func postForm(_ harness: RunningHarness, _ url: String, _ fields: [(String, String)]) async throws -> HTTPResponse {
    try await harness.client.post(url, body: formBody(fields), contentType: "application/x-www-form-urlencoded")
}

@Suite("Browser challenge at the ACS: the creq form, one page per step, the final CRes to the notificationURL")
struct BrowserChallengeTests {
    /// Authenticates a browser challenge PAN and opens the challenge as the merchant page's form does.
    private func open(_ harness: RunningHarness, pan: String = "4000000000110009", version: MessageVersion = .v2_2_0) async throws
        -> (id: String, firstPage: String) {
        let answer = try JSONReader.parse(try await harness.post("/3ds-server/authenticate", browserAuthentication(pan: pan, version: version)).body).value
        #expect(answer["transStatus"]?.stringValue == "C", "\(JSONWriter.string(answer))")
        let challenge = try #require(answer["browserChallenge"], "no browserChallenge in \(JSONWriter.string(answer))")
        let acsURL = try #require(challenge["acsURL"]?.stringValue)
        let first = try await postForm(harness, acsURL, [("creq", challenge["creq"]?.stringValue ?? ""),
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
            let form = try PageForm(page)
            let wrong = try await postForm(harness, form.action, [("answer", "0000"), ("action", "submit")])
            #expect(wrong.bodyText.contains("class=\"info warning\""), "the warning after a wrong code")
            let final = try await postForm(harness, form.action, [("answer", "1234"), ("action", "submit")])
            let finalForm = try PageForm(final.bodyText)
            #expect(finalForm.action.hasSuffix("/3ds-server/notification"))
            let cresBytes = try Base64URL.decode(try #require(finalForm.hidden["cres"]))
            let cres = try JSONReader.parse(cresBytes).value
            #expect(cres["messageType"]?.stringValue == "CRes" && cres["transStatus"]?.stringValue == "Y" && cres["challengeCompletionInd"]?.stringValue == "Y")
            #expect(ChallengeRules.browserFinalCRes.check(cres, context: MessageContext(version: version)).violations.isEmpty)
            // The RReq came before the final page: the 3DS Server has the result already.
            let record = try JSONReader.parse(try await harness.get("/3ds-server/transactions/" + id).body).value
            #expect(record["state"]?.stringValue == "completed" && record["transStatus"]?.stringValue == "Y", "\(JSONWriter.string(record))")
            // The page's form as the browser posts it; then again, replayed.
            let notified = try await postForm(harness, finalForm.action, finalForm.hidden.map { ($0.key, $0.value) })
            #expect(notified.status.code < 400, "\(notified.bodyText)")
            let replayed = try await postForm(harness, finalForm.action, finalForm.hidden.map { ($0.key, $0.value) })
            #expect(replayed.status == .badRequest)
            // A page posted after the end is refused with a page.
            let late = try await postForm(harness, form.action, [("answer", "1234"), ("action", "submit")])
            #expect(late.status == .badRequest && late.bodyText.contains("has no browser challenge open"))
        }
    }

    @Test func cancellingEndsNWithChallengeCancel01() async throws {
        try await withHarness { harness in
            let (id, page) = try await open(harness)
            let final = try await postForm(harness, try PageForm(page).action, [("action", "cancel")])
            let cres = try JSONReader.parse(try Base64URL.decode(try #require(try PageForm(final.bodyText).hidden["cres"]))).value
            #expect(cres["transStatus"]?.stringValue == "N")
            let record = try JSONReader.parse(try await harness.get("/3ds-server/transactions/" + id).body).value
            #expect(record["challengeCancel"]?.stringValue == "01", "\(JSONWriter.string(record))")
        }
    }

    @Test(arguments: [
        ("creq=%%%&threeDSSessionData=abc", "creq is not base64url"),
        ("creq=bm90IGpzb24&threeDSSessionData=abc", "creq is not a JSON object"),
        ("threeDSSessionData=abc", "the form has no creq field"),
        ("creq=eyJhIjoxfQ", "the form has no threeDSSessionData field"),
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
            let response = try await postForm(harness, harness.baseURL + "/acs/browser/challenge",
                                              [("creq", Base64URL.encode(JSONWriter.write(creq))), ("threeDSSessionData", "abc")])
            #expect(response.status == .notFound && response.bodyText.contains("no transaction"))
        }
    }
}
