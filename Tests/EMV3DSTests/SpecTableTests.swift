import JSON
import Testing
@testable import EMV3DS

// The required sets below are typed from the specification's tables, not from the harness's
// output: the 2.3.1.1 Annex A (public transcription q7m4vx9k2r/emv-3ds-ja, en/chapters/a.md),
// the 2.2.0 (December 2018) Annex A and EMVCo bulletins 204 (2.1.0 errata), 207 (2.1.0 to 2.2.0)
// and 214 (2.2.0 errata), and 3dsecure.io's per-version tables (clearhaus/3DSv2-api-documentation).

private let uuid1 = "8a880dc0-d2d2-4067-bcb1-b08d1690b26e"
private let uuid2 = "d7c1ee99-9478-44a6-b1f2-391e29c6b340"
private let uuid3 = "f25084f0-5b16-4c0a-ae5d-b24808a95e4b"
private let uuid4 = "b2385523-a66c-4907-ac3c-91848e8c0067"

/// A value of the right shape for each field the minimal messages use.
private let sample: [String: JSONValue] = [
    "messageCategory": .string("02"), "threeDSServerTransID": .string(uuid1), "threeDSServerRefNumber": .string("3DSS_REF"),
    "threeDSServerURL": .string("https://3dss.example/rreq"), "threeDSRequestorID": .string("req"), "threeDSRequestorName": .string("Shop"),
    "threeDSRequestorURL": .string("https://shop.example"), "threeDSRequestorAuthenticationInd": .string("01"),
    "acctNumber": .string("4000000000001000"), "notificationURL": .string("https://shop.example/notify"), "threeDSCompInd": .string("Y"),
    "browserAcceptHeader": .string("text/html"), "browserUserAgent": .string("Mozilla/5.0"), "browserLanguage": .string("en-GB"),
    "browserJavaEnabled": .bool(false), "browserJavascriptEnabled": .bool(true), "browserColorDepth": .string("24"),
    "browserScreenHeight": .string("900"), "browserScreenWidth": .string("1440"), "browserTZ": .string("-60"),
    "acceptLanguage": .array([.string("en-GB")]), "acquirerCountryCode": .string("826"), "acquirerCountryCodeSource": .string("01"),
    "threeRIInd": .string("04"), "sdkAppID": .string(uuid2), "sdkTransID": .string(uuid4), "sdkReferenceNumber": .string("SDK_REF"),
    "sdkEphemPubKey": .object([("kty", .string("EC")), ("crv", .string("P-256")), ("x", .string("C1PL42i6kmNkM61aupEAgLJ4gF1ZRzcV7lqo1TG0mL4")),
                               ("y", .string("cNToWLSdcFQKG--PGVEUQrIHP8w6TcRyj0pyFx4-ZMc"))]),
    "sdkMaxTimeout": .string("05"), "deviceRenderOptions": .object([("sdkInterface", .string("01")), ("sdkUiType", .array([.string("01")]))]),
    "sdkEncData": .string("eyJhbGciOiJkaXIifQ..aXY.Y3Q.dGFn"), "sdkType": .string("01"), "defaultSdkType": .object([("sdkVariant", .string("01"))]),
    "acsTransID": .string(uuid2), "dsTransID": .string(uuid3), "acsReferenceNumber": .string("ACS_REF"), "dsReferenceNumber": .string("DS_REF"),
    "acsChallengeMandated": .string("Y"), "authenticationType": .string("02"), "authenticationMethod": .array([.string("02")]),
    "acsRenderingType": .object([("acsInterface", .string("01")), ("acsUiTemplate", .string("01"))]),
    "acsSignedContent": .string("eyJhbGciOiJQUzI1NiJ9.e30.c2ln"), "acsURL": .string("https://acs.example/challenge"),
    "acsDecConInd": .string("Y"), "cardholderInfo": .string("Approve in your app"), "deviceInfoRecognisedVersion": .string("1.4"),
    "threeDSRequestorAppURLInd": .string("N"), "interactionCounter": .string("01"), "authenticationValue": .string("AAABBBCCCDDDEEEFFFGGGHHHIII="),
    "eci": .string("05"), "transStatusReason": .string("01"), "resultsStatus": .string("01"),
    "acquirerBIN": .string("400551"), "acquirerMerchantID": .string("m-1"), "mcc": .string("5411"), "merchantCountryCode": .string("826"),
    "merchantName": .string("Shop"), "purchaseAmount": .string("1099"), "purchaseCurrency": .string("826"), "purchaseExponent": .string("2"),
    "purchaseDate": .string("20261121120000"),
]

