import EMV3DS
import Foundation
import JSON
import Net
import SDKSimulator
import Testing

/// The browser channel's 3DS Method through the harness's own roles: the DS gives each card
/// range the ACS's method page, the page notifies the 3DS Server as the card's scenario scripts,
/// the AReq's threeDSCompInd follows, and the ACS checks it against what it saw.
@Suite("3DS Method")
struct ThreeDSMethodTests {
    static let methodPath = "/acs/3ds-method"

    @Test(arguments: [MessageVersion.v2_2_0, .v2_3_1])
    func thePResGivesEachRangeTheACSsMethodAndScriptedCardsRangesOfTheirOwn(_ version: MessageVersion) async throws {
        try await withHarness { harness in
            let preq = JSONValue.object([
                ("messageType", .string("PReq")), ("messageVersion", .string(version.rawValue)),
                ("threeDSServerRefNumber", .string("3DS_LOA_SER_TEST_020200_00001")), ("threeDSServerTransID", .string(UUID().uuidString.lowercased())),
            ])
            let pres = try await harness.postMessage("/ds/preq", preq)
            let ranges = try #require(pres["cardRangeData"]?.arrayValue)
            // (start, end, method URL) whatever the version's shape.
            let flat: [(start: String, end: String, url: String?)] = ranges.compactMap { range in
                if version >= .v2_3_1 {
                    guard let bounds = range["ranges"]?.arrayValue?.first, let start = bounds["start"]?.stringValue, let end = bounds["end"]?.stringValue else { return nil }
                    let urls = Set((range["acsProtocolVersions"]?.arrayValue ?? []).map { $0["threeDSMethodURL"]?.stringValue })
                    #expect(urls.count == 1, "one method URL for every ACS version of a range")
                    return (start, end, urls.first ?? nil)
                }
                guard let start = range["startRange"]?.stringValue, let end = range["endRange"]?.stringValue else { return nil }
                return (start, end, range["threeDSMethodURL"]?.stringValue)
            }
            #expect(flat.count == ranges.count)
            func range(of pan: String) throws -> (start: String, end: String, url: String?) {
                let covering = flat.filter { $0.start.count == pan.count && $0.start <= pan && pan <= $0.end }
                #expect(covering.count == 1, "\(pan) is in exactly one range: \(covering)")
                return try #require(covering.first)
            }
            let methodURL = harness.baseURL + Self.methodPath
            #expect(try range(of: "4000000000001000").url == methodURL)
            #expect(try range(of: "5100000000000008").url == methodURL)
            let slow = try range(of: "4000000000700007")
            #expect(slow.start == "4000000000700007" && slow.end == slow.start && slow.url == methodURL + "?scenario=method-slow")
            #expect(try range(of: "4000000000720005").url == nil, "method-unavailable: no method URL")
            #expect(try range(of: "4000000000720004").url == methodURL, "the card next to it has the scheme's")
        }
    }

