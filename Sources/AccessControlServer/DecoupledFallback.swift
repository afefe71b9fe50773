import EMV3DS
import JSON
import Scenarios
import Store

/// Decoupled Authentication Fallback at the ACS (EMV 3DS 2.3.1, ``DecoupledFallback``; docs/challenges.md): a challenge
/// whose script falls back ends with an information screen, RReq D and final CRes D (``ChallengeSession``); the 3DS
/// Server's RRes (04) and the 3RI AReq that follows are graded here, and that AReq is answered decoupled.
extension AccessControlServer {
    /// What a 3RI AReq after an RReq D decides: its check, and the decoupled authentication to run (nil when it names
    /// no transaction that fell back).
    struct FallbackFollowUp {
        let check: CheckResult
        let script: DecoupledScript?
        /// The dsTransID of the challenge followed up: its case is graded on the check too, wherever the 3RI's transaction lands.
        let challenged: String?
    }

    /// The follow-up of a fallen-back challenge: a 3RI AReq naming one in its prior authentication, or one with
    /// threeRIInd 19 that names none. Nil for any other AReq. The challenge is taken once: an AReq sent again finds it
    /// followed up.
    func decoupledFallbackFollowUp(_ areq: AReq) -> FallbackFollowUp? {
        guard areq.deviceChannel == DeviceChannel.threeRI.rawValue else { return nil }
        // An array of 1-3 objects in 2.3.1 (one object before, which cannot name a fallback).
        let prior = areq.json["threeDSRequestorPriorAuthenticationInfo"]?.arrayValue ?? []
        let dsTransID = areq["dsTransID"] ?? "-"
        var taken: (entry: JSONValue, transaction: Transaction)?
        for entry in prior where taken == nil {
            guard let ref = entry["threeDSReqPriorRef"]?.stringValue else { continue }
            taken = transactions.update(ref) { transaction -> (JSONValue, Transaction)? in
                guard transaction.fallbackRReqAt != nil, transaction.fallbackFollowedBy == nil else { return nil }
                transaction.fallbackFollowedBy = dsTransID
                return (entry, transaction)
            } ?? nil
        }
        guard let (entry, first) = taken else {
            guard areq["threeRIInd"] == DecoupledFallback.threeRIInd else { return nil }
            return FallbackFollowUp(check: .fail(.decoupledFallback, "threeRIInd 19, but threeDSRequestorPriorAuthenticationInfo names no challenge of this "
                                                 + "ACS that ended with RReq D awaiting its 3RI AReq (threeDSReqPriorRef its acsTransID)"),
                                    script: nil, challenged: nil)
        }
        var problems: [String] = []
        if areq["threeRIInd"] != DecoupledFallback.threeRIInd {
            problems.append("threeRIInd is \(areq["threeRIInd"] ?? "absent"), not 19 (Decoupled Authentication Fallback)")
        }
        if areq["threeDSRequestorDecReqInd"] != "Y" {
            problems.append("threeDSRequestorDecReqInd is \(areq["threeDSRequestorDecReqInd"] ?? "absent"), not Y")
        }
        if let method = entry["threeDSReqPriorAuthMethod"]?.stringValue, method != DecoupledFallback.priorAuthMethod {
            problems.append("threeDSReqPriorAuthMethod is \(method), not 02 (cardholder challenge occurred by ACS)")
        }
        if CardNumber.masked(areq.acctNumber) != first.maskedPAN { problems.append("acctNumber is not the challenged transaction's card") }
        let elapsed = Double(settings.clock.wallMilliseconds() - (first.fallbackRReqAt ?? 0)) / 1000
        if elapsed > DecoupledFallback.followUpWindow {
            problems.append("it came \(Int(elapsed)) s after the RReq D: within \(Int(DecoupledFallback.followUpWindow)) s (Req 467)")
        }
        let script: DecoupledScript? = if case .challenge(let challenge)? = scenarios.catalog.scenario(named: first.scenario)?.outcome {
            challenge.decoupledFallback?.decoupled
        } else { nil }
        let check: CheckResult = problems.isEmpty
            ? .pass(.decoupledFallback, "the 3RI AReq followed the RReq D after \(Int(elapsed)) s, naming acsTransID \(first.ids.acsTransID ?? "-")")
            : .fail(.decoupledFallback, "the 3RI AReq after the RReq D of acsTransID \(first.ids.acsTransID ?? "-"): " + problems.joined(separator: "; "))
        return FallbackFollowUp(check: check, script: script ?? DecoupledScript(), challenged: first.ids.dsTransID)
    }

    /// A 2.3.1 challenge that falls back to decoupled authentication, for an AReq that did not allow it: a warning, as the
    /// fallback is the requestor's option, but the case did not test it (the challenge ends as scripted without one).
    func fallbackNotAllowed(_ plan: Outcome.Plan, areq: AReq) -> CheckResult? {
        guard case .challenge(let script) = plan, script.decoupledFallback != nil, areq.version >= .v2_3_1,
              !DecoupledFallback.isAllowed(version: areq.version, indicator: areq["threeDSRequestorDecReqInd"]) else { return nil }
        return CheckResult(.decoupledFallback, .warning, "not tested: this card's challenge falls back to decoupled authentication, which the AReq "
                           + "does not allow (threeDSRequestorDecReqInd \(areq["threeDSRequestorDecReqInd"] ?? "absent"), not F or B); the challenge ends as scripted")
    }

    /// The 3DS Server's RRes to an RReq D: resultsStatus 04 (Req 463/466).
    static func fallbackResultsCheck(_ status: RRes.ResultsStatus) -> CheckResult {
        status == .decoupledLater ? .pass(.rresDecoupledFallback)
            : .fail(.rresDecoupledFallback, "the RReq D was answered with resultsStatus \(status.rawValue), not 04 (decoupled authentication follows)")
    }
}