/// A message made of exactly `fields` (with `fixed` values where given).
private func message(_ type: String, _ version: MessageVersion, _ fields: [String], _ fixed: [String: JSONValue] = [:]) -> JSONValue {
    .object([("messageType", .string(type)), ("messageVersion", .string(version.rawValue))]
        + fields.map { ($0, fixed[$0] ?? sample[$0] ?? .string("x")) })
}

/// The message is valid, and every field of `required` is: without it the Erro is 201 naming it.
private func expectExactlyRequired(_ rules: MessageRules, _ type: String, _ version: MessageVersion, _ required: [String],
                                   fixed: [String: JSONValue] = [:], context: MessageContext? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
    let context = context ?? MessageContext(version: version)
    let whole = message(type, version, required, fixed)
    let report = rules.check(whole, context: context)
    #expect(report.violations == [], "\(type) \(version.rawValue)", sourceLocation: sourceLocation)
    for field in required where fixed[field] == nil {
        var without = whole
        without.set(field, nil)
        let violations = rules.check(without, context: context).violations
        #expect(violations.map(\.field) == [field] && violations.first?.code == .requiredElementMissing,
                "\(type) \(version.rawValue) without \(field): \(violations)", sourceLocation: sourceLocation)
        if !violations.isEmpty {
            let erro = InvalidMessage(violations: violations, messageType: type, claimedVersion: version.rawValue, ids: TransactionIDs()).erro(from: .directoryServer)
            #expect(erro.errorCode == .requiredElementMissing && erro.errorDetail == field, sourceLocation: sourceLocation)
        }
    }
}

private let areqCore = ["messageCategory", "deviceChannel", "threeDSServerTransID", "threeDSServerRefNumber", "threeDSServerURL",
                        "threeDSRequestorID", "threeDSRequestorName", "threeDSRequestorURL", "acctNumber"]

@Suite("Field tables against the specification's, per version and channel")
struct SpecTableTests {
    @Test func browserAReqOf210RequiresEveryBrowserField() {
        // 2.1.0 Annex A: every browser field is R, JavaScript or not; no browserJavascriptEnabled yet.
        expectExactlyRequired(AReqRules.fromThreeDSServer, "AReq", .v2_1_0, areqCore + [
            "threeDSRequestorAuthenticationInd", "notificationURL", "threeDSCompInd", "browserAcceptHeader", "browserUserAgent",
            "browserLanguage", "browserJavaEnabled", "browserColorDepth", "browserScreenHeight", "browserScreenWidth", "browserTZ",
        ], fixed: ["deviceChannel": .string("02")])
    }

    @Test func browserAReqOf220RequiresTheScreenFieldsOnlyWithJavaScript() {
        // 2.2.0 (bulletin 207): Java, colour depth, screen and TZ become "required when browserJavascriptEnabled = true".
        let always = areqCore + ["threeDSRequestorAuthenticationInd", "notificationURL", "threeDSCompInd", "browserAcceptHeader",
                                 "browserUserAgent", "browserLanguage", "browserJavascriptEnabled"]
        expectExactlyRequired(AReqRules.fromThreeDSServer, "AReq", .v2_2_0, always,
                              fixed: ["deviceChannel": .string("02"), "browserJavascriptEnabled": .bool(false)])
        expectExactlyRequired(AReqRules.fromThreeDSServer, "AReq", .v2_2_0,
                              always + ["browserJavaEnabled", "browserColorDepth", "browserScreenHeight", "browserScreenWidth", "browserTZ"],
                              fixed: ["deviceChannel": .string("02"), "browserJavascriptEnabled": .bool(true)])
    }