    @Test(arguments: MessageVersion.allCases)
    func theACSsMethodPageNotifiesAndTheAReqSaysY(_ version: MessageVersion) async throws {
        try await withHarness { harness in
            let prepared = try await prepare(harness, "4000000000001000")
            let page = try await methodPage(harness, prepared)
            #expect(page.headers.mediaType == "text/html")
            let form = try ACSPage(page.bodyText)
            #expect(form.action == harness.baseURL + "/3ds-server/method-notification")
            #expect(page.bodyText.contains(#"data-notify-after-ms="0""#))
            let notice = try JSONReader.parse(Base64URL.decode(try #require(form.field("threeDSMethodData")))).value
            #expect(notice == .object([("threeDSServerTransID", prepared.id)]))
            #expect(try await harness.postForm(form.action, form.fields).status == .ok)

            let record = try await authenticate(harness, "4000000000001000", prepared, version)
            #expect(record["transStatus"]?.stringValue == "Y", "\(record)")
            #expect(sentAReq(record)?["threeDSCompInd"]?.stringValue == "Y")
            let check = try #require(try await compIndCheck(harness, record))
            #expect(check.verdict == "pass" && check.detail == "Y: the 3DS Method ran and notified", "\(check)")
        }
    }

    @Test func aPageThatNeverNotifiesMakesItN() async throws {
        try await withHarness { harness in
            let prepared = try await prepare(harness, "4000000000710006")
            let page = try await methodPage(harness, prepared)
            #expect(page.status == .ok && !page.bodyText.contains("<form"), "nothing to post: \(page.bodyText)")
            let record = try await authenticate(harness, "4000000000710006", prepared, .v2_2_0)
            #expect(sentAReq(record)?["threeDSCompInd"]?.stringValue == "N")
            #expect(record["transStatus"]?.stringValue == "Y")
            #expect(try await compIndCheck(harness, record)?.verdict == "pass")
        }
    }

    @Test func aSlowPageSaysItsDelay() async throws {
        try await withHarness { harness in
            let prepared = try await prepare(harness, "4000000000700007")
            #expect(prepared.methodURL?.hasSuffix("?scenario=method-slow") == true)
            let page = try await methodPage(harness, prepared)
            #expect(page.bodyText.contains(#"data-notify-after-ms="3000""#) && page.bodyText.contains("setTimeout"), "\(page.bodyText)")
        }
    }

    @Test func aRangeWithoutAMethodMakesItU() async throws {
        try await withHarness { harness in
            let prepared = try await prepare(harness, "4000000000720005")
            #expect(prepared.methodURL == nil && prepared.methodData == nil)
            let record = try await authenticate(harness, "4000000000720005", prepared, .v2_3_1)
            #expect(sentAReq(record)?["threeDSCompInd"]?.stringValue == "U")
            #expect(try await compIndCheck(harness, record)?.verdict == "pass")
        }
    }

    @Test func anIssuerThatCouldNotFingerprintChallengesAndOtherwiseNot() async throws {
        try await withHarness { harness in
            let prepared = try await prepare(harness, "4000000000730004")
            _ = try await methodPage(harness, prepared)
            let record = try await authenticate(harness, "4000000000730004", prepared, .v2_2_0)
            #expect(sentAReq(record)?["threeDSCompInd"]?.stringValue == "N")
            #expect(record["transStatus"]?.stringValue == "C", "challenge-text's outcome: \(record)")
            #expect(record["browserChallenge"]?["acsURL"] != nil)

            // The app channel has no 3DS Method: the scenario's own outcome.
            let app = try await runTransaction(harness, pan: "4000000000730004", answers: [])
            #expect(app.final.transStatus == "Y", "\(app.final.summary)")
        }
    }

    /// The 3DS Method's form is the 3DS Server's page's doing: graded on the transaction when its AReq comes.
    @Test func methodDataWithoutANotificationURLFailsMethodData() async throws {
        try await withHarness { harness in
            let prepared = try await prepare(harness, "4000000000001000")
            let bad = Base64URL.encode(JSONWriter.write(.object([("threeDSServerTransID", prepared.id)])))
            let refused = try await harness.postForm(try #require(prepared.methodURL), [("threeDSMethodData", bad)])
            #expect(refused.status == .badRequest && refused.bodyText.contains("threeDSMethodNotificationURL"))
            let record = try await authenticate(harness, "4000000000001000", prepared, .v2_2_0)
            let check = try #require(try await journalCheck(harness, record, "method.data"))
            #expect(check.verdict == "fail" && check.detail.contains("threeDSMethodNotificationURL"), "\(check)")

            // The page posted as the 3DS Server's prepare answer says: passes.
            let good = try await prepare(harness, "4000000000001000")
            _ = try await methodPage(harness, good)
            let passed = try await authenticate(harness, "4000000000001000", good, .v2_2_0)
            #expect(try await journalCheck(harness, passed, "method.data")?.verdict == "pass")
        }
    }

    /// threeDSMethodData padded with '=': the ACS reads it and notifies as scripted, method.data fails naming the
    /// padding (EMVCo: base64url in 3DS is unpadded, recorded in the 3dsecure.io API changelog, 2020).
    @Test func paddedMethodDataIsReadAndFailsMethodDataNamingThePadding() async throws {
        try await withHarness { harness in
            let prepared = try await prepare(harness, "4000000000001000")
            let padded = paddedBase64URL(ofJSON: JSONWriter.write(.object([("threeDSServerTransID", prepared.id),
                                                                           ("threeDSMethodNotificationURL", .string(harness.baseURL + "/3ds-server/method-notification"))])))
            let page = try await harness.postForm(try #require(prepared.methodURL), [("threeDSMethodData", padded)])
            #expect(page.status == .ok && page.bodyText.contains("notify"), "the ACS reads what it can: \(page.bodyText)")
            let record = try await authenticate(harness, "4000000000001000", prepared, .v2_2_0)
            let check = try #require(try await journalCheck(harness, record, "method.data"))
            #expect(check.verdict == "fail" && check.detail.contains("'=' of base64 padding"), "\(check)")
        }
    }

    @Test func aClaimOfYWithoutTheMethodFailsTheCheck() async throws {
        try await withHarness { harness in
            // Not prepared: the page's own claim goes into the AReq, and the ACS never saw the method.
            var body = browserRequest(pan: "4000000000001000", version: .v2_2_0)
            body.set("threeDSCompInd", .string("Y"))
            let response = try await harness.post("/3ds-server/authenticate", JSONWriter.write(body))
            let record = try JSONReader.parse(response.body).value
            let check = try #require(try await compIndCheck(harness, record))
            #expect(check.verdict == "fail" && check.detail.contains("never loaded"), "\(check)")

            body.set("threeDSCompInd", .string("U"))
            let unclaimed = try JSONReader.parse(try await harness.post("/3ds-server/authenticate", JSONWriter.write(body)).body).value
            #expect(try await compIndCheck(harness, unclaimed)?.detail.contains("has a 3DS Method URL") == true)
        }
    }

    @Test func theMethodPageRefusesBadInputWithAPage() async throws {
        try await withHarness { harness in
            let url = harness.baseURL + Self.methodPath
            let good = #"{"threeDSServerTransID":"8a880dc0-d2d2-4067-bcb1-b08d1690b26e","threeDSMethodNotificationURL":"https://merchant.example/n"}"#
            for (fields, reason) in [
                ([("other", "x")], "the form has no threeDSMethodData"),
                ([("threeDSMethodData", "not base64url!")], "not base64url"),
                ([("threeDSMethodData", Base64URL.encode("[1]"))], "not of a JSON object"),
                ([("threeDSMethodData", Base64URL.encode(good.replacingOccurrences(of: "8a880dc0-", with: "X")))], "not a canonical UUID"),
                ([("threeDSMethodData", Base64URL.encode(good.replacingOccurrences(of: "https://", with: "javascript:")))], "not an http(s) URL"),
            ] {
                let response = try await harness.postForm(url, fields)
                #expect(response.status == .badRequest, "\(reason)")
                #expect(response.headers.mediaType == "text/html" && response.bodyText.contains(reason), "\(response.bodyText)")
            }
            let json = try await harness.post(Self.methodPath, Array(#"{"threeDSMethodData":"x"}"#.utf8))
            #expect(json.status == .badRequest && json.bodyText.contains("expected a form"))
            // The URL is escaped where it lands, in an attribute.
            let quoted = good.replacingOccurrences(of: "/n\"", with: "/n?a=\\\"><script>\"")
            let page = try await harness.postForm(url, [("threeDSMethodData", Base64URL.encode(quoted))])
            #expect(page.status == .ok && !page.bodyText.contains("\"><script>"), "\(page.bodyText)")
        }
    }
}

/// What `prepare` answered for a card.
private struct Prepared {
    let id: JSONValue
    let methodURL: String?
    let methodData: String?
}

private func prepare(_ harness: RunningHarness, _ pan: String) async throws -> Prepared {
    let response = try await harness.post("/3ds-server/prepare", JSONWriter.write(.object([("acctNumber", .string(pan))])))
    #expect(response.status == .ok, "\(response.bodyText)")
    let body = try JSONReader.parse(response.body).value
    return Prepared(id: try #require(body["threeDSServerTransID"]), methodURL: body["threeDSMethodURL"]?.stringValue,
                    methodData: body["threeDSMethodData"]?.stringValue)
}

/// The hidden iframe's post of `threeDSMethodData` to the method URL.
private func methodPage(_ harness: RunningHarness, _ prepared: Prepared) async throws -> HTTPResponse {
    let page = try await harness.postForm(try #require(prepared.methodURL), [("threeDSMethodData", try #require(prepared.methodData))])
    #expect(page.status == .ok, "\(page.bodyText)")
    return page
}

private func authenticate(_ harness: RunningHarness, _ pan: String, _ prepared: Prepared, _ version: MessageVersion) async throws -> JSONValue {
    var body = browserRequest(pan: pan, version: version)
    body.set("threeDSServerTransID", prepared.id)
    let response = try await harness.post("/3ds-server/authenticate", JSONWriter.write(body))
    #expect(response.status == .ok, "\(response.bodyText)")
    return try JSONReader.parse(response.body).value
}


/// The `areq.three-ds-comp-ind` check of the transaction's journal entry.
private func compIndCheck(_ harness: RunningHarness, _ record: JSONValue) async throws -> (verdict: String, detail: String)? {
    try await journalCheck(harness, record, "areq.three-ds-comp-ind")
}

/// The check `id` of the transaction's journal entry.
private func journalCheck(_ harness: RunningHarness, _ record: JSONValue, _ id: String) async throws -> (verdict: String, detail: String)? {
    let dsTransID = try #require(record["dsTransID"]?.stringValue, "\(record)")
    let entry = try JSONReader.parse(try await harness.get("/inspector/transactions/\(dsTransID)").body).value
    guard let check = entry["checks"]?.arrayValue?.first(where: { $0["id"]?.stringValue == id }) else { return nil }
    return (check["verdict"]?.stringValue ?? "", check["detail"]?.stringValue ?? "")
}
