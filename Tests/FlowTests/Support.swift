import Configuration
import EMV3DS
import EMVCrypto
import EventLoops
import Foundation
import Harness
import JOSE
import JSON
import Logging
import Net
import SDKSimulator
import Testing
import TestSupport
import Messaging
import Store

/// How a test reaches the harness: through its router in process, no socket (the requests, routes, guards, handlers and
/// answers are the server's own), or over loopback as an outside party does. The pass of `./harness test` that runs the
/// flow tests with the roles calling each other over HTTP uses loopback too, so every flow also crosses the network.
enum TestTransport {
    case router, loopback

    static var `default`: TestTransport { ProcessInfo.processInfo.environment["THREEDS_HARNESS_TEST_ROLE_CALLS"] == "http" ? .loopback : .router }
}

/// The harness with its committed defaults on a free loopback port; stopped by `stop()`.
final class RunningHarness: Sendable {
    let app: HarnessApp
    let clientGroup = EventLoopGroup(loopCount: 1)
    let client: HTTPClient
    let baseURL: String

    /// A fresh data directory per harness (its store), removed by `stop()`; a test that restarts
    /// a harness on the same store passes it on.
    let dataDirectory: String
    private let ownsDataDirectory: Bool

    init(dataDirectory: String? = nil, configure: (inout HarnessConfiguration) -> Void = { _ in },
         clock: HarnessClock = .system, transport: TestTransport = .default) throws {
        var configuration = try HarnessConfiguration.load(path: repositoryRoot + "/config/harness.yaml")
        self.dataDirectory = dataDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("harness-data-\(UUID().uuidString)").path
        ownsDataDirectory = dataDirectory == nil
        configuration.dataDirectory = self.dataDirectory
        configuration.server.host = "127.0.0.1"
        configuration.server.httpPort = 0
        configuration.server.httpsPort = nil
        configuration.server.loops = 2
        (configuration.tls.certificate, configuration.tls.privateKey) = testTLSServer
        // `./harness test` runs these tests a second time with the roles calling each other over HTTP.
        if let calls = ProcessInfo.processInfo.environment["THREEDS_HARNESS_TEST_ROLE_CALLS"] { configuration.server.roleCalls = RoleCalls(rawValue: calls) ?? .inProcess }
        configure(&configuration)
        app = try HarnessApp(configuration: configuration, baseDirectory: repositoryRoot, logger: silentLogger, clock: clock)
        try app.start()
        baseURL = app.endpoints.baseURL
        var inProcess: InProcessCalls?
        if transport == .router {
            inProcess = InProcessCalls()
            inProcess?.serve(app.server, at: [(baseURL, false)])
        }
        client = try HTTPClient(group: clientGroup, inProcess: inProcess)
    }

    func stop() {
        app.shutdown()
        clientGroup.shutdown()
        if ownsDataDirectory { try? FileManager.default.removeItem(atPath: dataDirectory) }
    }

    /// ``stop()`` on a thread of its own: it waits for the server to drain and the loops to join, and a wait on one of the
    /// concurrency pool's two threads stalls every test running beside it.
    func stopOffThePool() async {
        _ = try? await offThePool { [self] in stop() }
    }

    var simulator: Simulator { Simulator(client: client, baseURL: baseURL) }

    /// An SDK's challenge side, configured with every DS CA root of the test PKI.
    var challenger: ChallengeRunner { challenger(misbehaving: nil) }

    /// The same, getting `misbehaviour` wrong on purpose; over `client` when given (an SDK with a timeout of its own, or
    /// many idle waits kept off the harness's client).
    func challenger(misbehaving misbehaviour: ChallengeRunner.Misbehaviour?, client: HTTPClient? = nil) -> ChallengeRunner {
        ChallengeRunner(client: client ?? self.client, trustAnchors: app.configuration.directoryServers.compactMap { try? pki.rootCertificate($0.rid) },
                        misbehaviour: misbehaviour)
    }

    /// The checks (id, verdict) of the journal entry of the transaction `record` (a 3DS Server's, by its dsTransID).
    func checks(of record: JSONValue) async throws -> [(id: String, verdict: String)] {
        guard let dsTransID = (record["dsTransID"] ?? record["erro"]?["dsTransID"])?.stringValue else { return [] }
        let entry = try JSONReader.parse(try await get("/inspector/transactions/\(dsTransID)").body).value
        return (entry["checks"]?.arrayValue ?? []).map { ($0["id"]?.stringValue ?? "", $0["verdict"]?.stringValue ?? "") }
    }

