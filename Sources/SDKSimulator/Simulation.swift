public import EMV3DS
import EMVCrypto
import Foundation
import Messaging
public import JOSE
public import JSON
public import Net

/// What a simulated transaction ended with, as the app would see it.
public struct SimulationResult: Sendable {
    /// The 3DS Server's record: state, transStatus, ids, message trail.
    public let record: JSONValue

    public init(record: JSONValue) { self.record = record }

    public var state: String? { record["state"]?.stringValue }
    public var transStatus: String? { record["transStatus"]?.stringValue }
    public var transStatusReason: String? { record["transStatusReason"]?.stringValue }
    public var eci: String? { record["eci"]?.stringValue }
    public var authenticationValue: String? { record["authenticationValue"]?.stringValue }
    public var threeDSServerTransID: String? { record["threeDSServerTransID"]?.stringValue }

    /// The record's messages of one type that went one way ("sent" or "received"), in order.
    public func messages(_ direction: String, _ type: String) -> [JSONValue] {
        (record["messages"]?.arrayValue ?? []).filter { $0["direction"]?.stringValue == direction && $0["message"]?["messageType"]?.stringValue == type }
            .compactMap { $0["message"] }
    }

    /// Whether the 3DS Server sent an Erro: while it awaits a result, about the RReq, the one message it answers then. The
    /// result that RReq carried is never taken, and no other follows (an ACS retries an RReq nobody answered, not one
    /// refused).
    public var sentAnErro: Bool { record["erroSent"] != nil }

    /// The AReq the 3DS Server sent.
    public var sentAReq: JSONValue? { messages("sent", "AReq").first }

    /// One line: "Y eci 05" or "error: Erro 302 ...".
    public var summary: String {
        if state == "error" { return "error: \(record["error"]?.stringValue ?? "unknown")" }
        var parts = [transStatus ?? "?"]
        if let transStatusReason { parts.append("reason \(transStatusReason)") }
        if let eci { parts.append("eci \(eci)") }
        if let authenticationValue { parts.append("authenticationValue \(authenticationValue)") }
        return parts.joined(separator: " ")
    }
}

/// One transaction end to end: what authentication answered, the challenge as the SDK ran
/// it (when there was one), and the 3DS Server's record at the end.
public struct TransactionRun: Sendable {
    public let authentication: SimulationResult
    public let challenge: ChallengeRunner.Report?
    public let final: SimulationResult
    /// Whose challenge it was: the SDK's, or the cardholder's browser's.
    public var channel = DeviceChannel.app

    /// One line: the SDK's (or browser's) outcome, then the final record's.
    public var summary: String {
        var parts: [String] = []
        if let challenge { parts.append("\(channel == .browser ? "browser" : "SDK") \(challenge.outcome)") }
        parts.append("3DS Server \(final.state ?? "?"): \(final.summary)")
        return parts.joined(separator: "; ")
    }
}

/// Why a simulation could not run.
public enum SimulationError: Error, CustomStringConvertible {
    case unreachable(String)
    case refused(status: Int, String)
    case unreadable(String)
    /// An integration profile answered other than the transaction's record says.
    case profileDisagrees(IntegrationProfile, String)

    public var description: String {
        switch self {
        case .unreachable(let reason): "harness unreachable: \(reason)"
        case .refused(let status, let body): "harness answered HTTP \(status): \(body)"
        case .unreadable(let reason): "unreadable answer: \(reason)"
        case .profileDisagrees(let profile, let reason): "the \(profile) profile's answer disagrees with the 3DS Server's record: \(reason)"
        }
    }
}

/// Drives transactions through a harness's 3DS Server API the way an app with an SDK does.
public struct Simulator: Sendable {
    public let client: HTTPClient
    /// The harness, e.g. "http://127.0.0.1:8080".
    public let baseURL: String
    /// The backend contract the app talks through.
    public let profile: IntegrationProfile
    /// The test run case the transactions are for (`RUN/CASE`), sent as `X-Harness-Case` so the
    /// harness attaches them to it; nil leaves that to the scenario.
    public var harnessCase: String?
    /// What a browser run does about Secure Payment Confirmation (2.3.1); nil: a browser without it.
    public var spc: SPCPlay?
    /// The server of a Split-SDK (2.3.1) for a DS id: an app transaction at 2.3.1 is then a Split-SDK's; nil: a default SDK.
    public var splitSDK: (@Sendable (_ rid: String) -> SplitSDKServer?)?

    public init(client: HTTPClient, baseURL: String, profile: IntegrationProfile = .server) {
        self.client = client
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.profile = profile
    }

    /// `X-Harness-Case` when a case is named.
    var caseHeaders: HTTPHeaders { harnessCase.map { [HarnessCaseHeader.name: $0] } ?? [:] }

    /// Runs one frictionless authentication: the SDK's parameters to the 3DS Server, the outcome back.
    public func authenticate(_ transaction: SimulatedSDKTransaction, pan: String) async throws(SimulationError) -> SimulationResult {
        let body = JSONWriter.write(transaction.authenticateRequest(pan: pan))
        let response: HTTPResponse
        do { response = try await client.post(baseURL + "/3ds-server/authenticate", body: body, headers: caseHeaders) } catch {
            throw .unreachable("\(error)")
        }
        // 502 carries the record of a transaction the DS failed: that is a result, not a refusal.
        guard response.status.code == 200 || response.status.code == 502 else {
            throw .refused(status: response.status.code, response.bodyText)
        }
        do { return SimulationResult(record: try JSONReader.parse(response.body).value) } catch {
            throw .unreadable(error.description)
        }
    }

