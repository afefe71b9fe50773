import EMV3DS
import EMVCrypto
import Foundation
import JOSE
import JSON
import Net

/// The backend contract an app talks through: the harness's own requestor API or one of its
/// integration profiles (docs/profiles.md).
public enum IntegrationProfile: String, Sendable, CaseIterable {
    /// `POST /3ds-server/authenticate`, then the transaction record.
    case server
    /// The EMVCo SDK API's shape: `POST /profiles/emvco/authenticate`, then its result.
    case emvco
    /// Adyen's token style as its components run it today: `/profiles/token/payments`, the
    /// component's own `v1/submitThreeDS2Fingerprint`, then `/payments/details` with the result.
    case token
    /// The token style's classic flow: `/payments/details` after the fingerprint and after the challenge.
    case tokenClassic = "token-classic"
}

extension Simulator {
    // MARK: EMVCo SDK API

    /// The app posts the SDK's `AuthenticationRequestParameters` under the SDK API's names and
    /// gives the SDK the `ChallengeParameters` the profile answers; after the challenge it asks
    /// for the result. The 3DS Server's record decides; the profile's answers must agree with it.
    func runEMVCo(_ transaction: SimulatedSDKTransaction, pan: String, answers: ChallengeAnswers, challenger: ChallengeRunner,
                  style: ChannelStyle, encryption: ContentEncryptionAlgorithm, resultWait: Duration) async throws(SimulationError) -> TransactionRun {
        var body = transaction.authenticateRequest(pan: pan).objectMembers ?? []
        let sdkNames = ["messageVersion", "sdkTransID", "sdkAppID", "sdkReferenceNumber", "sdkEphemPubKey", "deviceData"]
        body.removeAll { sdkNames.contains($0.key) }
        body.insert(("authenticationRequestParameters", .object([
            ("sdkTransactionID", .string(transaction.sdkTransID)),
            ("deviceData", .string(transaction.deviceData)),
            ("sdkEphemeralPublicKey", .string(JSONWriter.string(transaction.ephemeralPublicKeyJSON))),
            ("sdkAppID", .string(transaction.sdkAppID)),
            ("sdkReferenceNumber", .string(SimulatedSDKTransaction.sdkReferenceNumber)),
            ("messageVersion", .string(transaction.messageVersion.rawValue)),
        ])), at: 0)
        body.append(("threeDSRequestorAppURL", .string("https://merchant.example/app")))
        let (status, answer) = try await post("/profiles/emvco/authenticate", .object(body), accepting: [200, 502])
        guard let id = answer["threeDSServerTransID"]?.stringValue else { throw .unreadable("no threeDSServerTransID in \(JSONWriter.string(answer))") }
        if status == 502 {
            let final = try await record(id)
            return TransactionRun(authentication: final, challenge: nil, final: final)
        }
        let authentication = SimulationResult(record: answer)
        var report: ChallengeRunner.Report?
        let final: SimulationResult
        switch answer["transStatus"]?.stringValue {
        case TransStatus.challenge.rawValue?:
            let challenge = answer["challengeParameters"]
            guard answer["challengeRequired"] == .bool(true), let server = challenge?["threeDSServerTransactionID"]?.stringValue,
                  let acs = challenge?["acsTransactionID"]?.stringValue, let signed = challenge?["acsSignedContent"]?.stringValue,
                  challenge?["acsRefNumber"]?.stringValue != nil else {
                throw .profileDisagrees(.emvco, "an ARes C without complete challengeParameters: \(JSONWriter.string(answer))")
            }
            let ran = await challenger.run(transaction, parameters: ChallengeParameters(threeDSServerTransID: server, acsTransID: acs, acsSignedContent: signed),
                                           answers: answers, style: style, encryption: encryption)
            report = ran
            final = try await record(id, after: ran, limit: resultWait)
        case TransStatus.decoupled.rawValue?:
            final = try await awaitResult(id, limit: resultWait)
        default:
            final = try await record(id)
        }
        // What the app's backend reads last must be what the 3DS Server ended with.
        let resultPath = answer["resultPath"]?.stringValue ?? "/profiles/emvco/result/\(id)"
        let agreed = try await agreement(.emvco, id: id, final: final, ask: { () async throws(SimulationError) in try await get(resultPath).1 }) { result, final in
            ["state", "transStatus", "eci", "authenticationValue"].first { result[$0] != final.record[$0] }.map { name in
                "the result's \(name) is \(result[name].map(JSONWriter.string) ?? "absent"), the record's \(final.record[name].map(JSONWriter.string) ?? "absent")"
            }
        }
        return TransactionRun(authentication: authentication, challenge: report, final: agreed.final)
    }

