import EMV3DS
import EMVCrypto
import Foundation
import JOSE
import JSON
import SDKSimulator
import Testing

/// The Python peer (Peer/emv_peer.py): joserfc and the cryptography package, not our code.
private func peerProcess(_ arguments: [String]) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", repositoryRoot + "/Tests/FlowTests/Peer/emv_peer.py"] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    return (process, output)
}

/// Reads one line from the peer (blocking, bounded by the peer's own timeouts).
private func readLine(_ pipe: Pipe) -> String {
    var line = Data()
    while true {
        let byte = pipe.fileHandleForReading.readData(ofLength: 1)
        if byte.isEmpty || byte == Data("\n".utf8) { break }
        line.append(byte)
    }
    return String(decoding: line, as: UTF8.self)
}

@Suite("Against a Python peer (joserfc)")
struct PythonPeerTests {
    @Test(arguments: [("rsa", "2.1.0"), ("android", "2.2.0"), ("ios-ec", "2.3.1")])
    func ourDSAnswersAnAReqBuiltByThePeer(style: String, version: String) async throws {
        try await withHarness { harness in
            let variant = style == "rsa" ? "rsa" : "ec"
            let (process, output) = try peerProcess(["areq", harness.baseURL + "/ds/areq", pki.dsCertificatePath("A000000003", variant == "rsa" ? .rsa : .ec),
                                                     "A000000003", style, "4000000000002008", version])
            let text = readLine(output)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(text)")
            let ares = try JSONReader.parse(Array(text.utf8)).value
            #expect(ares["messageType"]?.stringValue == "ARes", "\(text)")
            #expect(ares["transStatus"]?.stringValue == "A")
            #expect(ares["eci"]?.stringValue == "06")
            #expect(ares["messageVersion"]?.stringValue == version)
        }
    }

    @Test(arguments: DeviceDataStyle.allCases)
    func ourThreeDSServerTalksToThePeersDS(style: DeviceDataStyle) async throws {
        let (process, output) = try peerProcess(["ds", pki.dsKeyPath("A000000003", style.keyVariant), "A000000003"])
        defer { if process.isRunning { process.terminate() } }
        let port = readLine(output)
        try #require(Int(port) != nil, "peer did not start: \(port)")
        try await withHarness(configure: { $0.threeDSServer.directoryServerURL = "http://127.0.0.1:\(port)/ds/areq" }) { harness in
            let sdk = try SimulatedSDKTransaction(directoryServer: directoryServer("A000000003", style), messageVersion: .v2_2_0, style: style)
            let result = try await harness.simulator.authenticate(sdk, pan: "4000000000001000")
            #expect(result.transStatus == "Y", "\(result.summary)")
            let report = try JSONReader.parse(Array(readLine(output).utf8)).value
            process.waitUntilExit()
            #expect(report["missing"] == .array([]), "the peer DS found fields missing: \(JSONWriter.string(report))")
            #expect(report["deviceData"]?["DD"]?["C001"]?.stringValue == (style == .android ? "Android" : "iOS"))
        }
    }
}
