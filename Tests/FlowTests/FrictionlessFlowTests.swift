@testable import EMV3DS
import Configuration
import EMVCrypto
import Foundation
import JOSE
import JSON
import Net
import SDKSimulator
import Testing
import Harness

struct FlowCase: CustomTestStringConvertible, Sendable {
    let version: MessageVersion
    let style: DeviceDataStyle
    var testDescription: String { "\(version.rawValue) \(style.rawValue)" }
    static let all = MessageVersion.allCases.flatMap { version in DeviceDataStyle.allCases.map { FlowCase(version: version, style: $0) } }
}

/// (scenario PAN, transStatus at 2.2.0+, reason, eci)
private let visaScenarios: [(String, String, String?, String?)] = [
    ("4000000000001000", "Y", nil, "05"), ("4000000000002008", "A", nil, "06"), ("4000000000003006", "N", "01", nil),
    ("4000000000004004", "R", "11", nil), ("4000000000005001", "U", "08", nil), ("4000000000006009", "I", nil, nil),
]

@Suite("Frictionless flow: app, 3DS Server, DS and ACS over HTTP")
struct FrictionlessFlowTests {
    @Test(arguments: FlowCase.all)
    func everyFrictionlessOutcome(_ flow: FlowCase) async throws {
        try await withHarness { harness in
            for (pan, status, reason, eci) in visaScenarios {
                let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", flow.style), messageVersion: flow.version, style: flow.style)
                let result = try await harness.simulator.authenticate(sdk, pan: pan)
                // I is a 2.2.0 status: a 2.1.0 transaction gets U with reason 07.
                let expected = status == "I" && flow.version == .v2_1_0 ? ("U", "07" as String?, nil as String?) : (status, reason, eci)
                #expect(result.state == "frictionless", "\(pan): \(result.summary)")
                #expect(result.transStatus == expected.0, "\(pan)")
                #expect(result.transStatusReason == expected.1, "\(pan)")
                #expect(result.eci == expected.2, "\(pan)")
                let carriesValue = expected.0 == "Y" || expected.0 == "A"
                #expect(result.authenticationValue.map { Data(base64Encoded: $0)?.count == 20 && $0.count == 28 } ?? !carriesValue)
                #expect(result.record["sdkTransID"]?.stringValue == sdk.sdkTransID)
                #expect(result.record["acsTransID"]?.stringValue.map { FieldFormat.isCanonicalUUID($0) } == true)

                // The transaction's record holds the AReq sent and the ARes received.
                let id = try #require(result.threeDSServerTransID)
                let stored = try JSONReader.parse(try await harness.get("/3ds-server/transactions/\(id)").body).value
                #expect(stored["transStatus"]?.stringValue == expected.0)
                guard case .array(let messages)? = stored["messages"] else { Issue.record("no message trail"); continue }
                #expect(messages.compactMap { $0["message"]?["messageType"]?.stringValue } == ["AReq", "ARes"])
                #expect(messages.first?["message"]?["messageVersion"]?.stringValue == flow.version.rawValue)
            }
        }
    }

    @Test func mastercardGetsItsOwnECIs() async throws {
        try await withHarness { harness in
            for (pan, eci) in [("5200000000001005", "02"), ("2221000000000009", "02")] {
                let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000004", .iosEC), messageVersion: .v2_2_0, style: .iosEC)
                let result = try await harness.simulator.authenticate(sdk, pan: pan)
                #expect(result.transStatus == "Y", "\(pan): \(result.summary)")
                #expect(result.eci == eci)
            }
        }
    }

    @Test(arguments: DeviceDataStyle.allCases)
    func gcmDeviceDataIsAccepted(_ style: DeviceDataStyle) async throws {
        try await withHarness { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", style), messageVersion: .v2_3_1, style: style, encryption: .a128gcm)
            let result = try await harness.simulator.authenticate(sdk, pan: "4000000000001000")
            #expect(result.transStatus == "Y", "\(result.summary)")
        }
    }

    @Test func theDSForwardsDecryptedDeviceInformationToTheACS() async throws {
        // An ACS that records what it receives, in place of the harness's own.
        let recorder = AReqRecorder()
        try await withHarness(configure: { configuration in
            configuration.directoryServers[0].acsURL = "http://127.0.0.1:\(recorder.port)/acs/areq"
        }) { harness in
            defer { recorder.stop() }
            let areq = try appAReq(style: .android)
            let ares = try await harness.postMessage("/ds/areq", areq)
            #expect(ares["messageType"]?.stringValue == "ARes")
            let forwarded = try #require(recorder.received.first)
            #expect(forwarded["sdkEncData"] == nil)
            #expect(forwarded["dsURL"]?.stringValue?.hasSuffix("/ds/rreq") == true)
            #expect(forwarded["dsReferenceNumber"]?.stringValue == "3DS_LOA_DIS_HARN_020200_00001")
            let deviceInfo = try #require(forwarded["deviceInfo"]?.stringValue)
            let plaintext = try JSONReader.parse(Base64URL.decode(deviceInfo)).value
            #expect(plaintext["DD"]?["C001"]?.stringValue == "Android")
            #expect(forwarded["threeDSServerTransID"] == areq["threeDSServerTransID"])
        }
    }
}