    /// The verdict of check `id` of the transaction `record`; nil when it was not made.
    func check(_ id: String, of record: JSONValue) async throws -> String? {
        try await checks(of: record).first { $0.id == id }?.verdict
    }

    /// Run `id` once no case is under way (synchronised on its state, polled), or null and an issue after `limit`.
    func settledRun(_ id: String, within limit: Duration) async throws -> JSONValue {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let run = try JSONReader.parse(try await get("/admin/runs/\(id)").body).value
            if run["summary"]?["running"]?.numberText == "0" { return run }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("run \(id) still had cases under way after \(limit)")
        return .null
    }

    /// Posts raw bytes to a path of the harness.
    func post(_ path: String, _ body: [UInt8], contentType: String = "application/json") async throws -> HTTPResponse {
        try await client.post(baseURL + path, body: body, contentType: contentType)
    }

    /// Posts an EMV message and parses the answer.
    func postMessage(_ path: String, _ message: JSONValue) async throws -> JSONValue {
        let response = try await post(path, JSONWriter.write(message))
        return try JSONReader.parse(response.body).value
    }

    func get(_ path: String) async throws -> HTTPResponse { try await client.get(baseURL + path) }

    /// Each check of a transaction's journal entry by id: its verdict and detail, a failure winning over a pass.
    func checkVerdicts(_ dsTransID: String) async throws -> [String: (verdict: String, detail: String)] {
        let entry = try JSONReader.parse(try await get("/inspector/transactions/\(dsTransID)").body).value
        var found: [String: (verdict: String, detail: String)] = [:]
        for check in entry["checks"]?.arrayValue ?? [] {
            guard let id = check["id"]?.stringValue, found[id]?.verdict != "fail" else { continue }
            found[id] = (check["verdict"]?.stringValue ?? "", check["detail"]?.stringValue ?? "")
        }
        return found
    }
}

/// Runs `body` against a fresh harness and stops it, also when `body` throws.
func withHarness(dataDirectory: String? = nil, configure: (inout HarnessConfiguration) -> Void = { _ in },
                 clock: HarnessClock = .system, transport: TestTransport = .default,
                 _ body: (RunningHarness) async throws -> Void) async throws {
    let harness = try RunningHarness(dataDirectory: dataDirectory, configure: configure, clock: clock, transport: transport)
    do { try await body(harness) } catch {
        await harness.stopOffThePool()
        throw error
    }
    await harness.stopOffThePool()
}

let pki = TestPKI(directory: repositoryRoot + "/certs")

/// The Directory Server an SDK is configured with for `rid` and the key type of `style`.
func directoryServer(_ rid: String, _ style: DeviceDataStyle) throws -> SDKSimulator.SDKDirectoryServer {
    SDKSimulator.SDKDirectoryServer(rid: rid, certificate: try pki.dsCertificate(rid, style.keyVariant),
                                              keyID: TestPKI.dsKeyID(rid, style.keyVariant))
}

