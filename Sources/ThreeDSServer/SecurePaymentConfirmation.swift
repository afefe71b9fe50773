import EMV3DS
import EMVCrypto
import EventLoops
import Foundation
import JSON
import Logging
import Messaging
import Net
import Store

/// Secure Payment Confirmation at the 3DS Server (EMV 3DS 2.3.1, browser; docs/spc.md): after an ARes S the transaction
/// shows `spc` (the `spcTransData` and `webAuthnCredList` the page passes to the browser's PaymentRequest), and the page
/// posts what came of it here. The 3DS Server then sends the second AReq: the first's data, naming the first
/// (`threeDSRequestorPriorAuthenticationInfo`, method 05, its acsTransID), with the assertion (`threeDSRequestorAuthenticationInfo`,
/// method 09) or `spcIncompInd`.
extension ThreeDSServer {
    public static let spcResultPath = "/3ds-server/transactions/{id}/spc"

    /// `spcIncompInd`: 01 SPC did not run or did not complete, 02 the cardholder cancelled, 03 it timed out (SB 279).
    static let spcIncompleteIndicators: Set<String> = ["01", "02", "03"]

    /// `{"assertion": PaymentResponse.details}` (the PublicKeyCredential, as toJSON() writes it), or `{"spcIncompInd": "02"}`.
    func spcResult(_ request: HTTPRequest, id: String) async throws(HTTPError) -> HTTPResponse {
        let body = try request.jsonBody()
        guard body.objectMembers != nil else { throw HTTPError(.badRequest, "body must be a JSON object: {\"assertion\": {...}} or {\"spcIncompInd\": \"01\"}") }
        let assertion = body["assertion"], incomplete = body["spcIncompInd"]?.stringValue
        switch (assertion, incomplete) {
        case (nil, nil), (.some, .some):
            throw HTTPError(.badRequest, "give exactly one of assertion (PaymentResponse.details) or spcIncompInd (01, 02 or 03)")
        case (nil, let indicator?) where !Self.spcIncompleteIndicators.contains(indicator):
            throw HTTPError(.badRequest, "spcIncompInd \"\(indicator)\" is not 01 (did not complete), 02 (cancelled) or 03 (timed out)")
        case (let value?, nil) where value.objectMembers == nil:
            throw HTTPError(.badRequest, "assertion must be the PublicKeyCredential as a JSON object (PaymentResponse.details.toJSON())")
        default: break
        }
        let (transaction, status) = try await sendSecondAReq(after: id, assertion: assertion, incomplete: incomplete)
        return HTTPResponse(status: status, headers: .json, body: transaction.archivedJSON)
    }

    /// The page did not post SPC's result within ``ThreeDSServerSettings/spcResultTimeout`` of the ARes S: the second AReq
    /// goes with spcIncompInd 03 and without the requestor's authentication information (SB 279 Req 454-455).
    func awaitSPCResult(_ id: String) {
        let timeout = settings.spcResultTimeout
        background.run { [self] in
            guard (try? await Task.sleep(for: .seconds(timeout))) != nil,
                  transactions.get(id).map({ $0.state == .spc && $0.spcFollowedBy == nil }) == true else { return }
            do throws(HTTPError) {
                _ = try await sendSecondAReq(after: id, assertion: nil, incomplete: "03", keepingOwnAuthentication: false)
            } catch {
                // The page's result came meanwhile, or the ACS's RReq N/14 ended it: nothing is due.
                logger.debug("no second AReq at the SPC time limit", metadata: ["threeDSServerTransID": "\(id)", "reason": "\(error.message)"])
            }
        }
    }

