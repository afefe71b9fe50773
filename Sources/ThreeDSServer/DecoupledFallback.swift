import EMV3DS
import Foundation
import JSON
import Logging
import Net
import Store

/// Decoupled Authentication Fallback at the 3DS Server (EMV 3DS 2.3.1, ``DecoupledFallback``; docs/challenges.md): after an
/// RReq D (answered with resultsStatus 04), a 3RI AReq for the same card and purchase, threeRIInd 19, decoupled requested,
/// naming the challenged transaction. Its result, by its own RReq, ends the first transaction.
extension ThreeDSServer {
    /// Sends the 3RI AReq that follows transaction `id`'s RReq D, at once (the specification allows 60 s).
    func followUpFallback(_ id: String) async {
        guard let first = transactions.get(id) else { return }
        guard let areq = first.sentAReq, let acsTransID = first.ids.acsTransID else {
            transactions.update(id) { $0.fail("the decoupled fallback's 3RI AReq cannot be built: the transaction has no AReq or acsTransID") }
            return
        }
        // Another instance took the transaction up from the store, which keeps the card number masked.
        guard areq["acctNumber"]?.stringValue?.contains("*") != true else {
            transactions.update(id) { $0.fail("the decoupled fallback's 3RI AReq cannot be built here: the store keeps the card number masked") }
            return
        }
        do {
            let followUp = buildAReq(try fallbackRequest(after: areq, acsTransID: acsTransID))
            // Named before it goes: the record says which transaction brings the result while it is under way.
            transactions.update(id) { $0.fallbackFollowedBy = followUp.threeDSServerTransID }
            let (transaction, _) = try await send(followUp, browserOptions: nil, tags: first.tags, fallbackOf: id)
            // A 3RI answered at once (an Erro, no usable answer, a final ARes) ends the first with it; an ARes D, by its RReq later.
            if transaction.state != .challenge { transactions.update(id) { $0.endFallback(with: transaction) } }
        } catch {
            logger.warning("the decoupled fallback's 3RI AReq was not sent", metadata: ["threeDSServerTransID": "\(id)", "reason": "\(error)"])
            transactions.update(id) { $0.fail("the 3RI AReq of the decoupled fallback would be invalid: \(error.message)") }
        }
    }

    /// The requestor's call for the 3RI authentication (Req 467): the first AReq's card, purchase and requestor data,
    /// in the 3RI channel, with threeRIInd 19, decoupled requested, and the challenged transaction as prior authentication.
    func fallbackRequest(after first: JSONValue, acsTransID: String) throws(HTTPError) -> AuthenticationRequest {
        let timestamp = String(UTCTime.purchaseDate(Date()).prefix(12))  // YYYYMMDDHHMM
        // What only a cardholder's session carries: the first's challenge choice has no place in a 3RI AReq.
        let replaced: Set<String> = ["deviceChannel", "threeDSServerTransID", "threeRIInd", "threeDSRequestorDecReqInd", "threeDSRequestorPriorAuthenticationInfo",
                                     "threeDSRequestorAuthenticationInd", "threeDSRequestorChallengeInd"]
        var members = (first.objectMembers ?? []).filter { !replaced.contains($0.key) }
        members += [
            ("deviceChannel", .string(DeviceChannel.threeRI.rawValue)),
            ("threeRIInd", .string(DecoupledFallback.threeRIInd)),
            ("threeDSRequestorDecReqInd", .string("Y")),
            ("threeDSRequestorPriorAuthenticationInfo", .array([.object([
                ("threeDSReqPriorAuthMethod", .string(DecoupledFallback.priorAuthMethod)), ("threeDSReqPriorAuthTimestamp", .string(timestamp)),
                ("threeDSReqPriorRef", .string(acsTransID)),
            ])])),
        ]
        if first["threeDSRequestorDecMaxTime"] == nil { members.append(("threeDSRequestorDecMaxTime", .string("00010"))) }
        // The requestor's call, as for any 3RI authentication: what the 3RI channel does not use is left out.
        return try AuthenticationRequest(json: .object(members))
    }
}
