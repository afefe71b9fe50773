import Configuration
import EMV3DS
import Foundation
import Harness
import JSON
import Logging
import Net
import SDKSimulator
import Testing
import ThreeDSServer

/// The browser channel of the 3DS Server's requestor API: `prepare`, the 3DS Method's
/// notification, a browser AReq through `authenticate`, and the notificationURL where the ACS's
/// last page posts the final CRes.
@Suite("Browser channel: the 3DS Server's requestor API")
struct BrowserThreeDSServerTests {
    // MARK: Frictionless

    @Test(arguments: MessageVersion.allCases)
    func aFrictionlessBrowserAuthenticationEndsAsTheCardSays(_ version: MessageVersion) async throws {
        try await withHarness { harness in
            let authenticated = try await authenticate(harness, browserRequest(pan: "4000000000001000", version: version))
            #expect(authenticated.status == .ok, "\(authenticated.bodyText)")
            let record = try JSONReader.parse(authenticated.body).value
            #expect(record["state"]?.stringValue == "frictionless")
            #expect(record["transStatus"]?.stringValue == "Y", "\(authenticated.bodyText)")
            #expect(record["eci"]?.stringValue == "05")
            #expect(record["authenticationValue"]?.stringValue?.count == 28)
            #expect(record["sdkTransID"] == nil)
            #expect(record["browserChallenge"] == nil)

            let areq = try #require(sentAReq(record))
            #expect(areq["deviceChannel"]?.stringValue == "02")
            #expect(areq["messageVersion"]?.stringValue == version.rawValue)
            #expect(areq.objectMembers?.contains { $0.key.hasPrefix("sdk") || $0.key == "deviceRenderOptions" } == false, "\(areq)")
            #expect(areq["notificationURL"]?.stringValue == harness.baseURL + "/3ds-server/notification")
            #expect(areq["threeDSCompInd"]?.stringValue == "U")
            #expect(areq["browserUserAgent"] == browserRequest(pan: "4000000000001000", version: version)["browserUserAgent"])
            #expect(areq["browserIP"]?.stringValue == "192.0.2.10")
            // The table builds each version's own: browserJavascriptEnabled from 2.2.0, acceptLanguage in 2.3.1.
            #expect((areq["browserJavascriptEnabled"] != nil) == (version >= .v2_2_0))
            #expect((areq["acceptLanguage"] != nil) == (version == .v2_3_1))
            // The CReq's and the harness's own: never in the AReq.
            #expect(areq["challengeWindowSize"] == nil && areq["returnURL"] == nil)

            let refused = try await authenticate(harness, browserRequest(pan: "4000000000003006", version: version))
            let notAuthenticated = try JSONReader.parse(refused.body).value
            #expect(notAuthenticated["transStatus"]?.stringValue == "N", "\(refused.bodyText)")
            #expect(notAuthenticated["transStatusReason"]?.stringValue == "01")
            #expect(notAuthenticated["eci"] == nil)
        }
    }

    @Test func theChannelMayBeNamedAndJavascriptOffNeedsNoScreen() async throws {
        try await withHarness { harness in
            var body = browserRequest(pan: "4000000000001000", version: .v2_2_0)
            body.set("deviceChannel", nil)
            body.set("channel", .string("browser"))
            // Without JavaScript the page cannot read the screen: 2.2.0 asks for none of it.
            body.set("browserJavascriptEnabled", .bool(false))
            for field in ["browserJavaEnabled", "browserColorDepth", "browserScreenHeight", "browserScreenWidth", "browserTZ"] { body.set(field, nil) }
            let response = try await authenticate(harness, body)
            #expect(response.status == .ok, "\(response.bodyText)")
            let areq = try #require(sentAReq(try JSONReader.parse(response.body).value))
            #expect(areq["deviceChannel"]?.stringValue == "02")
            #expect(areq["browserScreenWidth"] == nil)
        }
    }

    // MARK: Refusals of authenticate

