import EMV3DS
import EMVCrypto
import Foundation
import JSON
import Net
import SDKSimulator
import Testing
import Harness

/// The SDK's `AuthenticationRequestParameters` under the EMVCo SDK API's names (SDK
/// Specification: `getSdkTransactionID`, `getDeviceData`, `getSDKEphemeralPublicKey`,
/// `getSDKAppID`, `getSDKReferenceNumber`, `getMessageVersion`; the same names in Netcetera's and
/// GPayments' public Android docs), the key as the JSON string the SDK returns.
private func parameters(_ sdk: SimulatedSDKTransaction) -> [(key: String, value: JSONValue)] {
    [
        ("sdkTransactionID", .string(sdk.sdkTransID)), ("deviceData", .string(sdk.deviceData)),
        ("sdkEphemeralPublicKey", .string(JSONWriter.string(sdk.ephemeralPublicKeyJSON))), ("sdkAppID", .string(sdk.sdkAppID)),
        ("sdkReferenceNumber", .string(SimulatedSDKTransaction.sdkReferenceNumber)), ("messageVersion", .string(sdk.messageVersion.rawValue)),
    ]
}

/// A purchase, beside the parameters: what the app adds of its own.
private let purchase: [(key: String, value: JSONValue)] = [("purchaseAmount", .string("1099")), ("purchaseCurrency", .string("978"))]

private func json(_ response: HTTPResponse) throws -> JSONValue { try JSONReader.parse(response.body).value }

@Suite("Integration profile: the EMVCo SDK API's backend contract")
struct EMVCoProfileTests {
    @Test func aFrictionlessOutcomeShiftsLiabilityAndCarriesTheARes() async throws {
        try await withHarness { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
            let body = JSONValue.object(parameters(sdk) + purchase + [("acctNumber", .string("4000000000001000"))])
            let response = try await harness.post("/profiles/emvco/authenticate", JSONWriter.write(body))
            #expect(response.status == .ok, "\(response.bodyText)")
            let outcome = try json(response)
            #expect(outcome["transStatus"]?.stringValue == "Y")
            #expect(outcome["challengeRequired"] == .bool(false))
            #expect(outcome["challengeParameters"] == nil)
            #expect(outcome["liabilityShiftPossible"] == .bool(true))
            #expect(outcome["liabilityShifted"] == .bool(true))
            #expect(outcome["eci"]?.stringValue == "05")
            #expect(outcome["cavv"] == outcome["authenticationValue"])
            #expect(outcome["ares"]?["messageType"]?.stringValue == "ARes")
            #expect(outcome["ares"]?["sdkTransID"]?.stringValue == sdk.sdkTransID)
            let id = try #require(outcome["threeDSServerTransID"]?.stringValue)
            let result = try json(try await harness.get("/profiles/emvco/result/\(id)"))
            #expect(result["transStatus"]?.stringValue == "Y")
            #expect(result["liabilityShifted"] == .bool(true))
        }
    }

