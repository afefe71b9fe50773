import Configuration
import EMV3DS
import EMVCrypto
import Foundation
import JOSE
import JSON
import Net
import Testing
import Harness
import SDKSimulator

/// What an Erro must say: its code, component and the field in errorDetail.
private func expectErro(_ answer: JSONValue, code: String, component: String = "D", detail: String? = nil,
                        sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(answer["messageType"]?.stringValue == "Erro", "\(JSONWriter.string(answer))", sourceLocation: sourceLocation)
    #expect(answer["errorCode"]?.stringValue == code, "\(JSONWriter.string(answer))", sourceLocation: sourceLocation)
    #expect(answer["errorComponent"]?.stringValue == component, sourceLocation: sourceLocation)
    if let detail {
        #expect(answer["errorDetail"]?.stringValue?.split(separator: ",").contains(Substring(detail)) == true,
                "errorDetail \(answer["errorDetail"]?.stringValue ?? "none")", sourceLocation: sourceLocation)
    }
}

@Suite("Directory Server: malformed AReqs, device data, card ranges, PReq")
struct DirectoryServerTests {
    @Test func missingRequiredFieldIs201NamingIt() async throws {
        try await withHarness { harness in
            let areq = try appAReq(replacing: ["acctNumber": nil])
            let answer = try await harness.postMessage("/ds/areq", areq)
            expectErro(answer, code: "201", detail: "acctNumber")
            #expect(answer["threeDSServerTransID"] == areq["threeDSServerTransID"])
            #expect(answer["sdkTransID"] == areq["sdkTransID"])
            #expect(answer["errorMessageType"]?.stringValue == "AReq")
            #expect(answer["messageVersion"]?.stringValue == "2.2.0")
        }
    }

    @Test func anEmptyDeviceRenderOptionsIs201NamingItsMissingMembers() async throws {
        // Table A.1: sdkInterface and sdkUiType are required members of deviceRenderOptions.
        try await withHarness { harness in
            let answer = try await harness.postMessage("/ds/areq", try appAReq(replacing: ["deviceRenderOptions": .object([])]))
            expectErro(answer, code: "201", detail: "deviceRenderOptions.sdkInterface")
        }
    }

    @Test(arguments: [
        ("purchaseCurrency", JSONValue.string("EUR")), ("threeDSServerTransID", .string("not-a-uuid")),
        ("deviceChannel", .string("07")), ("sdkEphemPubKey", .string("{}")), ("messageCategory", .number("1")),
        ("cardholderName", .string("")), ("email", .null), ("sdkEncData", .string(String(repeating: "A", count: 64_001))),
    ])
    func wrongFormatIs203NamingTheField(field: String, value: JSONValue) async throws {
        try await withHarness { harness in
            let answer = try await harness.postMessage("/ds/areq", try appAReq(replacing: [field: value]))
            expectErro(answer, code: "203", detail: field)
        }
    }

    /// The ACS agrees on the secure channel's key with the SDK's key: a point off the curve (an invalid-curve attack on
    /// the ACS's ephemeral key) is refused before any key is agreed, as a format error of sdkEphemPubKey.
    @Test func anSDKKeyOffTheCurveIsRefusedByTheACSAs203() async throws {
        try await withHarness { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", .android), messageVersion: .v2_2_0, style: .android)
            var offCurve = sdk.ephemeralPublicKeyJSON
            offCurve.set("y", offCurve["x"])
            let answer = try await harness.postMessage("/ds/areq", try appAReq(pan: "4000000000110009", sdk: sdk, replacing: ["sdkEphemPubKey": offCurve]))
            expectErro(answer, code: "203", component: "A", detail: "sdkEphemPubKey")
            // The same card with the SDK's own key is challenged: the refusal was the key's.
            let challenged = try await harness.postMessage("/ds/areq", try appAReq(pan: "4000000000110009"))
            #expect(challenged["transStatus"]?.stringValue == "C", "\(JSONWriter.string(challenged))")
        }
    }

    /// errorDetail of 102 is the versions the sender supports (Table A.4), comma-separated.
    @Test func unknownVersionIs102ListingTheVersionsTheDSSpeaks() async throws {
        try await withHarness { harness in
            let answer = try await harness.postMessage("/ds/areq", try appAReq(replacing: ["messageVersion": .string("2.9.9")]))
            expectErro(answer, code: "102", detail: "2.2.0")
            #expect(answer["errorDetail"]?.stringValue == "2.1.0,2.2.0,2.3.1")
        }
    }

