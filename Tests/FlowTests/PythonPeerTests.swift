import Configuration
import EMV3DS
import EMVCrypto
import Foundation
import JOSE
import JSON
import SDKSimulator
import TestSupport
import Testing
import ThreeDSServer
import Harness

/// The Python peer (Peer/emv_peer.py): joserfc and the cryptography package, not our code.
private func peerProcess(_ arguments: [String]) throws -> ChildProcess {
    try ChildProcess("python3", [repositoryRoot + "/Tests/FlowTests/Peer/emv_peer.py"] + arguments)
}

@Suite("Against a Python peer (joserfc)")
struct PythonPeerTests {
    @Test(arguments: [("rsa", "2.1.0"), ("android", "2.2.0"), ("ios-ec", "2.3.1")])
    func ourDSAnswersAnAReqBuiltByThePeer(style: String, version: String) async throws {
        try await withHarness { harness in
            let variant = style == "rsa" ? "rsa" : "ec"
            let peer = try peerProcess(["areq", harness.baseURL + "/ds/areq", pki.dsCertificatePath("A000000003", variant == "rsa" ? .rsa : .ec),
                                                     "A000000003", style, "4000000000002008", version])
            let status = peer.wait()
            let text = peer.line(0, timeout: 0) ?? peer.output
            #expect(status == 0, "\(text)")
            let ares = try JSONReader.parse(Array(text.utf8)).value
            #expect(ares["messageType"]?.stringValue == "ARes", "\(text)")
            #expect(ares["transStatus"]?.stringValue == "A")
            #expect(ares["eci"]?.stringValue == "06")
            #expect(ares["messageVersion"]?.stringValue == version)
        }
    }

    @Test(arguments: DeviceDataStyle.allCases)
    func ourThreeDSServerTalksToThePeersDS(style: DeviceDataStyle) async throws {
        let peer = try peerProcess(["ds", pki.dsKeyPath("A000000003", style.keyVariant), "A000000003"])
        let port = peer.line(0) ?? ""
        try #require(Int(port) != nil, "peer did not start: \(peer.output)")
        try await withHarness(configure: { $0.threeDSServer.directoryServerURL = "http://127.0.0.1:\(port)/ds/areq" }) { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", style), messageVersion: .v2_2_0, style: style)
            let result = try await harness.simulator.authenticate(sdk, pan: "4000000000001000")
            #expect(result.transStatus == "Y", "\(result.summary)")
            let report = try JSONReader.parse(Array((peer.line(1) ?? peer.output).utf8)).value
            peer.wait()
            #expect(report["missing"] == .array([]), "the peer DS found fields missing: \(JSONWriter.string(report))")
            #expect(report["deviceData"]?["DD"]?["C001"]?.stringValue == (style == .android ? "Android" : "iOS"))
        }
    }
}