    /// A transaction's record as it is now (`GET /3ds-server/transactions/{id}`).
    public func record(_ threeDSServerTransID: String) async throws(SimulationError) -> SimulationResult {
        let response: HTTPResponse
        do { response = try await client.get(baseURL + "/3ds-server/transactions/" + threeDSServerTransID) } catch { throw .unreachable("\(error)") }
        guard response.status.code == 200 else { throw .refused(status: response.status.code, response.bodyText) }
        do { return SimulationResult(record: try JSONReader.parse(response.body).value) } catch { throw .unreadable(error.description) }
    }

    /// Waits until the 3DS Server has the result of a challenge or decoupled authentication
    /// (its RReq), or has refused the RReq, or `limit` passes; returns the record as it is then.
    public func awaitResult(_ threeDSServerTransID: String, limit: Duration = .seconds(30)) async throws(SimulationError) -> SimulationResult {
        let deadline = ContinuousClock.now + limit
        while true {
            let result = try await record(threeDSServerTransID)
            // A decoupled fallback (2.3.1) ends by the RReq of the 3RI authentication that follows.
            if !["challenge", "decoupledFallback"].contains(result.state) || result.sentAnErro || ContinuousClock.now >= deadline {
                return result
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Runs one transaction as an app with an SDK does: authentication, then the challenge
    /// with `answers` if the ACS asks for one, then the 3DS Server's final record.
    public func run(_ transaction: SimulatedSDKTransaction, pan: String, answers: ChallengeAnswers, challenger: ChallengeRunner,
                    style: ChannelStyle, encryption: ContentEncryptionAlgorithm = .a128cbcHS256,
                    resultWait: Duration = .seconds(30)) async throws(SimulationError) -> TransactionRun {
        switch profile {
        case .server: break
        case .emvco:
            return try await runEMVCo(transaction, pan: pan, answers: answers, challenger: challenger, style: style, encryption: encryption,
                                      resultWait: resultWait)
        case .token, .tokenClassic:
            return try await runToken(transaction, pan: pan, answers: answers, challenger: challenger, style: style, encryption: encryption,
                                      resultWait: resultWait)
        }
        let authentication = try await authenticate(transaction, pan: pan)
        guard authentication.state == "challenge", let id = authentication.threeDSServerTransID else {
            return TransactionRun(authentication: authentication, challenge: nil, final: authentication)
        }
        guard authentication.transStatus == TransStatus.challenge.rawValue else {
            // Decoupled: the result comes by RReq, later.
            return TransactionRun(authentication: authentication, challenge: nil, final: try await awaitResult(id, limit: resultWait))
        }
        guard let parameters = ChallengeParameters(record: authentication.record) else { throw .unreadable("no challenge parameters in the record") }
        let report = await challenger.run(transaction, parameters: parameters, answers: answers, style: style, encryption: encryption)
        return TransactionRun(authentication: authentication, challenge: report, final: try await record(id, after: report, limit: resultWait))
    }

    /// The record once a challenge ended as `report` says, waiting at most `limit` for a result due.
    func record(_ id: String, after report: ChallengeRunner.Report, limit: Duration) async throws(SimulationError) -> SimulationResult {
        switch report.outcome {
        case .completed(.decoupled):
            // A decoupled fallback (2.3.1): the 3DS Server's 3RI authentication brings the result after the final CRes.
            try await awaitResult(id)
        case .completed, .cancelled:
            // The ACS sends the RReq before the final CRes, unless its first attempt failed and it is retrying: the
            // first read is the result but for that.
            try await awaitResult(id, limit: limit)
        case .runtimeError:
            // There is no result to wait for.
            try await record(id)
        case .protocolError where report.erroSent == nil:
            // No Erro of the SDK's brings an RReq: the ACS's Erro in place of a CRes, which the SDK does not answer, or the
            // ACS's refusal of a CReq, whose RReq it sends before answering.
            try await record(id)
        case .protocolError, .timedOut:
            // An Erro either way ends the transaction; its RReq follows shortly.
            try await awaitResult(id, limit: .seconds(5))
        }
    }

    /// What an admin request carries: a harness off loopback asks for its admin token, the one in the environment as
    /// `serve` reads it.
    var adminHeaders: HTTPHeaders {
        var headers = HTTPHeaders()
        if let token = ProcessInfo.processInfo.environment["THREEDS_HARNESS_ADMIN_TOKEN"], !token.isEmpty {
            headers.set("Authorization", "Bearer \(token)")
        }
        return headers
    }

    /// The harness's scenarios (`GET /admin/scenarios`).
    /// `negative`: the negative cases generated from the field tables (`GET /admin/scenarios/negative`) instead.
    public func scenarios(negative: Bool = false) async throws(SimulationError) -> [JSONValue] {
        let response: HTTPResponse
        do { response = try await client.get(baseURL + (negative ? "/admin/scenarios/negative" : "/admin/scenarios"), headers: adminHeaders) } catch {
            throw .unreachable("\(error)")
        }
        guard response.status.code == 200 else { throw .refused(status: response.status.code, response.bodyText) }
        guard case .array(let list)? = (try? JSONReader.parse(response.body).value)?["scenarios"] else {
            throw .unreadable("no scenarios array")
        }
        return list
    }
}