/// A complete app-channel AReq as a 3DS Server sends it to the DS, with real device data.
func appAReq(pan: String = "4000000000001000", version: MessageVersion = .v2_2_0, style: DeviceDataStyle = .android,
             rid: String = "A000000003", encryption: ContentEncryptionAlgorithm = .a128cbcHS256, sdk given: SimulatedSDKTransaction? = nil,
             replacing changes: [String: JSONValue?] = [:]) throws -> JSONValue {
    let sdk = try given ?? SimulatedSDKTransaction(directoryServer: directoryServer(rid, style), messageVersion: version, style: style, encryption: encryption)
    var areq: JSONValue = .object([
        ("messageType", .string("AReq")), ("messageVersion", .string(version.rawValue)), ("messageCategory", .string("01")),
        ("deviceChannel", .string("01")), ("threeDSServerTransID", .string(UUID().uuidString.lowercased())),
        ("threeDSServerRefNumber", .string("3DS_LOA_SER_PEER_020200_00001")), ("threeDSServerURL", .string("http://127.0.0.1:9/rreq")),
        ("threeDSRequestorID", .string("peer-requestor")), ("threeDSRequestorName", .string("Peer Shop")),
        ("threeDSRequestorURL", .string("https://shop.example")), ("threeDSRequestorAuthenticationInd", .string("01")),
        ("acctNumber", .string(pan)), ("cardExpiryDate", .string("3012")),
        ("acquirerBIN", .string("400551")), ("acquirerMerchantID", .string("merchant-1")), ("mcc", .string("5411")),
        ("merchantCountryCode", .string("840")), ("merchantName", .string("Peer Shop")),
        ("purchaseAmount", .string("1099")), ("purchaseCurrency", .string("978")), ("purchaseExponent", .string("2")),
        ("purchaseDate", .string("20261121120000")),
        ("sdkAppID", .string(sdk.sdkAppID)), ("sdkTransID", .string(sdk.sdkTransID)),
        ("sdkReferenceNumber", .string(SimulatedSDKTransaction.sdkReferenceNumber)), ("sdkMaxTimeout", .string("05")),
        ("sdkEphemPubKey", sdk.ephemeralPublicKeyJSON),
        ("deviceRenderOptions", .object([("sdkInterface", .string("03")), ("sdkUiType", .array([.string("01")]))])),
        ("sdkEncData", .string(sdk.deviceData)),
    ])
    if version == .v2_3_1 {
        for (key, value) in [("acquirerCountryCode", JSONValue.string("840")), ("acquirerCountryCodeSource", .string("01")),
                             ("sdkType", .string("01")), ("defaultSdkType", .object([("sdkVariant", .string("01"))]))] {
            areq.set(key, value)
        }
    }
    for (key, value) in changes { areq.set(key, value) }
    return areq
}

/// A stand-in that keeps every AReq it receives at `path` and answers a frictionless Y: an ACS
/// (the default), or a DS with the routes a test adds (its PReq's answer).
final class AReqRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [JSONValue] = []
    private let group = EventLoopGroup(loopCount: 1)
    private var server: HTTPServer!
    var port: Int { server.httpPort ?? 0 }

    init(path: String = "/acs/areq", routes: (inout Router) -> Void = { _ in }) {
        var router = Router()
        routes(&router)
        router.post(path) { [unowned self] request, _ in
            let areq = try JSONReader.parse(request.body).value
            lock.withLock { messages.append(areq) }
            // An AReq to a DS carries no DS ids yet: the stand-in makes its own.
            var ares = ARes(messageVersion: MessageVersion(rawValue: areq["messageVersion"]?.stringValue ?? "") ?? .v2_2_0,
                            threeDSServerTransID: areq["threeDSServerTransID"]?.stringValue ?? "", acsTransID: UUID().uuidString.lowercased(),
                            dsTransID: areq["dsTransID"]?.stringValue ?? UUID().uuidString.lowercased(), sdkTransID: areq["sdkTransID"]?.stringValue,
                            acsReferenceNumber: "RECORDER", dsReferenceNumber: areq["dsReferenceNumber"]?.stringValue ?? "RECORDER-DS",
                            transStatus: .authenticated)
            ares.authenticationValue = "AAABBBCCCDDDEEEFFFGGGHHHIII="
            ares.eci = "05"
            return HTTPResponse(headers: ["Content-Type": "application/json"], body: JSONWriter.write(ares.json))
        }
        // The server outlives init only through `self`; started here so the port is known.
        server = try? HTTPServer(configuration: ServerConfiguration(host: "127.0.0.1", httpPort: 0, httpsPort: nil, tls: nil),
                                 router: router, group: group, logger: silentLogger)
        try? server.start()
    }

    var received: [JSONValue] { lock.withLock { messages } }

    func stop() {
        server.shutdown()
        group.shutdown()
    }
}

let silentLogger: Logger = {
    var logger = Logger(label: "test")
    logger.logLevel = .critical
    return logger
}()

/// A JSON object's bytes as base64url with the `=` padding a sender that pads writes: a space goes after its opening
/// brace where its length would need none, so the padding is always there.
func paddedBase64URL(ofJSON bytes: [UInt8]) -> String {
    var bytes = bytes
    if bytes.count % 3 == 0 { bytes.insert(UInt8(ascii: " "), at: 1) }
    return Base64URL.encode(bytes) + String(repeating: "=", count: 3 - bytes.count % 3)
}
