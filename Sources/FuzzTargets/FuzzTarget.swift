import Configuration
import EMV3DS
import EMVCrypto
import Foundation
import JOSE
import JSON
import Net

/// The parsers that take bytes from outside, each as a fuzz target: any input must end in a
/// value or a typed error, never a crash, a hang or unbounded memory. `./harness fuzz TARGET`
/// runs one under libFuzzer; the test suite replays the seeds and every input kept in
/// Fuzz/Regressions through the same functions.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// The JSON reader, then the EMV field rules of every message type over what it read.
    case json
    /// HTTP request heads and bodies as the server reads them, in two chunks split where the
    /// first byte says (so that state carried between reads is exercised too).
    case http
    /// JWE and JWS compact serialisations, and device data decrypted with the test DS keys.
    case jose
    /// The scenario file.
    case scenarios

    public func run(_ bytes: [UInt8]) {
        switch self {
        case .json: Self.json(bytes)
        case .http: Self.http(bytes)
        case .jose: Self.jose(bytes)
        case .scenarios: _ = try? ScenarioFile.parse(String(decoding: bytes, as: UTF8.self), source: "fuzz")
        }
    }

    private static func json(_ bytes: [UInt8]) {
        guard let value = try? JSONReader.parse(bytes).value else { return }
        _ = JSONWriter.write(value)
        for table in MessageTables.all {
            _ = table.rules.check(value, context: MessageContext(version: .v2_2_0))
            _ = table.rules.check(value, context: MessageContext(version: .v2_3_1, channel: .app, request: value))
        }
        _ = try? AReq(bytes: bytes, rules: AReqRules.fromThreeDSServer)
        _ = try? ErroMessage(json: value)
    }

    private static func http(_ bytes: [UInt8]) {
        let reader = HTTPRequestReader(maxHeaderBytes: 4096, maxBodyBytes: 16 * 1024)
        let split = bytes.first.map { min(Int($0), bytes.count) } ?? 0
        do {
            for request in try reader.read(Array(bytes[..<split])) + (try reader.read(Array(bytes[split...]))) {
                _ = request.path
                _ = request.headers.mediaType
            }
        } catch {}
    }

    /// The Visa test DS keys from the repository's test PKI (the fuzzer runs from its root).
    private static let keys: DirectoryServerKeys? = {
        let pki = TestPKI(directory: "certs")
        guard let rsa = try? pki.dsPrivateKey("A000000003", .rsa), let ec = try? pki.dsPrivateKey("A000000003", .ec) else { return nil }
        return DirectoryServerKeys(rsa: rsa, ec: ec)
    }()

    private static func jose(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        _ = try? JWE(compact: text)
        _ = try? JWS(compact: text)
        if let keys { _ = try? DeviceData.decrypt(text, keys: keys, directoryServerID: "A000000003") }
    }
}