    @Test func duplicateMemberIs204() async throws {
        try await withHarness { harness in
            var text = JSONWriter.string(try appAReq())
            text.removeLast()
            text += #","acctNumber":"4000000000001000"}"#
            let response = try await harness.post("/ds/areq", Array(text.utf8))
            expectErro(try JSONReader.parse(response.body).value, code: "204", detail: "acctNumber")
        }
    }

    @Test(arguments: ["not json", "[1,2]", #"{"messageType":"PReq","messageVersion":"2.2.0"}"#, "{\"messageType\":\"AReq\""])
    func unreadableBodiesAre101(body: String) async throws {
        try await withHarness { harness in
            let response = try await harness.post("/ds/areq", Array(body.utf8))
            #expect(response.status == .ok)
            #expect(response.headers.mediaType == "application/json")
            expectErro(try JSONReader.parse(response.body).value, code: "101")
        }
    }

    @Test func wrongContentTypeIs101() async throws {
        try await withHarness { harness in
            let response = try await harness.post("/ds/areq", JSONWriter.write(try appAReq()), contentType: "text/plain")
            expectErro(try JSONReader.parse(response.body).value, code: "101", detail: "Content-Type")
        }
    }

    @Test func bodyOverTheServerLimitIs413AndTheServerStaysUp() async throws {
        // The connection's limit, read as the bytes arrive: over loopback.
        try await withHarness(configure: { $0.server.maxBodyBytes = 64 * 1024 }, transport: .loopback) { harness in
            let response = try await harness.post("/ds/areq", Array(repeating: UInt8(ascii: " "), count: 100_000))
            #expect(response.status.code == 413)
            let after = try await harness.postMessage("/ds/areq", try appAReq())
            #expect(after["messageType"]?.stringValue == "ARes")
        }
    }

    @Test(arguments: DeviceDataStyle.allCases)
    func deviceDataForAnotherKeyIs302(style: DeviceDataStyle) async throws {
        try await withHarness { harness in
            // Encrypted to Mastercard's DS key, sent for a Visa card: the Visa DS cannot read it.
            let foreign = try appAReq(style: style, rid: "A000000004")
            let areq = try appAReq(style: style, replacing: ["sdkEncData": foreign["sdkEncData"]])
            let answer = try await harness.postMessage("/ds/areq", areq)
            expectErro(answer, code: "302", detail: "sdkEncData")
            #expect(answer["sdkTransID"] == areq["sdkTransID"])
        }
    }

    @Test(arguments: [0, 1, 2, 3, 4])
    func tamperedDeviceDataIs302(part: Int) async throws {
        try await withHarness { harness in
            let areq = try appAReq(style: .rsa)
            var parts = (areq["sdkEncData"]?.stringValue ?? "").split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let original = parts[part]
            // Flip the first character of the part (an empty part gets one).
            parts[part] = original.isEmpty ? "AA" : (original.first == "A" ? "B" : "A") + original.dropFirst()
            let answer = try await harness.postMessage("/ds/areq", try appAReq(style: .rsa, replacing: ["sdkEncData": .string(parts.joined(separator: "."))]))
            expectErro(answer, code: "302", detail: "sdkEncData")
        }
    }

    @Test func panOutsideEveryRangeGetsAnAResN13ByDefault() async throws {
        try await withHarness { harness in
            let areq = try appAReq(pan: "1000000000000009")
            let answer = try await harness.postMessage("/ds/areq", areq)
            #expect(answer["messageType"]?.stringValue == "ARes")
            #expect(answer["transStatus"]?.stringValue == "N")
            #expect(answer["transStatusReason"]?.stringValue == "13")
            #expect(AResRules.rules.validate(answer, version: .v2_2_0, request: areq) == [])
        }
    }

    /// A later AReq with the first one's threeDSServerTransID must not get its outcome, whatever its
    /// PAN: the DS refuses the id used again, and the scenario is kept per dsTransID.
    @Test(arguments: [(MessageVersion.v2_2_0, "305"), (.v2_3_1, "312")])
    func aThreeDSServerTransIDUsedAgainIsRefused(version: MessageVersion, code: String) async throws {
        try await withHarness { harness in
            let first = try appAReq(pan: "4000000000003006", version: version)  // frictionless-n
            #expect(try await harness.postMessage("/ds/areq", first)["transStatus"] == .string("N"))
            let again = try appAReq(pan: "4000000000001000", version: version, replacing: ["threeDSServerTransID": first["threeDSServerTransID"]])
            expectErro(try await harness.postMessage("/ds/areq", again), code: code, detail: "threeDSServerTransID")
            // A new id gets the new PAN's own outcome.
            #expect(try await harness.postMessage("/ds/areq", try appAReq(pan: "4000000000001000", version: version))["transStatus"] == .string("Y"))
        }
    }

    @Test func panOutsideEveryRangeCanBeAnErro305() async throws {
        try await withHarness(configure: { $0.directoryServer.outOfRange = .erro }) { harness in
            expectErro(try await harness.postMessage("/ds/areq", try appAReq(pan: "1000000000000009")), code: "305", detail: "acctNumber")
        }
    }

    @Test func unreachableACSIs405() async throws {
        try await withHarness(configure: { $0.directoryServers[0].acsURL = "http://127.0.0.1:1/acs/areq" }) { harness in
            let answer = try await harness.postMessage("/ds/areq", try appAReq())
            expectErro(answer, code: "405", detail: "ACS")
        }
    }

    @Test func preqIsAnsweredWithTheCardRanges() async throws {
        try await withHarness { harness in
            let preq: JSONValue = .object([
                ("messageType", .string("PReq")), ("messageVersion", .string("2.2.0")),
                ("threeDSServerRefNumber", .string("3DS_LOA_SER_PEER_020200_00001")),
                ("threeDSServerTransID", .string("8a880dc0-d2d2-4067-bcb1-b08d1690b26e")),
            ])
            let pres = try await harness.postMessage("/ds/preq", preq)
            #expect(PreparationRules.pRes.validate(pres, version: .v2_2_0) == [])
            // The DS's own serial (PreparationTests: what changed since it).
            #expect(pres["serialNum"]?.stringValue?.hasSuffix("-0") == true)
            guard case .array(let ranges)? = pres["cardRangeData"] else { Issue.record("no cardRangeData"); return }
            // Visa's "4" from its first to its last card, cut where a scenario's card has a 3DS Method of its own.
            #expect(ranges.contains { $0["startRange"]?.stringValue == "4000000000000000" })
            #expect(ranges.contains { $0["endRange"]?.stringValue == "4999999999999999" })
            #expect(ranges.contains { $0["startRange"]?.stringValue == "2221000000000000" && $0["endRange"]?.stringValue == "2720999999999999" })

            var bad = preq
            bad.set("threeDSServerRefNumber", nil)
            expectErro(try await harness.postMessage("/ds/preq", bad), code: "201", detail: "threeDSServerRefNumber")

            // 2.3.1 (Annex A, PRes): dsProtocolVersions and readOrder instead of the start/end
            // versions, and card ranges as `ranges` with the ACS's versions.
            var preq231 = preq
            preq231.set("messageVersion", .string("2.3.1"))
            let pres231 = try await harness.postMessage("/ds/preq", preq231)
            let report = PreparationRules.pRes.check(pres231, context: MessageContext(version: .v2_3_1))
            #expect(report.violations == [] && report.warnings == [], "\(report)")
            #expect(pres231["dsProtocolVersions"] == .array([.string("2.1.0"), .string("2.2.0"), .string("2.3.1")]))
            #expect(pres231["dsStartProtocolVersion"] == nil && pres231["readOrder"] == .string("01"))
            let first = pres231["cardRangeData"]?.arrayValue?.first
            #expect(first?["ranges"]?.arrayValue?.first?["start"]?.stringValue?.count == 16)
            #expect(first?["acsProtocolVersions"]?.arrayValue?.count == 3)
        }
    }

    @Test func acsRefusesAnAReqWithoutTheDSFields() async throws {
        try await withHarness { harness in
            // An AReq straight from a 3DS Server, sent to the ACS: still sdkEncData, no dsTransID.
            let answer = try await harness.postMessage("/acs/areq", try appAReq())
            expectErro(answer, code: "201", component: "A", detail: "dsTransID")
        }
    }
}
