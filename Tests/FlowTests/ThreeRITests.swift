import EMV3DS
import Foundation
import JSON
import Net
import Testing

/// 3DS Requestor Initiated authentications (deviceChannel 03) through the requestor API: no
/// cardholder, so frictionless outcomes only; the recurring and instalment cases carry the purchase.
@Suite("3RI (deviceChannel 03)")
struct ThreeRITests {
    /// A 3RI body: `threeRIInd` 04 (maintain card information) needs no purchase in any version.
    static func threeRI(_ pan: String, _ version: MessageVersion, indicator: String = "04", category: String = "02") -> JSONValue {
        .object([
            ("deviceChannel", .string("03")), ("messageVersion", .string(version.rawValue)), ("messageCategory", .string(category)),
            ("acctNumber", .string(pan)), ("cardExpiryDate", .string("3012")), ("threeRIInd", .string(indicator)),
        ])
    }

    static func authenticate(_ harness: RunningHarness, _ body: JSONValue) async throws -> HTTPResponse {
        try await harness.post("/3ds-server/authenticate", JSONWriter.write(body))
    }

    @Test(arguments: MessageVersion.allCases)
    func everyFrictionlessCardEndsAsItSaysWithoutACardholder(_ version: MessageVersion) async throws {
        try await withHarness { harness in
            for (pan, status) in [("4000000000001000", "Y"), ("4000000000002008", "A"), ("4000000000003006", "N"), ("4000000000004004", "R"),
                                  ("4000000000005001", "U"), ("4000000000006009", version == .v2_1_0 ? "U" : "I")] {
                let response = try await Self.authenticate(harness, Self.threeRI(pan, version))
                #expect(response.status == .ok, "\(pan): \(response.bodyText)")
                let record = try JSONReader.parse(response.body).value
                #expect(record["transStatus"]?.stringValue == status, "\(pan) \(version.rawValue): \(response.bodyText)")
                #expect(record["state"]?.stringValue == "frictionless")
                let areq = try #require(sentAReq(record))
                #expect(areq["deviceChannel"]?.stringValue == "03" && areq["threeRIInd"]?.stringValue == "04")
                for absent in ["threeDSRequestorAuthenticationInd", "threeDSRequestorDecReqInd", "sdkTransID", "browserUserAgent", "notificationURL"] {
                    #expect(areq[absent] == nil, "\(absent) has no place in a 3RI AReq")
                }
            }
        }
    }

    @Test(arguments: [MessageVersion.v2_2_0, .v2_3_1])
    func aRecurringAndAnInstalment3RICarryThePurchase(_ version: MessageVersion) async throws {
        try await withHarness { harness in
            var recurring = Self.threeRI("4000000000001000", version, indicator: "01")
            for (key, value) in [("purchaseAmount", "1099"), ("purchaseCurrency", "978"), ("recurringExpiry", "20301231"), ("recurringFrequency", "30")] {
                recurring.set(key, .string(value))
            }
            // 2.3.1 says how the amount and frequency recur.
            let recurrence = JSONValue.object([("amountInd", .string("01")), ("frequencyInd", .string("01"))])
            if version >= .v2_3_1 { recurring.set("recurringInd", recurrence) }
            let charged = try JSONReader.parse(try await Self.authenticate(harness, recurring).body).value
            #expect(charged["transStatus"]?.stringValue == "Y", "\(charged)")
            let areq = try #require(sentAReq(charged))
            #expect(areq["purchaseAmount"]?.stringValue == "1099" && areq["purchaseExponent"]?.stringValue == "2" && areq["purchaseDate"] != nil)
            #expect(areq["recurringFrequency"]?.stringValue == "30")

            var instalment = Self.threeRI("4000000000001000", version, indicator: "02", category: "01")
            for (key, value) in [("purchaseAmount", "5000"), ("purchaseCurrency", "978"), ("purchaseInstalData", "12"),
                                 ("recurringExpiry", "20301231"), ("recurringFrequency", "30")] {
                instalment.set(key, .string(value))
            }
            if version >= .v2_3_1 { instalment.set("recurringInd", recurrence) }
            let paid = try JSONReader.parse(try await Self.authenticate(harness, instalment).body).value
            #expect(paid["transStatus"]?.stringValue == "Y", "\(paid)")
            #expect(sentAReq(paid)?["purchaseInstalData"]?.stringValue == "12")
            #expect(sentAReq(paid)?["acquirerBIN"] != nil, "a payment carries the merchant")
        }
    }

    @Test func aChallengeCardIsUWithoutACardholderToChallenge() async throws {
        try await withHarness { harness in
            for pan in ["4000000000110009", "4000000000120008"] {
                let record = try JSONReader.parse(try await Self.authenticate(harness, Self.threeRI(pan, .v2_2_0)).body).value
                #expect(record["transStatus"]?.stringValue == "U" && record["transStatusReason"]?.stringValue == "07", "\(record)")
            }
        }
    }

    @Test func inputA3RIAuthenticationCannotTakeIs400() async throws {
        try await withHarness { harness in
            var noIndicator = Self.threeRI("4000000000001000", .v2_2_0)
            noIndicator.set("threeRIInd", nil)
            var recurringWithoutPurchase = Self.threeRI("4000000000001000", .v2_2_0, indicator: "01")
            recurringWithoutPurchase.set("recurringExpiry", .string("20301231"))
            recurringWithoutPurchase.set("recurringFrequency", .string("30"))
            for (body, reason) in [
                (noIndicator, "threeRIInd is required for a 3RI authentication"),
                (Self.threeRI("4000000000001000", .v2_1_0, category: "01"), "a 2.1.0 3RI authentication is non-payment only"),
                (Self.threeRI("4000000000001000", .v2_2_0, indicator: "99"), "threeRIInd"),
                (recurringWithoutPurchase, "purchaseAmount"),
            ] {
                let response = try await Self.authenticate(harness, body)
                #expect(response.status == .badRequest, "\(reason): \(response.bodyText)")
                #expect(response.bodyText.contains(reason), "\(response.bodyText)")
            }
            let named = try await harness.post("/3ds-server/authenticate", Array(#"{"channel":"3RI","acctNumber":"4000000000001000","messageVersion":"2.2.0","messageCategory":"02","threeRIInd":"04"}"#.utf8))
            #expect(named.status == .ok, "the channel by name: \(named.bodyText)")
        }
    }
}