    @Test func browserAReqOf231AddsAcceptLanguageAndTheAcquirerCountry() {
        // 2.3.1: browserLanguage joins the JavaScript-dependent fields; acceptLanguage and the acquirer country are R.
        expectExactlyRequired(AReqRules.fromThreeDSServer, "AReq", .v2_3_1, areqCore + [
            "threeDSRequestorAuthenticationInd", "notificationURL", "threeDSCompInd", "browserAcceptHeader", "browserUserAgent",
            "browserJavascriptEnabled", "acceptLanguage", "acquirerCountryCode", "acquirerCountryCodeSource",
        ], fixed: ["deviceChannel": .string("02"), "browserJavascriptEnabled": .bool(false)])
    }

    @Test(arguments: MessageVersion.allCases)
    func appAReqRequiresTheSDKFields(version: MessageVersion) {
        let v231 = version == .v2_3_1 ? ["acquirerCountryCode", "acquirerCountryCodeSource", "sdkType", "defaultSdkType"] : []
        expectExactlyRequired(AReqRules.fromThreeDSServer, "AReq", version, areqCore + [
            "threeDSRequestorAuthenticationInd", "sdkAppID", "sdkTransID", "sdkReferenceNumber", "sdkEphemPubKey", "sdkMaxTimeout",
            "deviceRenderOptions", "sdkEncData",
        ] + v231, fixed: ["deviceChannel": .string("01")])
    }

    @Test(arguments: MessageVersion.allCases)
    func aPaymentAReqRequiresTheMerchantAndThePurchase(version: MessageVersion) {
        // 01-PA: acquirer, merchant and purchase are R; 02-NPA leaves them optional (the other tests).
        let v231 = version == .v2_3_1 ? ["acquirerCountryCode", "acquirerCountryCodeSource", "sdkType", "defaultSdkType"] : []
        expectExactlyRequired(AReqRules.fromThreeDSServer, "AReq", version, areqCore + [
            "threeDSRequestorAuthenticationInd", "sdkAppID", "sdkTransID", "sdkReferenceNumber", "sdkEphemPubKey", "sdkMaxTimeout",
            "deviceRenderOptions", "sdkEncData", "acquirerBIN", "acquirerMerchantID", "mcc", "merchantCountryCode", "merchantName",
            "purchaseAmount", "purchaseCurrency", "purchaseExponent", "purchaseDate",
        ] + v231, fixed: ["deviceChannel": .string("01"), "messageCategory": .string("01")])
    }