    /// The profile's last word about a transaction and its record must agree. The record may
    /// move on between the two reads (an RReq that comes late, after an Erro): a disagreement is
    /// asked once more, then it is the profile's.
    private func agreement(_ profile: IntegrationProfile, id: String, final: SimulationResult, first: JSONValue? = nil,
                           ask: () async throws(SimulationError) -> JSONValue,
                           disagreement: (JSONValue, SimulationResult) -> String?) async throws(SimulationError) -> (answer: JSONValue, final: SimulationResult) {
        let answer: JSONValue
        if let first { answer = first } else { answer = try await ask() }
        guard disagreement(answer, final) != nil else { return (answer, final) }
        let again = try await ask()
        let newest = try await record(id)
        if let problem = disagreement(again, newest) { throw .profileDisagrees(profile, problem) }
        return (again, newest)
    }

    // MARK: Token style

    /// The app posts the payment; the SDK is configured from the `fingerprintToken` (its DS key
    /// and id) and fingerprints; the component (compact flow) or the app's backend (classic)
    /// posts the result and gets the `challengeToken` the SDK challenges with or the outcome; the
    /// challenge result goes to `/payments/details`. Tokens are decoded as adyen-ios's
    /// `Coder.decodeBase64` does: standard, padded base64 of JSON.
    func runToken(_ transaction: SimulatedSDKTransaction, pan: String, answers: ChallengeAnswers, challenger: ChallengeRunner,
                  style: ChannelStyle, encryption: ContentEncryptionAlgorithm, resultWait: Duration) async throws(SimulationError) -> TransactionRun {
        let compact = profile == .token
        let (_, payment) = try await post("/profiles/token/payments", .object([
            ("amount", .object([("value", .number("1099")), ("currency", .string("EUR"))])),
            ("reference", .string("simulate-\(transaction.sdkTransID.prefix(8))")),
            ("paymentMethod", .object([("type", .string("scheme")), ("number", .string(pan)),
                                       ("expiryMonth", .string("12")), ("expiryYear", .string("2030"))])),
            ("channel", .string(transaction.style == .android ? "Android" : "iOS")),
            ("threeDS2RequestData", .object([("messageVersion", .string(transaction.messageVersion.rawValue))])),
            ("dsKeyType", .string(transaction.style == .rsa ? "RSA" : "EC")),
            ("threeDS2Flow", .string(compact ? "compact" : "classic")),
        ]), accepting: [200])
        let fingerprintAction = try Self.tokenAction(payment, step: "fingerprint", compact: compact)
        let token = try Self.decodeStandardBase64JSON(fingerprintAction.token, name: "fingerprintToken")
        guard let rid = token["directoryServerId"]?.stringValue, let keyText = token["directoryServerPublicKey"]?.stringValue,
              let id = token["threeDSServerTransID"]?.stringValue, token["threeDSMessageVersion"]?.stringValue == transaction.messageVersion.rawValue,
              let keyJSON = Data(base64Encoded: keyText), let jwk = try? JWK(json: keyJSON), let key = try? PublicKey(jwk: jwk),
              let roots = token["directoryServerRootCertificates"]?.stringValue, (try? JWS(compact: roots)) != nil else {
            throw .profileDisagrees(profile, "a fingerprintToken without a usable DS id, key, root list, version or transaction id: \(JSONWriter.string(token))")
        }
        // The SDK as the token configures it: the device data goes to the token's key.
        let sdk: SimulatedSDKTransaction
        do {
            sdk = try SimulatedSDKTransaction(directoryServer: SDKDirectoryServer(rid: rid, publicKey: key, keyID: jwk.kid),
                                              messageVersion: transaction.messageVersion, style: transaction.style, encryption: encryption)
        } catch { throw .unreadable("cannot encrypt to the fingerprintToken's key: \(error)") }
        let fingerprint = Data(JSONWriter.write(.object([
            ("sdkAppID", .string(sdk.sdkAppID)), ("sdkEncData", .string(sdk.deviceData)), ("sdkEphemPubKey", sdk.ephemeralPublicKeyJSON),
            ("sdkReferenceNumber", .string(SimulatedSDKTransaction.sdkReferenceNumber)), ("sdkTransID", .string(sdk.sdkTransID)),
        ]))).base64EncodedString()

        // After the fingerprint: the challenge action, or (compact) the result to hand the backend, or (classic) the outcome.
        var afterFingerprint: JSONValue
        if compact {
            let (_, submitted) = try await post("/profiles/token/v1/submitThreeDS2Fingerprint", .object([
                ("fingerprintResult", .string(fingerprint)), ("paymentData", .string(fingerprintAction.paymentData)),
            ]), accepting: [200])
            if submitted["type"]?.stringValue == "action", let action = submitted["action"] {
                afterFingerprint = .object([("resultCode", .string("ChallengeShopper")), ("action", action)])
            } else if let result = submitted["details"]?["threeDSResult"]?.stringValue {
                (_, afterFingerprint) = try await post("/profiles/token/payments/details", .object([("details", .object([("threeDSResult", .string(result))]))]),
                                                       accepting: [200])
            } else {
                throw .profileDisagrees(profile, "submitThreeDS2Fingerprint answered neither an action nor a threeDSResult: \(JSONWriter.string(submitted))")
            }
        } else {
            (_, afterFingerprint) = try await post("/profiles/token/payments/details", .object([
                ("details", .object([("threeds2.fingerprint", .string(fingerprint))])), ("paymentData", .string(fingerprintAction.paymentData)),
            ]), accepting: [200])
        }
        var report: ChallengeRunner.Report?
        var last = afterFingerprint
        var final: SimulationResult
        let status = JSONValue.object([("details", .object([])), ("paymentData", .string(fingerprintAction.paymentData))])
        if afterFingerprint["resultCode"]?.stringValue == "ChallengeShopper" {
            let challengeAction = try Self.tokenAction(afterFingerprint, step: "challenge", compact: compact)
            let challenge = try Self.decodeStandardBase64JSON(challengeAction.token, name: "challengeToken")
            guard let acs = challenge["acsTransID"]?.stringValue, let signed = challenge["acsSignedContent"]?.stringValue,
                  challenge["acsReferenceNumber"]?.stringValue != nil, challenge["threeDSServerTransID"]?.stringValue == id else {
                throw .profileDisagrees(profile, "a challengeToken without acsTransID, acsSignedContent, acsReferenceNumber or this transaction: \(JSONWriter.string(challenge))")
            }
            let ran = await challenger.run(sdk, parameters: ChallengeParameters(threeDSServerTransID: id, acsTransID: acs, acsSignedContent: signed),
                                           answers: answers, style: style, encryption: encryption)
            report = ran
            final = try await record(id, after: ran, limit: resultWait)
            let claimed: String = if case .completed(let status) = ran.outcome { status.rawValue } else { "U" }
            // As the components send it: compact, `threeDSResult` with the authorisationToken and no paymentData.
            let details: JSONValue = compact
                ? .object([("details", .object([("threeDSResult", .string(Data(JSONWriter.write(.object([
                    ("transStatus", .string(claimed)), ("authorisationToken", .string(challengeAction.authorisationToken ?? "")),
                  ]))).base64EncodedString()))]))])
                : .object([("details", .object([("threeds2.challengeResult", .string(Data(JSONWriter.write(.object([("transStatus", .string(claimed))]))).base64EncodedString()))])),
                           ("paymentData", .string(challengeAction.paymentData))])
            (_, last) = try await post("/profiles/token/payments/details", details, accepting: [200])
        } else if afterFingerprint["threeDS2Result"]?["transStatus"]?.stringValue == TransStatus.decoupled.rawValue {
            final = try await awaitResult(id, limit: resultWait)
            (_, last) = try await post("/profiles/token/payments/details", status, accepting: [200])
        } else {
            final = try await record(id)
        }
        // The last answer's outcome must be the record's.
        (last, final) = try await agreement(profile, id: id, final: final, first: last,
                                            ask: { () async throws(SimulationError) in try await post("/profiles/token/payments/details", status, accepting: [200]).1 }) { last, final in
            let reported = last["threeDS2Result"]?["transStatus"]?.stringValue
            if final.state == "error" {
                return last["resultCode"]?.stringValue == "Error" ? nil : "resultCode \(last["resultCode"]?.stringValue ?? "absent") for a transaction that ended in error"
            }
            return reported == final.transStatus ? nil : "threeDS2Result.transStatus \(reported ?? "absent"), the record's \(final.transStatus ?? "absent")"
        }
        return TransactionRun(authentication: SimulationResult(record: last), challenge: report, final: final)
    }

