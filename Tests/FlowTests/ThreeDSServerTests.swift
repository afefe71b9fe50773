import Configuration
import EMV3DS
import EMVCrypto
import Foundation
import JOSE
import JSON
import Net
import SDKSimulator
import Testing
import ThreeDSServer
import Harness

@Suite("3DS Server requestor API")
struct ThreeDSServerTests {
    private func authenticate(_ harness: RunningHarness, _ body: JSONValue, contentType: String = "application/json") async throws -> HTTPResponse {
        try await harness.post("/3ds-server/authenticate", JSONWriter.write(body), contentType: contentType)
    }

    @Test func acceptsTheSDKAPINamesAndAKeyObject() async throws {
        try await withHarness { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .iosEC), messageVersion: .v2_1_0, style: .iosEC)
            // iOS/Android API names, the key as an object, a non-payment authentication.
            let body: JSONValue = .object([
                ("messageVersion", .string("2.1.0")), ("sdkTransactionId", .string(sdk.sdkTransID)), ("sdkAppId", .string(sdk.sdkAppID)),
                ("sdkReferenceNumber", .string(SimulatedSDKTransaction.sdkReferenceNumber)),
                ("sdkEphemeralPublicKey", sdk.ephemeralPublicKeyJSON),
                ("deviceData", .string(sdk.deviceData)), ("pan", .string("4000000000002008")), ("messageCategory", .string("02")),
            ])
            let response = try await authenticate(harness, body)
            #expect(response.status == .ok)
            let record = try JSONReader.parse(response.body).value
            #expect(record["transStatus"]?.stringValue == "A", "\(response.bodyText)")
            #expect(record["acctNumber"]?.stringValue == "400000******2008")
        }
    }

    @Test(arguments: [
        (#"{"messageVersion":"2.2.0"}"#, "sdkTransID is required"),
        (#"{"messageVersion":""}"#, #"messageVersion \"\" is not one of 2.1.0, 2.2.0, 2.3.1"#),
        ("[]", "body must be a JSON object"),
        ("nope", "body is not JSON"),
        (#"{"messageVersion":"3.0.0","sdkTransID":"x","sdkAppID":"x","sdkReferenceNumber":"x","deviceData":"x","acctNumber":"4","sdkEphemPubKey":{}}"#,
         #"messageVersion \"3.0.0\" is not one of"#),
        (#"{"messageVersion":"2.2.0","sdkTransID":"x","sdkAppID":"x","sdkReferenceNumber":"x","deviceData":"x","acctNumber":"4","sdkEphemPubKey":"nope"}"#,
         "sdkEphemPubKey is a string that does not hold a JWK object"),
    ])
    func badInputIs400WithTheReason(body: String, reason: String) async throws {
        try await withHarness { harness in
            let response = try await harness.post("/3ds-server/authenticate", Array(body.utf8))
            #expect(response.status == .badRequest)
            #expect(response.bodyText.contains(reason), "\(response.bodyText)")
        }
    }

    @Test func anAReqThatWouldBreakTheRulesIs400NamingTheField() async throws {
        try await withHarness { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .rsa), messageVersion: .v2_2_0, style: .rsa)
            var body = sdk.authenticateRequest(pan: "4000000000001000")
            body.set("sdkTransID", .string("not-a-uuid"))
            body.set("purchaseCurrency", .string("EUR"))
            let response = try await authenticate(harness, body)
            #expect(response.status == .badRequest)
            #expect(response.bodyText.contains("203 sdkTransID"), "\(response.bodyText)")
            #expect(response.bodyText.contains("203 purchaseCurrency"), "\(response.bodyText)")
        }
    }

    @Test func wrongContentTypeIs415() async throws {
        try await withHarness { harness in
            let response = try await authenticate(harness, .object([]), contentType: "text/plain")
            #expect(response.status.code == 415)
        }
    }

    @Test func anErroFromTheDSIsTheTransactionsOutcome() async throws {
        try await withHarness { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000004", .rsa), messageVersion: .v2_2_0, style: .rsa)
            // Device data for Mastercard's key on a Visa card: the DS answers Erro 302.
            let result = try await harness.simulator.authenticate(sdk, pan: "4000000000001000")
            #expect(result.state == "error")
            #expect(result.record["erro"]?["errorCode"]?.stringValue == "302")
            #expect(result.record["erro"]?["errorComponent"]?.stringValue == "D")
            let id = try #require(result.threeDSServerTransID)
            let stored = try JSONReader.parse(try await harness.get("/3ds-server/transactions/\(id)").body).value
            #expect(stored["state"]?.stringValue == "error")
        }
    }

    @Test func anEmptyDeviceRenderOptionsIsRefusedNamingItsMembers() async throws {
        try await withHarness { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
            var body = sdk.authenticateRequest(pan: "4000000000001000")
            body.set("deviceRenderOptions", .object([]))
            let response = try await authenticate(harness, body)
            #expect(response.status == .badRequest)
            #expect(response.bodyText.contains("deviceRenderOptions.sdkInterface"), "\(response.bodyText)")
        }
    }

    @Test func anUnreachableDSIs502WithTheRecord() async throws {
        try await withHarness(configure: { $0.threeDSServer.directoryServerURL = "http://127.0.0.1:1/ds/areq" }) { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
            let response = try await authenticate(harness, sdk.authenticateRequest(pan: "4000000000001000"))
            #expect(response.status.code == 502)
            let record = try JSONReader.parse(response.body).value
            #expect(record["state"]?.stringValue == "error")
            // The client is told what failed, not where: the DS URL and the socket error stay in the log.
            #expect(record["error"]?.stringValue == "DS: cannot connect", "\(record)")
        }
    }

    @Test func unknownTransactionIs404() async throws {
        try await withHarness { harness in
            let response = try await harness.get("/3ds-server/transactions/8a880dc0-d2d2-4067-bcb1-b08d1690b26e")
            #expect(response.status == .notFound)
        }
    }

    @Test func scenariosAreListedWithTheirPANsAndOutcomes() async throws {
        try await withHarness { harness in
            let list = try JSONReader.parse(try await harness.get("/admin/scenarios").body).value
            guard case .array(let scenarios)? = list["scenarios"] else { Issue.record("no scenarios"); return }
            let names = scenarios.compactMap { $0["name"]?.stringValue }
            #expect(Array(names.prefix(18)) == ["frictionless-y", "frictionless-a", "frictionless-n", "frictionless-r", "frictionless-u", "frictionless-i",
                                                "challenge-text", "challenge-single-select", "challenge-multi-select", "challenge-oob", "challenge-html",
                                                "challenge-whitelisting", "challenge-two-steps", "challenge-decoupled-fallback", "challenge-information", "challenge-html-oob",
                                                "challenge-cancelled", "decoupled"])
            #expect(names.filter { $0.hasPrefix("fault-") }.count == 48)
            // Every scenario has a PAN but those selected by a trigger; every fault says what a correct client does.
            for scenario in scenarios {
                if scenario["trigger"] != nil { continue }
                let pan = try #require(scenario["pan"]?.stringValue)
                if scenario["faults"] != nil { #expect(scenario["expect"]?["text"]?.stringValue?.isEmpty == false) }
                #expect(CardNumber.isLuhnValid(pan), "\(pan)")
                #expect(scenario["description"]?.stringValue?.isEmpty == false)
            }
            let informational = try #require(scenarios.first { $0["name"]?.stringValue == "frictionless-i" })
            #expect(informational["expected"]?["2.1.0"]?["transStatus"]?.stringValue == "U")
            #expect(informational["expected"]?["2.2.0"]?["transStatus"]?.stringValue == "I")
            // Challenges list the answers that pass and the flow per version.
            let text = try #require(scenarios.first { $0["name"]?.stringValue == "challenge-text" })
            #expect(text["answers"] == .array([.string("1234")]))
            #expect(text["expected"]?["2.1.0"]?["flow"]?.stringValue == "challenge")
            let decoupled = try #require(scenarios.first { $0["name"]?.stringValue == "decoupled" })
            #expect(decoupled["expected"]?["2.1.0"]?["flow"]?.stringValue == "frictionless")
            #expect(decoupled["expected"]?["2.2.0"]?["flow"]?.stringValue == "decoupled")
        }
    }
}