    /// Sends the second AReq after transaction `id`'s ARes S, once, with the first AReq's run case and team: whoever posts
    /// SPC's result (the requestor's page) may name neither.
    func sendSecondAReq(after id: String, assertion: JSONValue?, incomplete: String?,
                        keepingOwnAuthentication: Bool = true) async throws(HTTPError) -> (Transaction, HTTPStatus) {
        // Taken once: a result posted again finds the first transaction followed up.
        let taken = transactions.update(id) { first -> Result<(AReq, Transaction), HTTPError> in
            guard first.state == .spc else {
                let why = first.state == .completed ? "the ACS ended it by RReq (no second AReq in its time)"
                    : "its ARes was \(first.aresOutcome?.transStatus.rawValue ?? "none"), not S"
                return .failure(HTTPError(.conflict, "transaction \(id) awaits no SPC result: \(why)"))
            }
            if let second = first.spcFollowedBy { return .failure(HTTPError(.conflict, "transaction \(id)'s SPC result was sent already, in the AReq of \(second)")) }
            guard let areq = first.sentAReq, let acsTransID = first.ids.acsTransID else {
                return .failure(HTTPError(.conflict, "transaction \(id) has no AReq or acsTransID to follow up"))
            }
            let second = secondAReq(after: areq, acsTransID: acsTransID, assertion: assertion, incomplete: incomplete, version: first.messageVersion,
                                    keepingOwnAuthentication: keepingOwnAuthentication)
            first.spcFollowedBy = second.threeDSServerTransID
            return .success((second, first))
        }
        guard let taken else { throw HTTPError(.notFound, "no transaction \(id)") }
        let (second, first) = try taken.get()
        // A second AReq that did not get through (refused here, or no usable answer from the DS) leaves the result to be sent again.
        let (transaction, status): (Transaction, HTTPStatus)
        do { (transaction, status) = try await send(second, browserOptions: first.browserOptions, tags: first.tags) } catch {
            transactions.update(id) { $0.spcFollowedBy = nil }
            throw error
        }
        if status != .ok { transactions.update(id) { $0.spcFollowedBy = nil } }
        return (transaction, status)
    }

    /// The second AReq: the first's members under a new threeDSServerTransID, naming the first and carrying SPC's result.
    /// What the requestor gave of its own prior and current authentication stays; SPC's entries go last (2.3.1 takes 1-3).
    /// `keepingOwnAuthentication`: false at the 3DS Server's time limit, whose second AReq goes without it (Req 455).
    func secondAReq(after first: JSONValue, acsTransID: String, assertion: JSONValue?, incomplete: String?, version: MessageVersion,
                    keepingOwnAuthentication: Bool = true) -> AReq {
        let timestamp = String(UTCTime.purchaseDate(Date()).prefix(12))  // YYYYMMDDHHMM
        func appended(_ name: String, _ entry: JSONValue) -> JSONValue {
            .array(Array((first[name]?.arrayValue ?? []).prefix(2)) + [entry])
        }
        let replaced: Set<String> = ["threeDSServerTransID", "threeDSRequestorPriorAuthenticationInfo", "threeDSRequestorAuthenticationInfo", "spcIncompInd"]
        var members = (first.objectMembers ?? []).filter { !replaced.contains($0.key) }
        members.append(("threeDSServerTransID", .string(TransactionIdentifier.make())))
        members.append(("threeDSRequestorPriorAuthenticationInfo", appended("threeDSRequestorPriorAuthenticationInfo", .object([
            ("threeDSReqPriorAuthMethod", .string("05")), ("threeDSReqPriorAuthTimestamp", .string(timestamp)),
            ("threeDSReqPriorRef", .string(acsTransID)),
        ]))))
        if let assertion {
            // The Assertion Data "as a JSON object returned by the SPC API" (SB 279, Table A.12), written as a string.
            members.append(("threeDSRequestorAuthenticationInfo", appended("threeDSRequestorAuthenticationInfo", .object([
                ("threeDSReqAuthMethod", .string("09")), ("threeDSReqAuthTimestamp", .string(timestamp)),
                ("threeDSReqAuthData", .string(String(decoding: JSONWriter.write(assertion), as: UTF8.self))),
            ]))))
        } else {
            if keepingOwnAuthentication, let own = first["threeDSRequestorAuthenticationInfo"] { members.append(("threeDSRequestorAuthenticationInfo", own)) }
            if let incomplete { members.append(("spcIncompInd", .string(incomplete))) }
        }
        return AReq(json: .object(members), version: version)
    }
}