    /// The action of a token-style answer as the flow's client reads it: compact, `threeDS2` with
    /// `subtype` and `authorisationToken`; classic, `threeDS2Fingerprint` or `threeDS2Challenge`.
    private static func tokenAction(_ answer: JSONValue, step: String, compact: Bool) throws(SimulationError)
        -> (token: String, paymentData: String, authorisationToken: String?) {
        let action = answer["action"]
        let type = action?["type"]?.stringValue
        let matches = compact ? type == "threeDS2" && action?["subtype"]?.stringValue == step && action?["authorisationToken"] != nil
                              : type == (step == "fingerprint" ? "threeDS2Fingerprint" : "threeDS2Challenge")
        guard matches, let token = action?["token"]?.stringValue, let paymentData = action?["paymentData"]?.stringValue else {
            throw .profileDisagrees(compact ? .token : .tokenClassic, "no \(compact ? "compact" : "classic") \(step) action: \(JSONWriter.string(answer))")
        }
        return (token, paymentData, action?["authorisationToken"]?.stringValue)
    }

    /// Standard, padded base64 (not URL-safe) of a JSON object: a token as the client reads it.
    static func decodeStandardBase64JSON(_ text: String, name: String) throws(SimulationError) -> JSONValue {
        guard let bytes = Data(base64Encoded: text), let json = try? JSONReader.parse(Array(bytes)).value, json.objectMembers != nil else {
            throw .unreadable("the \(name) is not standard, padded base64 of a JSON object")
        }
        return json
    }

    // MARK: HTTP

    private func post(_ path: String, _ body: JSONValue, accepting codes: Set<Int>) async throws(SimulationError) -> (Int, JSONValue) {
        let response: HTTPResponse
        do { response = try await client.post(baseURL + path, body: JSONWriter.write(body), headers: caseHeaders) } catch { throw .unreachable("\(error)") }
        return try Self.read(response, accepting: codes)
    }

    private func get(_ path: String) async throws(SimulationError) -> (Int, JSONValue) {
        let response: HTTPResponse
        do { response = try await client.get(baseURL + path) } catch { throw .unreachable("\(error)") }
        return try Self.read(response, accepting: [200])
    }

    private static func read(_ response: HTTPResponse, accepting codes: Set<Int>) throws(SimulationError) -> (Int, JSONValue) {
        guard codes.contains(response.status.code) else { throw .refused(status: response.status.code, response.bodyText) }
        do { return (response.status.code, try JSONReader.parse(response.body).value) } catch { throw .unreadable(error.description) }
    }
}