    @Test func aChallengeGivesTheChallengeParametersAndTheResultAfterIt() async throws {
        try await withHarness { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .iosEC), messageVersion: .v2_3_1, style: .iosEC)
            // Nested as an app that passes the SDK's object whole; the requestor app URL rides along.
            let body = JSONValue.object([
                ("authenticationRequestParameters", .object(parameters(sdk))), ("acctNumber", .string("4000000000110009")), ("purchaseAmount", .string("1099")), ("purchaseCurrency", .string("978")),
                ("threeDSRequestorAppURL", .string("https://merchant.example/app")),
            ])
            let outcome = try json(try await harness.post("/profiles/emvco/authenticate", JSONWriter.write(body)))
            #expect(outcome["transStatus"]?.stringValue == "C")
            #expect(outcome["challengeRequired"] == .bool(true))
            #expect(outcome["liabilityShiftPossible"] == .bool(true))
            #expect(outcome["liabilityShifted"] == .bool(false))
            let challenge = try #require(outcome["challengeParameters"])
            #expect(challenge.objectMembers?.map(\.key) == ["threeDSServerTransactionID", "acsTransactionID", "acsRefNumber", "acsSignedContent",
                                                             "threeDSRequestorAppURL"])
            #expect(challenge["acsRefNumber"] == outcome["ares"]?["acsReferenceNumber"])
            #expect(challenge["threeDSRequestorAppURL"]?.stringValue == "https://merchant.example/app")
            let parameters = ChallengeParameters(threeDSServerTransID: try #require(challenge["threeDSServerTransactionID"]?.stringValue),
                                                 acsTransID: try #require(challenge["acsTransactionID"]?.stringValue),
                                                 acsSignedContent: try #require(challenge["acsSignedContent"]?.stringValue))
            let report = await harness.challenger.run(sdk, parameters: parameters, answers: ChallengeAnswers(["1234"]), style: .ios)
            #expect(report.outcome == .completed(.authenticated))
            let result = try json(try await harness.get("/profiles/emvco/result/\(parameters.threeDSServerTransID)"))
            #expect(result["state"]?.stringValue == "completed")
            #expect(result["transStatus"]?.stringValue == "Y")
            #expect(result["liabilityShifted"] == .bool(true))
            #expect(result["eci"]?.stringValue == "05")
        }
    }

    @Test func aRefusedAuthenticationShiftsNoLiability() async throws {
        try await withHarness { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .rsa), messageVersion: .v2_1_0, style: .rsa)
            let body = JSONValue.object(parameters(sdk) + purchase + [("acctNumber", .string("4000000000003006"))])
            let outcome = try json(try await harness.post("/profiles/emvco/authenticate", JSONWriter.write(body)))
            #expect(outcome["transStatus"]?.stringValue == "N", "\(outcome)")
            #expect(outcome["liabilityShiftPossible"] == .bool(false))
            #expect(outcome["liabilityShifted"] == .bool(false))
        }
    }

    @Test func anErroFromTheDSIsAnsweredWithItAndNoOutcome() async throws {
        try await withHarness { harness in
            // Device data for Mastercard's key on a Visa card: the DS answers Erro 302.
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000004", .rsa), messageVersion: .v2_2_0, style: .rsa)
            let body = JSONValue.object(parameters(sdk) + purchase + [("acctNumber", .string("4000000000001000"))])
            let response = try await harness.post("/profiles/emvco/authenticate", JSONWriter.write(body))
            #expect(response.status == .ok)
            let outcome = try json(response)
            #expect(outcome["erro"]?["errorCode"]?.stringValue == "302")
            #expect(outcome["transStatus"] == nil)
            #expect(outcome["liabilityShifted"] == .bool(false))
        }
    }

    @Test(arguments: [
        ("/profiles/emvco/authenticate", #"{"messageVersion":"2.2.0"}"#, 400, "sdkTransID is required"),
        ("/profiles/emvco/authenticate", #"{"authenticationRequestParameters":"x"}"#, 400, "authenticationRequestParameters must be an object"),
        ("/profiles/emvco/authenticate", "nope", 400, "body is not JSON"),
    ])
    func badInputIsAnErrorInTheProfilesShape(path: String, body: String, status: Int, detail: String) async throws {
        try await withHarness { harness in
            let response = try await harness.post(path, Array(body.utf8))
            #expect(response.status.code == status)
            let error = try json(response)
            #expect(error["errorCode"]?.stringValue == String(status))
            #expect(error["errorDetail"]?.stringValue?.contains(detail) == true, "\(response.bodyText)")
        }
    }

    @Test func anUnknownResultIs404InTheProfilesShape() async throws {
        try await withHarness { harness in
            let response = try await harness.get("/profiles/emvco/result/8a880dc0-d2d2-4067-bcb1-b08d1690b26e")
            #expect(response.status == .notFound)
            #expect(try json(response)["errorDescription"]?.stringValue == "Not Found")
        }
    }
}

@Suite("Version lookup: what the card's range supports, from the DS's PRes")
struct VersionLookupTests {
    @Test func anEnrolledCardGetsItsDirectoryServerAndVersions() async throws {
        try await withHarness { harness in
            let response = try await harness.post("/3ds-server/versions", Array(#"{"acctNumber":"4000000000001000"}"#.utf8))
            #expect(response.status == .ok, "\(response.bodyText)")
            let answer = try json(response)
            #expect(answer["dsId"]?.stringValue == "A000000003")
            #expect(answer["messageVersions"] == .array(MessageVersion.allCases.map { .string($0.rawValue) }))
            #expect(answer["highestMessageVersion"]?.stringValue == MessageVersion.latest.rawValue)
            #expect(answer["acctNumber"]?.stringValue == "400000******1000")
            let mastercard = try json(try await harness.post("/3ds-server/versions", Array(#"{"pan":"5100000000001000"}"#.utf8)))
            #expect(mastercard["dsId"]?.stringValue == "A000000004", "\(mastercard)")
        }
    }

    @Test(arguments: [
        (#"{"acctNumber":"1000000000001000"}"#, 404, "no card range of the DS holds 100000******1000"),
        (#"{"acctNumber":"4000"}"#, 400, "acctNumber must be 13-19 digits"),
        (#"{}"#, 400, "acctNumber (or pan) is required"),
        ("nope", 400, "body is not JSON"),
    ])
    func aCardOutsideTheRangesOrBadInputIsRefusedWithTheReason(body: String, status: Int, reason: String) async throws {
        try await withHarness { harness in
            let response = try await harness.post("/3ds-server/versions", Array(body.utf8))
            #expect(response.status.code == status)
            #expect(response.bodyText.contains(reason), "\(response.bodyText)")
        }
    }
}