    @Test func aThreeRIAReqOf210IsNonPaymentAndHasNoServerURL() {
        // 2.1.0: 3RI is non-payment only (threeRIInd 01-05), and without an RReq it carries no threeDSServerURL.
        let core = areqCore.filter { $0 != "threeDSServerURL" }
        expectExactlyRequired(AReqRules.fromThreeDSServer, "AReq", .v2_1_0, core + ["threeRIInd"], fixed: ["deviceChannel": .string("03")])
        let installment = message("AReq", .v2_1_0, core + ["threeRIInd"], ["deviceChannel": .string("03"), "threeRIInd": .string("02")])
        #expect(AReqRules.fromThreeDSServer.check(installment, context: MessageContext(version: .v2_1_0)).violations == [])
        let tooNew = message("AReq", .v2_1_0, core + ["threeRIInd"], ["deviceChannel": .string("03"), "threeRIInd": .string("06")])
        #expect(AReqRules.fromThreeDSServer.check(tooNew, context: MessageContext(version: .v2_1_0)).violations.map(\.description)
            == ["203 threeRIInd: \"06\" is not one of 01, 02, 03, 04, 05"])
    }

    @Test func theProofAndTheReasonAreRequiredForPaymentsOnly() {
        let ids = ["threeDSServerTransID", "acsTransID", "dsTransID", "acsReferenceNumber", "dsReferenceNumber"]
        let payment = MessageContext(version: .v2_2_0, channel: .browser, request: .object([("messageCategory", .string("01"))]))
        expectExactlyRequired(AResRules.rules, "ARes", .v2_2_0, ids + ["transStatus", "authenticationValue", "eci"],
                              fixed: ["transStatus": .string("Y")], context: payment)
        expectExactlyRequired(AResRules.rules, "ARes", .v2_2_0, ids + ["transStatus", "transStatusReason"],
                              fixed: ["transStatus": .string("R")], context: payment)
        let nonPayment = MessageContext(version: .v2_2_0, channel: .browser, request: .object([("messageCategory", .string("02"))]))
        expectExactlyRequired(AResRules.rules, "ARes", .v2_2_0, ids + ["transStatus"], fixed: ["transStatus": .string("Y")], context: nonPayment)
    }

    @Test func theSpecViewShowsAChannelsFieldsInEitherCategoryAndAnObjectsMembersPerVersion() throws {
        let areq = try #require(MessageTables.named("AReq"))
        #expect(areq.rules.table(version: .v2_1_0, channel: .threeRI).map(\.name).contains("threeRIInd"))
        let rendering210 = try #require(areq.rules.table(version: .v2_1_0, channel: .app).first { $0.name == "deviceRenderOptions" })
        #expect(rendering210.format == "object {sdkInterface: one of 01, 02, 03; sdkUiType: array of 1-5 × (one of 01-05)}")
        let rendering231 = try #require(areq.rules.table(version: .v2_3_1, channel: .app).first { $0.name == "deviceRenderOptions" })
        #expect(rendering231.format.contains("one of 01-07") && rendering231.format.contains("sdkAuthenticationType"))
    }

    @Test func threeRIAReqRequiresThreeRIIndNotTheAuthenticationIndicator() {
        // threeDSRequestorAuthenticationInd is App/Browser only in every version; threeRIInd is R for 3RI.
        expectExactlyRequired(AReqRules.fromThreeDSServer, "AReq", .v2_2_0, areqCore + ["threeRIInd"], fixed: ["deviceChannel": .string("03")])
        let misplaced = message("AReq", .v2_2_0, areqCore + ["threeRIInd", "threeDSRequestorAuthenticationInd"], ["deviceChannel": .string("03")])
        let report = AReqRules.fromThreeDSServer.check(misplaced, context: MessageContext(version: .v2_2_0))
        #expect(report.violations == [] && report.warnings.count == 1)
    }

    @Test func conditionalAReqRules() {
        func violations(_ version: MessageVersion, _ changes: [String: JSONValue?]) -> [String] {
            AReqRules.fromThreeDSServer.validate(validAReq(version: version.rawValue, replacing: changes), version: version).map(\.description)
        }
        // sdkMaxTimeout is at least 05 minutes.
        #expect(violations(.v2_2_0, ["sdkMaxTimeout": .string("04")]) == ["203 sdkMaxTimeout: must be at least 5"])
        // ISO 4217 and 3166-1 numeric codes, less Table A.5 (955-964, 999; countries 901-999): 304.
        #expect(violations(.v2_2_0, ["purchaseCurrency": .string("999")]) == ["304 purchaseCurrency: 999 is an excluded ISO 4217 currency code"])
        #expect(violations(.v2_2_0, ["purchaseCurrency": .string("959")]) == ["304 purchaseCurrency: 959 is an excluded ISO 4217 currency code"])
        #expect(violations(.v2_2_0, ["purchaseCurrency": .string("123")]) == ["304 purchaseCurrency: 123 is not an ISO 4217 currency code"])
        #expect(violations(.v2_2_0, ["purchaseCurrency": .string("97")]) == ["203 purchaseCurrency: must be 3 digits"])
        #expect(violations(.v2_2_0, ["purchaseCurrency": .string("901")]) == [])  // TWD: a real currency in the 9xx range
        #expect(violations(.v2_2_0, ["merchantCountryCode": .string("950")]) == ["304 merchantCountryCode: 950 is an excluded ISO 3166-1 country code"])
        #expect(violations(.v2_2_0, ["billAddrState": .string("CA")]) == ["201 billAddrCountry: is required for billAddrState"])
        // deviceRenderOptions members are checked, and named as object.member.
        #expect(violations(.v2_2_0, ["deviceRenderOptions": .object([])]) == [
            "201 deviceRenderOptions.sdkInterface: is required", "201 deviceRenderOptions.sdkUiType: is required",
        ])
        #expect(violations(.v2_2_0, ["deviceRenderOptions": .object([("sdkInterface", .string("03")), ("sdkUiType", .array([.string("07")]))])])
            == ["203 deviceRenderOptions.sdkUiType: element 0 \"07\" is not one of 01, 02, 03, 04, 05"])
        #expect(violations(.v2_3_1, ["deviceRenderOptions": .object([("sdkInterface", .string("03")), ("sdkUiType", .array([.string("07")]))])]) == [])
        // Recurring and instalment authentications carry their terms; a decoupled request its time limit.
        #expect(violations(.v2_2_0, ["threeDSRequestorAuthenticationInd": .string("03")]) == [
            "201 purchaseInstalData: is required for an instalment authentication",
            "201 recurringExpiry: is required for a recurring or instalment authentication",
            "201 recurringFrequency: is required for a recurring or instalment authentication",
        ])
        #expect(violations(.v2_2_0, ["threeDSRequestorDecReqInd": .string("Y")]) == ["201 threeDSRequestorDecMaxTime: is required for threeDSRequestorDecReqInd Y"])
        // 2.3.1 retypes: the challenge indicator is a list, the authentication info a list of objects.
        #expect(violations(.v2_3_1, ["threeDSRequestorChallengeInd": .string("01")]) == ["203 threeDSRequestorChallengeInd: must be a JSON array, not string"])
        #expect(violations(.v2_3_1, ["threeDSRequestorChallengeInd": .array([.string("01")])]) == [])
    }

    @Test func challengeAndDecoupledAResPerVersion() {
        let ids = ["threeDSServerTransID", "acsTransID", "dsTransID", "acsReferenceNumber", "dsReferenceNumber"]
        let app = MessageContext(version: .v2_1_0, channel: .app)
        // App challenge, 2.1.0: acsChallengeMandated, authenticationType, acsRenderingType, acsSignedContent, sdkTransID.
        expectExactlyRequired(AResRules.rules, "ARes", .v2_1_0, ids + ["transStatus", "sdkTransID", "acsChallengeMandated", "authenticationType",
                                                                      "acsRenderingType", "acsSignedContent"],
                              fixed: ["transStatus": .string("C")], context: app)
        // 2.3.1: authenticationMethod replaces authenticationType; the app ARes gains two required fields;
        // acsRenderingType gains deviceUserInterfaceMode.
        var app231 = app
        app231.version = .v2_3_1
        let rendering231: JSONValue = .object([("acsInterface", .string("01")), ("acsUiTemplate", .string("01")), ("deviceUserInterfaceMode", .string("01"))])
        expectExactlyRequired(AResRules.rules, "ARes", .v2_3_1, ids + ["transStatus", "sdkTransID", "acsChallengeMandated", "authenticationMethod",
                                                                      "acsRenderingType", "acsSignedContent", "deviceInfoRecognisedVersion",
                                                                      "threeDSRequestorAppURLInd"],
                              fixed: ["transStatus": .string("C"), "acsRenderingType": rendering231], context: app231)
        let oldNames = message("ARes", .v2_3_1, ids + ["transStatus", "sdkTransID", "acsChallengeMandated", "authenticationType", "acsRenderingType",
                                                      "acsSignedContent", "deviceInfoRecognisedVersion", "threeDSRequestorAppURLInd"],
                               ["transStatus": .string("C"), "acsRenderingType": rendering231])
        let report = AResRules.rules.check(oldNames, context: app231)
        #expect(report.violations.map(\.description) == ["201 authenticationMethod: is required for transStatus C or D"])
        // Browser challenge: acsURL, no acsSignedContent.
        expectExactlyRequired(AResRules.rules, "ARes", .v2_2_0, ids + ["transStatus", "acsChallengeMandated", "authenticationType", "acsURL"],
                              fixed: ["transStatus": .string("C")], context: MessageContext(version: .v2_2_0, channel: .browser))
        // Decoupled (2.2.0+): acsChallengeMandated, acsDecConInd, authenticationType 04, and cardholderInfo since acsDecConInd is Y.
        expectExactlyRequired(AResRules.rules, "ARes", .v2_2_0, ids + ["transStatus", "sdkTransID", "acsChallengeMandated", "authenticationType",
                                                                      "acsDecConInd", "cardholderInfo"],
                              fixed: ["transStatus": .string("D"), "acsDecConInd": .string("Y")], context: MessageContext(version: .v2_2_0, channel: .app))
        // 2.3.1 cardholderInfo is an object.
        let decoupled231 = message("ARes", .v2_3_1, ids + ["transStatus", "sdkTransID", "acsChallengeMandated", "authenticationMethod", "acsDecConInd",
                                                          "cardholderInfo", "deviceInfoRecognisedVersion", "threeDSRequestorAppURLInd"],
                                   ["transStatus": .string("D"), "authenticationMethod": .array([.string("12")])])
        #expect(AResRules.rules.check(decoupled231, context: app231).violations.map(\.description)
            == ["203 cardholderInfo: must be a JSON object, not string"])
    }

    @Test func rreqPerVersion() {
        let ids = ["messageCategory", "threeDSServerTransID", "acsTransID", "dsTransID"]
        // 2.1.0: no sdkTransID; interactionCounter and acsRenderingType are R.
        let v210 = MessageContext(version: .v2_1_0, channel: .app)
        expectExactlyRequired(ResultsRules.rReq, "RReq", .v2_1_0, ids + ["transStatus", "transStatusReason", "authenticationType", "interactionCounter", "acsRenderingType"],
                              fixed: ["transStatus": .string("N"), "messageCategory": .string("01")], context: v210)
        let withSDK = message("RReq", .v2_1_0, ids + ["transStatus", "transStatusReason", "authenticationType", "interactionCounter", "acsRenderingType", "sdkTransID"],
                              ["transStatus": .string("N")])
        let report = ResultsRules.rReq.check(withSDK, context: v210)
        #expect(report.violations == [] && report.warnings == ["sdkTransID is not a field of RReq 2.1.0 (it is in other versions)"])
        // 2.2.0: sdkTransID for the app; decoupled (the ARes had acsDecConInd Y) needs neither interactionCounter nor acsRenderingType.
        let decoupled = MessageContext(version: .v2_2_0, channel: .app, request: .object([("acsDecConInd", .string("Y"))]))
        expectExactlyRequired(ResultsRules.rReq, "RReq", .v2_2_0, ids + ["transStatus", "transStatusReason", "sdkTransID", "authenticationType"],
                              fixed: ["transStatus": .string("N"), "messageCategory": .string("01")], context: decoupled)
        let challenged = MessageContext(version: .v2_2_0, channel: .app)
        expectExactlyRequired(ResultsRules.rReq, "RReq", .v2_2_0, ids + ["transStatus", "transStatusReason", "sdkTransID", "authenticationType",
                                                                        "interactionCounter", "acsRenderingType"],
                              fixed: ["transStatus": .string("N"), "messageCategory": .string("01")], context: challenged)
        // 2.3.1: trustListStatus with its source; whiteListStatus is a 2.2.0 name.
        var built = RReq(messageVersion: .v2_3_1, messageCategory: "01", threeDSServerTransID: uuid1, acsTransID: uuid2, dsTransID: uuid3,
                         sdkTransID: uuid4, transStatus: .authenticated, interactionCounter: "01")
        built.whiteListStatus = "Y"
        #expect(built.json["trustListStatus"] == .string("Y") && built.json["trustListStatusSource"] == .string("03") && built.json["whiteListStatus"] == nil)
        built.messageVersion = .v2_2_0
        #expect(built.json["whiteListStatus"] == .string("Y") && built.json["whiteListStatusSource"] == .string("03") && built.json["trustListStatus"] == nil)
        built.messageVersion = .v2_1_0
        #expect(built.json["whiteListStatus"] == nil && built.json["sdkTransID"] == nil)
    }

    @Test func finalCResStatusesPerVersion() {
        // A final CRes carries Y or N; 2.3.1 adds D (Table A.17).
        #expect(TransStatus.allCases.filter { $0.isValid(in: .cRes, version: .v2_2_0) } == [.authenticated, .notAuthenticated])
        #expect(TransStatus.allCases.filter { $0.isValid(in: .cRes, version: .v2_3_1) } == [.authenticated, .notAuthenticated, .decoupled])
        #expect(TransStatus.attempted.inFinalCRes == .authenticated && TransStatus.rejected.inFinalCRes == .notAuthenticated)
    }

    /// Every rule of every table, in every version it exists in: a value of the wrong JSON type
    /// is refused with its own code (203, or 304 for an ISO code) naming the field.
    @Test func everyRuleRefusesAValueOfTheWrongType() {
        var checked = 0
        for entry in MessageTables.all {
            for version in MessageVersion.allCases {
                for rule in entry.rules.rules(for: version) where !["messageType", "messageVersion", "deviceChannel"].contains(rule.name) {
                    let wrong: JSONValue
                    switch rule.format {
                    case .object, .fields, .ecPublicJWK, .array, .arrayOf, .keyLabelList, .boolean: wrong = .string("x")
                    default: wrong = .number("7")
                    }
                    let json = JSONValue.object([("messageType", .string(entry.rules.messageType.rawValue)), ("messageVersion", .string(version.rawValue)),
                                                 ("deviceChannel", .string("01")), (rule.name, wrong)])
                    let violations = entry.rules.check(json, context: MessageContext(version: version, channel: .app)).violations
                    let own = violations.first { $0.field == rule.name }
                    if case .absent = rule.presence {
                        #expect(own?.code == .formatInvalid, "\(entry.name) \(version.rawValue) \(rule.name) must be absent")
                    } else {
                        #expect(own?.code == .formatInvalid, "\(entry.name) \(version.rawValue) \(rule.name) \(rule.format.summary(in: version)): \(violations)")
                    }
                    checked += 1
                }
            }
        }
        #expect(checked > 500)
    }

    @Test func membersNoTableDefinesAreWarningsNotErrors() {
        var areq = validAReq()
        areq.set("shoeSize", .string("42"))
        areq.set("acceptLanguage", .array([.string("en")]))  // a 2.3.1 field in a 2.2.0 message
        let report = AReqRules.fromThreeDSServer.check(areq, context: MessageContext(version: .v2_2_0))
        #expect(report.violations == [])
        #expect(report.warnings == ["shoeSize is not a field of AReq: let through, not checked",
                                    "acceptLanguage is not a field of AReq 2.2.0 (it is in other versions)"])
    }

    @Test func theSpecViewListsAVersionsFields() throws {
        let entry = try #require(MessageTables.named("areq"))
        let browser = entry.rules.table(version: .v2_3_1, channel: .browser).map(\.name)
        #expect(browser.contains("acceptLanguage") && !browser.contains("sdkAppID"))
        let app = entry.rules.table(version: .v2_1_0, channel: .app).map(\.name)
        #expect(app.contains("sdkAppID") && !app.contains("browserJavaEnabled") && !app.contains("sdkType"))
        let json = entry.json(version: .v2_3_1, channel: .app)
        #expect(json["fieldCount"] == .number(String(entry.rules.table(version: .v2_3_1, channel: .app).count)))
    }
}

/// `spec CReq --channel 02` and `GET /admin/spec/CReq/2.2.0?channel=02` show the form the browser posts, which is what
/// `creq.browser-form` grades, not the app's CReq.
@Suite("Spec tables by channel")
struct SpecTableChannelTests {
    @Test func theBrowsersCReqAndFinalCResHaveTablesOfTheirOwn() {
        let creq = MessageTables.named("CReq", channel: .browser)
        #expect(creq?.rules.table(version: .v2_2_0, channel: .browser).map(\.name).contains("challengeWindowSize") == true)
        #expect(creq?.rules.table(version: .v2_2_0, channel: .browser).map(\.name).contains("sdkCounterStoA") == false)
        #expect(MessageTables.named("CRes", channel: .browser)?.leg.contains("notificationURL") == true)
        #expect(MessageTables.named("CReq", channel: .app)?.rules.table(version: .v2_2_0, channel: .app).map(\.name).contains("sdkCounterStoA") == true)
    }
}
