import EMV3DS
import JSON
import Messaging
import Net
import Store

/// The backend contract of SDKs built on the EMVCo SDK API (Netcetera, GPayments ActiveSDK,
/// Ravelin): the app posts the SDK's `AuthenticationRequestParameters` and gets back the
/// `ChallengeParameters` the SDK's `doChallenge` takes, the ARes whole (ActiveSDK's
/// `ThreeDSServerAuthResponse`), and, after the challenge, the result with the liability
/// fields card processors answer (Braintree's `liabilityShiftPossible`, `liabilityShifted`).
///
/// - `POST /profiles/emvco/authenticate`: the parameters as the SDK API names them
///   (`sdkTransactionID`, `deviceData`, `sdkEphemeralPublicKey`, `sdkAppID`,
///   `sdkReferenceNumber`, `messageVersion`), flat or under `authenticationRequestParameters`,
///   with `acctNumber` and any purchase fields of `/3ds-server/authenticate`.
/// - `GET /profiles/emvco/result/{threeDSServerTransID}`: the final outcome.
///
/// Errors are `{"errorCode", "errorDescription", "errorDetail"}` with the HTTP status as the code.
struct EMVCoProfile {
    let server: ThreeDSServer

    func register(on router: inout Router) {
        router.post("/profiles/emvco/authenticate") { request, _ async in
            do throws(HTTPError) { return try await authenticate(request) } catch { return Self.failure(error) }
        }
        router.get("/profiles/emvco/result/{id}", tag: server.transaction(.pathParameter("id"))) { _, context in
            do throws(HTTPError) {
                let id: String
                do { id = try context.parameter("id") } catch { throw HTTPError(.badRequest, "the path names no transaction") }
                guard let transaction = server.transactions.get(id) else {
                    throw HTTPError(.notFound, "no transaction \(id) (the threeDSServerTransID of an authentication)")
                }
                return .emv(Self.result(of: transaction))
            } catch { return Self.failure(error) }
        }
    }

    private func authenticate(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        guard request.headers.mediaType == "application/json" else {
            throw HTTPError(.unsupportedMediaType, "expected Content-Type application/json, got \(request.headers["Content-Type"] ?? "none")")
        }
        let json = try request.jsonBody()
        guard var members = json.objectMembers else { throw HTTPError(.badRequest, "body must be a JSON object") }
        if let nested = json["authenticationRequestParameters"] {
            guard let parameters = nested.objectMembers else { throw HTTPError(.badRequest, "authenticationRequestParameters must be an object") }
            members.removeAll { $0.key == "authenticationRequestParameters" }
            members = parameters + members
        }
        var input = try AuthenticationRequest(json: .object(members))
        input.tags = try request.harnessTags()
        let (transaction, status) = try await server.authenticate(input)
        guard status == .ok else {
            // The transaction exists (its trail says what went wrong): the error names it.
            return Self.failure(HTTPError(status, transaction.error ?? "no usable answer from the DS"), threeDSServerTransID: transaction.threeDSServerTransID)
        }
        return .emv(Self.outcome(of: transaction, requestorAppURL: json["threeDSRequestorAppURL"]?.stringValue
                                    ?? json["authenticationRequestParameters"]?["threeDSRequestorAppURL"]?.stringValue))
    }

    /// The answer to the app: the outcome, the `ChallengeParameters` when the ACS wants a
    /// challenge, the ARes as received, and the Erro when the DS sent one instead.
    static func outcome(of transaction: ThreeDSServer.Transaction, requestorAppURL: String?) -> JSONValue {
        let ares = transaction.receivedARes
        let challenge: JSONValue? = transaction.aresOutcome?.transStatus == .challenge ? .object(omittingAbsent: [
            ("threeDSServerTransactionID", .string(transaction.threeDSServerTransID)),
            ("acsTransactionID", .string(transaction.ids.acsTransID)),
            ("acsRefNumber", .string(ares?["acsReferenceNumber"]?.stringValue)),
            ("acsSignedContent", .string(ares?["acsSignedContent"]?.stringValue)),
            ("threeDSRequestorAppURL", .string(requestorAppURL)),
        ]) : nil
        var members = resultMembers(of: transaction)
        members += [("challengeRequired", .bool(challenge != nil)), ("challengeParameters", challenge), ("ares", ares),
                    ("erro", transaction.erro?.json), ("resultPath", .string("/profiles/emvco/result/\(transaction.threeDSServerTransID)"))]
        return .object(omittingAbsent: members)
    }

    static func result(of transaction: ThreeDSServer.Transaction) -> JSONValue { .object(omittingAbsent: resultMembers(of: transaction)) }

    /// The outcome as card processors report it: the final transStatus (the RReq's after a
    /// challenge), ECI and authentication value (`cavv`), and liability: possible when the
    /// ACS took part (ARes Y, A, C or D), shifted when the final status is Y or A.
    private static func resultMembers(of transaction: ThreeDSServer.Transaction) -> [(String, JSONValue?)] {
        let final = transaction.finalOutcome
        let possible = transaction.aresOutcome.map { [.authenticated, .attempted, .challenge, .decoupled].contains($0.transStatus) } ?? false
        let shifted = final.map { [.authenticated, .attempted].contains($0.transStatus) } ?? false
        return [
            ("threeDSServerTransID", .string(transaction.threeDSServerTransID)),
            ("state", .string(transaction.state.rawValue)),
            ("error", .string(transaction.error)),
            ("messageVersion", .string(transaction.messageVersion.rawValue)),
            ("transStatus", .string(final?.transStatus.rawValue)),
            ("transStatusReason", .string(final?.transStatusReason)),
            ("eci", .string(final?.eci)),
            ("authenticationValue", .string(final?.authenticationValue)),
            ("cavv", .string(final?.authenticationValue)),
            ("challengeCancel", .string(transaction.rreqOutcome?.challengeCancel)),
            ("liabilityShiftPossible", .bool(possible)),
            ("liabilityShifted", .bool(shifted)),
            ("dsTransID", .string(transaction.ids.dsTransID)),
            ("acsTransID", .string(transaction.ids.acsTransID)),
            ("sdkTransID", .string(transaction.ids.sdkTransID)),
        ]
    }

    static func failure(_ error: HTTPError, threeDSServerTransID: String? = nil) -> HTTPResponse {
        .emv(.object(omittingAbsent: [("errorCode", .string(String(error.status.code))), ("errorDescription", .string(error.status.reason)),
                                      ("errorDetail", .string(error.message)), ("threeDSServerTransID", .string(threeDSServerTransID))]),
             status: error.status)
    }
}