    @Test(arguments: [
        (MessageVersion.v2_1_0, "browserUserAgent", "201 browserUserAgent"),
        (MessageVersion.v2_1_0, "browserScreenWidth", "201 browserScreenWidth"),
        (MessageVersion.v2_2_0, "browserAcceptHeader", "201 browserAcceptHeader"),
        (MessageVersion.v2_2_0, "browserJavascriptEnabled", "201 browserJavascriptEnabled"),
        (MessageVersion.v2_2_0, "browserColorDepth", "201 browserColorDepth"),
        (MessageVersion.v2_3_1, "acceptLanguage", "201 acceptLanguage"),
        (MessageVersion.v2_3_1, "browserTZ", "201 browserTZ"),
    ])
    func aMissingBrowserFieldIs400NamingIt(version: MessageVersion, field: String, reason: String) async throws {
        try await withHarness { harness in
            var body = browserRequest(pan: "4000000000001000", version: version)
            body.set(field, nil)
            let response = try await authenticate(harness, body)
            #expect(response.status == .badRequest)
            #expect(response.bodyText.contains(reason), "\(response.bodyText)")
        }
    }

    @Test func inputTheBrowserChannelCannotTakeIs400() async throws {
        try await withHarness { harness in
            let cases: [(change: (inout JSONValue) -> Void, reason: String)] = [
                ({ $0.set("challengeWindowSize", .string("06")) }, #"challengeWindowSize \"06\" is not one of 01, 02, 03, 04, 05"#),
                ({ $0.set("challengeWindowSize", .string("5")) }, #"challengeWindowSize \"5\""#),
                ({ $0.set("challengeWindowSize", .number("5")) }, "challengeWindowSize must be a string"),
                ({ $0.set("deviceChannel", .string("04")) }, "deviceChannel must be 01 (app), 02 (browser) or 03 (3RI)"),
                ({ $0.set("browserColorDepth", .string("23")) }, "203 browserColorDepth"),
                ({ $0.set("threeDSCompInd", .string("X")) }, "203 threeDSCompInd"),
                ({ $0.set("returnURL", .string("not a url")) }, "returnURL must be an absolute URL"),
                ({ $0.set("returnIdParameter", .string("3DSecure Id")) }, "returnIdParameter must be"),
                ({ $0.set("returnURL", .string("gatewaysdk://3dsecure\r\nSet-Cookie: x=1")) }, "returnURL must be an absolute URL"),
                ({ $0.set("threeDSServerTransID", .string(UUID().uuidString.lowercased())) }, "names no prepared transaction"),
            ]
            for (change, reason) in cases {
                var body = browserRequest(pan: "4000000000001000", version: .v2_2_0)
                change(&body)
                let response = try await authenticate(harness, body)
                #expect(response.status == .badRequest, "\(reason)")
                #expect(response.bodyText.contains(reason), "\(response.bodyText)")
            }
        }
    }

    // MARK: Prepare and the 3DS Method

    @Test func prepareNamesTheTransactionAndTheAuthenticationReusesIt() async throws {
        try await withHarness { harness in
            let response = try await harness.post("/3ds-server/prepare", JSONWriter.write(.object([("acctNumber", .string("4000000000001000"))])))
            #expect(response.status == .ok, "\(response.bodyText)")
            let prepared = try JSONReader.parse(response.body).value
            let id = try #require(prepared["threeDSServerTransID"]?.stringValue)
            #expect(FieldFormat.isCanonicalUUID(id))
            #expect(prepared["messageVersion"]?.stringValue == "2.3.1")
            #expect(prepared["dsId"]?.stringValue == "A000000003")
            #expect(prepared["acctNumber"]?.stringValue == "400000******1000")
            // The harness's DS gives its ranges its ACS's 3DS Method page (ThreeDSMethodTests runs it).
            #expect(prepared["threeDSMethodURL"]?.stringValue == harness.baseURL + "/acs/3ds-method")
            #expect(prepared["threeDSMethodData"] != nil)

            // Refused before the AReq left (another card, then a missing field): still prepared.
            var otherCard = browserRequest(pan: "4000000000003006", version: .v2_3_1)
            otherCard.set("threeDSServerTransID", .string(id))
            let refused = try await authenticate(harness, otherCard)
            #expect(refused.status == .badRequest)
            #expect(refused.bodyText.contains("is not the card"), "\(refused.bodyText)")
            var incomplete = browserRequest(pan: "4000000000001000", version: .v2_3_1)
            incomplete.set("threeDSServerTransID", .string(id))
            incomplete.set("acceptLanguage", nil)
            #expect(try await authenticate(harness, incomplete).status == .badRequest)

            var body = browserRequest(pan: "4000000000001000", version: .v2_3_1)
            body.set("threeDSServerTransID", .string(id))
            let authenticated = try await authenticate(harness, body)
            let record = try JSONReader.parse(authenticated.body).value
            #expect(record["threeDSServerTransID"]?.stringValue == id, "\(authenticated.bodyText)")
            #expect(record["transStatus"]?.stringValue == "Y")
            #expect(sentAReq(record)?["threeDSCompInd"]?.stringValue == "N", "the method was not run")

            let again = try await authenticate(harness, body)
            #expect(again.status == .badRequest)
            #expect(again.bodyText.contains("is authenticated already"), "\(again.bodyText)")
        }
    }

    @Test func prepareRefusesWhatNamesNoEnrolledCard() async throws {
        try await withHarness { harness in
            for (body, status, reason) in [
                (#"{"acctNumber":"1234567890123456"}"#, 404, "not enrolled"),
                (#"{"pan":"4000-0000"}"#, 400, "13-19 digits"),
                (#"{"card":"4000000000001000"}"#, 400, "acctNumber (or pan) is required"),
                ("nope", 400, "not JSON"),
            ] {
                let response = try await harness.post("/3ds-server/prepare", Array(body.utf8))
                #expect(response.status.code == status, "\(body): \(response.bodyText)")
                #expect(response.bodyText.contains(reason), "\(response.bodyText)")
            }
        }
        try await withHarness(configure: { $0.threeDSServer.directoryServerURL = "http://127.0.0.1:1/ds/areq" }) { harness in
            let response = try await harness.post("/3ds-server/prepare", JSONWriter.write(.object([("pan", .string("4000000000001000"))])))
            #expect(response.status == .badGateway, "\(response.bodyText)")
        }
    }

    @Test func aRangeWithA3DSMethodDecidesThreeDSCompIndByTheNotification() async throws {
        let directoryServer = MethodRangeDirectoryServer.start()
        defer { directoryServer.stop() }
        try await withHarness(configure: { $0.threeDSServer.directoryServerURL = "http://127.0.0.1:\(directoryServer.port)/ds/areq" }) { harness in
            func prepare() async throws -> JSONValue {
                let response = try await harness.post("/3ds-server/prepare", JSONWriter.write(.object([("acctNumber", .string("4000000000001000"))])))
                #expect(response.status == .ok, "\(response.bodyText)")
                return try JSONReader.parse(response.body).value
            }
            func authenticated(_ id: String) async throws -> JSONValue {
                var body = browserRequest(pan: "4000000000001000", version: .v2_2_0)
                body.set("threeDSServerTransID", .string(id))
                // The prepared transaction decides, whatever the page claims.
                body.set("threeDSCompInd", .string("U"))
                let response = try await authenticate(harness, body)
                #expect(response.status == .ok, "\(response.bodyText)")
                return try JSONReader.parse(response.body).value
            }

            // The method ran, and its page notified.
            let prepared = try await prepare()
            let id = try #require(prepared["threeDSServerTransID"]?.stringValue)
            #expect(prepared["threeDSMethodURL"]?.stringValue == MethodRangeDirectoryServer.methodURL)
            let methodData = try #require(prepared["threeDSMethodData"]?.stringValue)
            #expect(!methodData.contains("="), "base64url without padding")
            let decoded = try JSONReader.parse(Base64URL.decode(methodData)).value
            #expect(decoded == .object([("threeDSServerTransID", .string(id)),
                                        ("threeDSMethodNotificationURL", .string(harness.baseURL + "/3ds-server/method-notification"))]))
            // What the ACS's method page posts: the same data back, as a form field.
            let notified = try await harness.post("/3ds-server/method-notification", form([("threeDSMethodData", methodData)]),
                                                  contentType: "application/x-www-form-urlencoded")
            #expect(notified.status == .ok, "\(notified.bodyText)")
            #expect(notified.headers.mediaType == "text/html")
            let withMethod = try await authenticated(id)
            #expect(sentAReq(withMethod)?["threeDSCompInd"]?.stringValue == "Y")
            #expect(directoryServer.received.last?["threeDSCompInd"]?.stringValue == "Y")

            // The method was given, and no notification came.
            let unnotified = try #require(try await prepare()["threeDSServerTransID"]?.stringValue)
            #expect(sentAReq(try await authenticated(unnotified))?["threeDSCompInd"]?.stringValue == "N")
        }
    }

    @Test func theMethodNotificationRefusesWhatNamesNoPreparedTransaction() async throws {
        try await withHarness { harness in
            let unknown = Base64URL.encode(JSONWriter.write(.object([("threeDSServerTransID", .string(UUID().uuidString.lowercased()))])))
            for (body, contentType, reason) in [
                (form([("threeDSMethodData", unknown)]), "application/x-www-form-urlencoded", "names no prepared transaction"),
                (form([("threeDSMethodData", "not base64url!")]), "application/x-www-form-urlencoded", "threeDSMethodData is not base64url"),
                (form([("threeDSMethodData", Base64URL.encode("[1]"))]), "application/x-www-form-urlencoded", "not of a JSON object"),
                (form([("threeDSMethodData", Base64URL.encode("{}"))]), "application/x-www-form-urlencoded", "holds no threeDSServerTransID"),
                (form([("other", "x")]), "application/x-www-form-urlencoded", "the form has no threeDSMethodData"),
                (Array(#"{"threeDSMethodData":"x"}"#.utf8), "application/json", "expected a form"),
            ] {
                let response = try await harness.post("/3ds-server/method-notification", body, contentType: contentType)
                #expect(response.status == .badRequest, "\(reason)")
                #expect(response.headers.mediaType == "text/plain")
                #expect(response.bodyText.contains(reason), "\(response.bodyText)")
            }
        }
    }

    // MARK: The challenge and the notification

    @Test(arguments: MessageVersion.allCases)
    func aBrowserChallengeRunsThroughTheACSToTheNotification(_ version: MessageVersion) async throws {
        try await withHarness { harness in
            var body = browserRequest(pan: "4000000000110009", version: version)
            body.set("challengeWindowSize", .string("02"))
            let response = try await authenticate(harness, body)
            let record = try JSONReader.parse(response.body).value
            #expect(record["state"]?.stringValue == "challenge", "\(response.bodyText)")
            let id = try #require(record["threeDSServerTransID"]?.stringValue)
            let challenge = try #require(record["browserChallenge"], "\(response.bodyText)")
            let acsURL = try #require(challenge["acsURL"]?.stringValue)
            #expect(acsURL == receivedARes(record)?["acsURL"]?.stringValue)
            #expect(record["challenge"]?["acsSignedContent"] == nil)
            let creqText = try #require(challenge["creq"]?.stringValue)
            #expect(try JSONReader.parse(Base64URL.decode(creqText)).value == .object([
                ("messageType", .string("CReq")), ("messageVersion", .string(version.rawValue)), ("threeDSServerTransID", .string(id)),
                ("acsTransID", record["acsTransID"] ?? .null), ("challengeWindowSize", .string("02")),
            ]))
            let sessionData = try #require(challenge["threeDSSessionData"]?.stringValue)
            #expect(String(decoding: try Base64URL.decode(sessionData), as: UTF8.self) == id)

            // The merchant's page posts the form to the ACS; the cardholder answers; the last page posts to the notificationURL.
            let finalPage = try await runChallenge(harness, acsURL: acsURL, creq: creqText, sessionData: sessionData, answer: "1234")
            #expect(finalPage.action == harness.baseURL + "/3ds-server/notification")
            let notified = try await notify(harness, finalPage.fields)
            #expect(notified.status == .ok, "\(notified.bodyText)")
            #expect(notified.headers.mediaType == "text/html")
            #expect(notified.bodyText.contains("transStatus <strong>Y</strong>"), "\(notified.bodyText)")

            let completed = try JSONReader.parse(try await harness.get("/3ds-server/transactions/\(id)").body).value
            #expect(completed["state"]?.stringValue == "completed")
            #expect(completed["transStatus"]?.stringValue == "Y")
            let cres = try #require(receivedCRes(completed).first)
            #expect(cres["transStatus"]?.stringValue == "Y")
            #expect(cres["challengeCompletionInd"]?.stringValue == "Y")

            // The ACS's page posted once; a second post is refused, and recorded nowhere.
            let again = try await notify(harness, finalPage.fields)
            #expect(again.status == .badRequest)
            #expect(again.bodyText.contains("has received its final CRes already"), "\(again.bodyText)")
            let after = try JSONReader.parse(try await harness.get("/3ds-server/transactions/\(id)").body).value
            #expect(receivedCRes(after).count == 1)
        }
    }

    /// The form the 3DS Server's page posts to the acsURL is graded on its transaction: a correct one passes
    /// creq.browser-form, and so does one without threeDSSessionData (optional) or posted twice (refused, not graded);
    /// a CReq of another messageVersion than its transaction's fails it.
    @Test func theBrowserCReqFormIsGradedAsThe3DSServersDoing() async throws {
        try await withHarness { harness in
            func started() async throws -> (id: String, challenge: JSONValue) {
                let record = try JSONReader.parse(try await authenticate(harness, browserRequest(pan: "4000000000110009", version: .v2_2_0)).body).value
                return (try #require(record["threeDSServerTransID"]?.stringValue), try #require(record["browserChallenge"]))
            }
            func check(_ threeDSServerTransID: String) async throws -> JSONValue? {
                let list = try JSONReader.parse(try await harness.get("/inspector/transactions?limit=20").body).value
                let summary = list["transactions"]?.arrayValue?.first { $0["threeDSServerTransID"]?.stringValue == threeDSServerTransID }
                let entry = try JSONReader.parse(try await harness.get("/inspector/transactions/\(try #require(summary?["dsTransID"]?.stringValue))").body).value
                return entry["checks"]?.arrayValue?.first { $0["id"]?.stringValue == "creq.browser-form" }
            }
            let good = try await started()
            let acsURL = try #require(good.challenge["acsURL"]?.stringValue)
            let fields = [("creq", try #require(good.challenge["creq"]?.stringValue)), ("threeDSSessionData", try #require(good.challenge["threeDSSessionData"]?.stringValue))]
            #expect(try await harness.postForm(acsURL, fields).status == .ok)
            #expect(try await check(good.id)?["verdict"]?.stringValue == "pass")
            // The same form again (a reload): refused, not graded: the form is right, only late.
            #expect(try await harness.postForm(acsURL, fields).status == .badRequest)
            #expect(try await check(good.id)?["verdict"]?.stringValue == "pass")

            // threeDSSessionData is optional (public 3DS Server docs post creq alone, e.g. e-SiTef's challenge form): passes.
            let bare = try await started()
            #expect(try await harness.postForm(acsURL, [("creq", try #require(bare.challenge["creq"]?.stringValue))]).status == .ok)
            #expect(try await check(bare.id)?["verdict"]?.stringValue == "pass")

            // A CReq whose messageVersion is not its transaction's: refused, and graded on that transaction.
            let bad = try await started()
            var creq = try Base64URL.decodeObject(try #require(bad.challenge["creq"]?.stringValue)).0
            creq.set("messageVersion", .string("2.1.0"))
            let wrong = try await harness.postForm(acsURL, [("creq", Base64URL.encode(JSONWriter.write(creq)))])
            #expect(wrong.status == .badRequest)
            let graded = try #require(try await check(bad.id))
            #expect(graded["verdict"]?.stringValue == "fail" && graded["detail"]?.stringValue?.contains("messageVersion") == true, "\(graded)")
        }
    }

    /// A creq padded with '=' (base64 rather than base64url, or a library's default): the ACS reads it and shows the
    /// challenge, the case fails creq.browser-form naming the padding. EMVCo ruled base64url in 3DS unpadded (recorded in
    /// the 3dsecure.io API changelog, 2020); production ACSs refuse it (juspay/hyperswitch issue 10478).
    @Test func aPaddedCReqIsReadAndFailsTheFormCheckNamingThePadding() async throws {
        try await withHarness { harness in
            let record = try JSONReader.parse(try await authenticate(harness, browserRequest(pan: "4000000000110009", version: .v2_2_0)).body).value
            let challenge = try #require(record["browserChallenge"])
            let creq = try #require(challenge["creq"]?.stringValue)
            let padded = paddedBase64URL(ofJSON: try Base64URL.decodeObject(creq).1)
            #expect(padded.hasSuffix("="))
            let page = try await harness.postForm(try #require(challenge["acsURL"]?.stringValue), [("creq", padded)])
            #expect(page.status == .ok, "the ACS reads what it can: \(page.bodyText)")
            let entry = try JSONReader.parse(try await harness.get("/inspector/transactions/\(try #require(record["dsTransID"]?.stringValue))").body).value
            let graded = try #require(entry["checks"]?.arrayValue?.first { $0["id"]?.stringValue == "creq.browser-form" })
            #expect(graded["verdict"]?.stringValue == "fail" && graded["detail"]?.stringValue?.contains("'=' of base64 padding") == true, "\(graded)")
        }
    }

    @Test func aReturnURLMakesTheNotificationARedirectForTheWebView() async throws {
        try await withHarness { harness in
            // The Mastercard Gateway SDK's web view reads summaryStatus and 3DSecureId from gatewaysdk://3dsecure
            // (gateway-android-sdk, Gateway3DSecurePresenter): the id goes under the name the app's SDK reads.
            for (returnURL, idParameter, expected) in [("gatewaysdk://3dsecure", "3DSecureId", "gatewaysdk://3dsecure?summaryStatus=N"),
                                                       ("https://shop.example/done?order=7", nil, "https://shop.example/done?order=7&summaryStatus=N")] {
                var body = browserRequest(pan: "4000000000110009", version: .v2_2_0)
                body.set("returnURL", .string(returnURL))
                body.set("returnIdParameter", idParameter.map(JSONValue.string))
                let record = try JSONReader.parse(try await authenticate(harness, body).body).value
                let id = try #require(record["threeDSServerTransID"]?.stringValue)
                let challenge = try #require(record["browserChallenge"])
                // A wrong code three times: the challenge ends N.
                var page = try await runChallenge(harness, acsURL: try #require(challenge["acsURL"]?.stringValue),
                                                  creq: try #require(challenge["creq"]?.stringValue),
                                                  sessionData: try #require(challenge["threeDSSessionData"]?.stringValue), answer: "0000")
                while page.fields.first(where: { $0.0 == "cres" }) == nil {
                    page = try await submit(harness, page.action, [("answer", "0000"), ("action", "submit")])
                }
                let notified = try await notify(harness, page.fields)
                #expect(notified.status.code == 303, "\(notified.bodyText)")
                #expect(notified.headers["Location"] == "\(expected)&\(idParameter ?? "threeDSServerTransID")=\(id)")
            }
        }
    }

    @Test func theNotificationRefusesBadInputWithAPageAndRecordsNothing() async throws {
        try await withHarness { harness in
            let record = try JSONReader.parse(try await authenticate(harness, browserRequest(pan: "4000000000110009", version: .v2_3_1)).body).value
            let id = try #require(record["threeDSServerTransID"]?.stringValue)
            let acsTransID = try #require(record["acsTransID"]?.stringValue)
            let sessionData = Base64URL.encode(id)
            func cres(_ changes: [String: JSONValue?] = [:]) -> String {
                var json = JSONValue.object([
                    ("messageType", .string("CRes")), ("messageVersion", .string("2.3.1")), ("threeDSServerTransID", .string(id)),
                    ("acsTransID", .string(acsTransID)), ("challengeCompletionInd", .string("Y")), ("transStatus", .string("Y")),
                ])
                for (key, value) in changes { json.set(key, value) }
                return Base64URL.encode(JSONWriter.write(json))
            }
            let cases: [(fields: [(String, String)], reason: String)] = [
                ([("cres", "!!!"), ("threeDSSessionData", sessionData)], "cres is not base64url"),
                ([("cres", Base64URL.encode("not json")), ("threeDSSessionData", sessionData)], "cres is base64url, but not of a JSON object"),
                ([("cres", cres())], "the form has no threeDSSessionData"),
                ([("threeDSSessionData", sessionData)], "the form has no cres"),
                ([("cres", cres()), ("threeDSSessionData", Base64URL.encode(UUID().uuidString.lowercased()))], "is not the one threeDSSessionData names"),
                ([("cres", cres(["threeDSServerTransID": .string(acsTransID)])), ("threeDSSessionData", Base64URL.encode(acsTransID))],
                 "names no transaction of this 3DS Server"),
                ([("cres", cres(["acsTransID": .string(UUID().uuidString.lowercased())])), ("threeDSSessionData", sessionData)], "acsTransID is not the transaction's"),
                ([("cres", cres(["messageVersion": .string("2.2.0")])), ("threeDSSessionData", sessionData)], "messageVersion is not the transaction's"),
                ([("cres", cres(["transStatus": .string("A")])), ("threeDSSessionData", sessionData)], "203 transStatus"),
                ([("cres", cres(["challengeCompletionInd": .string("N")])), ("threeDSSessionData", sessionData)], "challengeCompletionInd"),
                ([("cres", cres(["messageType": .string("CReq")])), ("threeDSSessionData", sessionData)], "messageType"),
            ]
            for (fields, reason) in cases {
                let response = try await notify(harness, fields)
                #expect(response.status == .badRequest, "\(reason): \(response.bodyText)")
                #expect(response.headers.mediaType == "text/html")
                #expect(response.bodyText.contains(Markup.escape(reason)), "\(response.bodyText)")
            }
            let notAForm = try await harness.post("/3ds-server/notification", JSONWriter.write(.object([("cres", .string(cres()))])))
            #expect(notAForm.status == .badRequest)
            #expect(notAForm.bodyText.contains("expected a form"))
            let unchanged = try JSONReader.parse(try await harness.get("/3ds-server/transactions/\(id)").body).value
            #expect(receivedCRes(unchanged).isEmpty)

            // A frictionless browser transaction has no challenge to end.
            let frictionless = try JSONReader.parse(try await authenticate(harness, browserRequest(pan: "4000000000001000", version: .v2_3_1)).body).value
            let other = try #require(frictionless["threeDSServerTransID"]?.stringValue)
            let response = try await notify(harness, [("cres", cres(["threeDSServerTransID": .string(other)])), ("threeDSSessionData", Base64URL.encode(other))])
            #expect(response.status == .badRequest)
            #expect(response.bodyText.contains("has no browser challenge"), "\(response.bodyText)")
        }
    }
}

// MARK: Helpers

/// A browser authentication as a merchant's page collects it, with every field any version asks
/// for: the 3DS Server's table leaves out what `version` does not define.
private func authenticate(_ harness: RunningHarness, _ body: JSONValue) async throws -> HTTPResponse {
    try await harness.post("/3ds-server/authenticate", JSONWriter.write(body))
}

private func receivedARes(_ record: JSONValue) -> JSONValue? { SimulationResult(record: record).messages("received", "ARes").first }
private func receivedCRes(_ record: JSONValue) -> [JSONValue] { SimulationResult(record: record).messages("received", "CRes") }

private func notify(_ harness: RunningHarness, _ fields: [(String, String)]) async throws -> HTTPResponse {
    try await harness.postForm(harness.baseURL + "/3ds-server/notification", fields)
}

/// Posts the CReq's form to the ACS as the merchant's page does, then the cardholder's answer.
private func runChallenge(_ harness: RunningHarness, acsURL: String, creq: String, sessionData: String, answer: String) async throws -> HTMLForm {
    let first = try await submit(harness, acsURL, [("creq", creq), ("threeDSSessionData", sessionData)])
    return try await submit(harness, first.action, [("answer", answer), ("action", "submit")])
}

private func submit(_ harness: RunningHarness, _ url: String, _ fields: [(String, String)]) async throws -> HTMLForm {
    let response = try await harness.postForm(url, fields)
    #expect(response.status == .ok, "\(url): \(response.bodyText)")
    return try ACSPage(response.bodyText)
}

/// A Directory Server whose card range has a 3DS Method URL (the harness's own gives none):
/// answers the PReq with it, and each AReq with a frictionless Y, keeping the AReqs.
private enum MethodRangeDirectoryServer {
    static let methodURL = "https://acs.example/3ds-method"

    static func start() -> AReqRecorder {
        AReqRecorder(path: "/ds/areq") { router in
            router.post("/ds/preq") { request, _ in
                let preq = try JSONReader.parse(request.body).value
                let pres = JSONValue.object([
                    ("messageType", .string("PRes")), ("messageVersion", preq["messageVersion"] ?? .null),
                    ("threeDSServerTransID", preq["threeDSServerTransID"] ?? .null), ("dsTransID", .string(UUID().uuidString.lowercased())),
                    ("dsStartProtocolVersion", .string("2.1.0")), ("dsEndProtocolVersion", .string("2.3.1")),
                    ("cardRangeData", .array([.object([
                        ("startRange", .string("4000000000000000")), ("endRange", .string("4000000000999999")), ("actionInd", .string("A")),
                        ("acsStartProtocolVersion", .string("2.1.0")), ("acsEndProtocolVersion", .string("2.3.1")),
                        ("threeDSMethodURL", .string(methodURL)),
                    ])])),
                ])
                return HTTPResponse(headers: ["Content-Type": "application/json"], body: JSONWriter.write(pres))
            }
        }
    }
}
