public import EMV3DS
import Foundation
public import JSON
import Scenarios

/// How a challenge ended: what the RReq and the final CRes report.
public struct ChallengeResult: Sendable, Equatable {
    public var transStatus: TransStatus
    public var reason: String?
    public var cancel: ChallengeCancel?
    /// `whiteListStatus` (2.2.0+): the cardholder's answer to the whitelisting prompt.
    public var whiteListStatus: String?
    /// Cardholder interactions: CReqs that carried an answer.
    public var interactions: Int
    /// The Erro that ended the challenge (2.3.1 `challengeErrorReporting`).
    public var errorReport: JSONValue?

    public init(transStatus: TransStatus, reason: String? = nil, cancel: ChallengeCancel? = nil, whiteListStatus: String? = nil,
                interactions: Int) {
        self.transStatus = transStatus
        self.reason = reason
        self.cancel = cancel
        self.whiteListStatus = whiteListStatus
        self.interactions = interactions
    }

    /// A challenge that ended early: cancelled, timed out or broken.
    public static func cancelled(_ cancel: ChallengeCancel, interactions: Int = 0) -> ChallengeResult {
        ChallengeResult(transStatus: cancel.result.transStatus, reason: cancel.result.reason, cancel: cancel, interactions: interactions)
    }
}

/// The cardholder's side of one challenge: which step is showing, the wrong answers and
/// resends so far. Pure logic; the ACS feeds it each valid CReq in counter order.
public struct ChallengeSession: Sendable {
    enum Decision: Sendable, Equatable {
        case show(ChallengeScreenContent)
        case finish(ChallengeResult)
    }

    let script: ChallengeScript
    let version: MessageVersion
    fileprivate(set) var stepIndex = 0
    private(set) var wrongAnswers = 0
    private(set) var resends = 0
    private(set) var interactions = 0
    private(set) var whitelistingEntry: String?
    /// Whether the challenge ends in Decoupled Authentication Fallback (2.3.1): the script has one, and the AReq allowed it.
    let fallsBack: Bool
    /// The fallback's information screen is showing (Req 461): the cardholder's next action ends the challenge D.
    private(set) var informingFallback = false

    /// `fallbackAllowed`: the AReq's `threeDSRequestorDecReqInd` allows Decoupled Authentication Fallback (``DecoupledFallback``).
    init(script: ChallengeScript, version: MessageVersion, fallbackAllowed: Bool = false) {
        self.script = script
        self.version = version
        fallsBack = fallbackAllowed && version >= .v2_3_1 && script.decoupledFallback != nil
    }

    /// The first screen's type, for the ARes's `acsRenderingType` and `authenticationType`.
    var firstUIType: ACSUIType { (script.steps.first?.screen.uiType ?? .text).available(in: version) }

    mutating func handle(_ creq: CReq) -> Decision {
        handle(creq.action, isFirst: creq.counter == 0, whitelisting: creq.whitelistingDataEntry)
    }

    /// One cardholder action: from a CReq (app), or from a challenge page's form (browser).
    /// `isFirst`: the request for the first screen, which carries no answer.
    mutating func handle(_ action: CReq.Action, isFirst: Bool, whitelisting: String? = nil) -> Decision {
        if let whitelisting { whitelistingEntry = whitelisting }
        if case .cancel(let cancel) = action { return .finish(result(cancel: cancel)) }
        // The first CReq asks for the first screen; some SDKs send it as an empty submit.
        guard !isFirst else { return .show(screen()) }
        interactions += 1
        if informingFallback, let fallback = script.decoupledFallback {
            switch action {
            case .oobContinue, .noEntry:
                return .finish(ChallengeResult(transStatus: .decoupled, reason: fallback.reason, whiteListStatus: whiteListStatus,
                                               interactions: interactions))
            default:
                return .show(screen())  // the information screen takes only a continue (or a cancel, above)
            }
        }
        guard let step = currentStep else { return .finish(result(cancel: .transactionError)) }
        let type = step.screen.uiType.available(in: version)
        switch action {
        case .resend:
            resends += 1
            return .show(screen(resent: true))
        case .oobContinue where type.continuesOutOfBand || type == .htmlOutOfBand,
             .noEntry where type == .information:
            return pass()
        case .dataEntry(let entry) where !type.isHTML && !type.continuesOutOfBand && step.accepts(entry, afterResends: resends):
            return pass()
        case .htmlDataEntry(let query) where type.isHTML && Self.formValues(query).contains(where: { step.accepts($0, afterResends: resends) }):
            return pass()
        default:
            return fail()
        }
    }

    private var currentStep: ChallengeStep? { stepIndex < script.steps.count ? script.steps[stepIndex] : nil }

    /// `creq.oob-continue` of an app CReq, before it is handled: after an OOB screen (04) it continues,
    /// cancels or asks to resend; `oobContinue` answers no text, select or HTML screen. Nil where neither
    /// applies (the first CReq, the 2.3.1 screens that take both).
    func oobContinuation(of action: CReq.Action, isFirst: Bool) -> CheckResult? {
        guard !isFirst, !informingFallback, let step = currentStep else { return nil }
        let type = step.screen.uiType.available(in: version)
        switch (type, action) {
        case (.outOfBand, .oobContinue), (.outOfBand, .cancel), (.outOfBand, .resend):
            return .pass(.oobContinuation)
        case (.outOfBand, _):
            return .fail(.oobContinuation, "the CReq after the out-of-band screen (acsUiType 04) carries \(action.elementName) instead of oobContinue")
        case (.text, .oobContinue), (.singleSelect, .oobContinue), (.multiSelect, .oobContinue), (.html, .oobContinue):
            return .fail(.oobContinuation, "oobContinue answers a screen of acsUiType \(type.rawValue), not an out-of-band one")
        default:
            return nil
        }
    }

    private mutating func pass() -> Decision {
        stepIndex += 1
        wrongAnswers = 0
        resends = 0
        guard stepIndex < script.steps.count else {
            if fallsBack, script.decoupledFallback?.afterSuccess == true { return startFallback() }
            return .finish(ChallengeResult(transStatus: script.success, whiteListStatus: whiteListStatus, interactions: interactions))
        }
        return .show(screen())
    }

    private mutating func fail() -> Decision {
        wrongAnswers += 1
        guard wrongAnswers < script.attempts else {
            if fallsBack, script.decoupledFallback?.afterSuccess == false { return startFallback() }
            return .finish(ChallengeResult(transStatus: script.failure.status, reason: script.failure.reason,
                                           whiteListStatus: whiteListStatus, interactions: interactions))
        }
        return .show(screen(warning: true))
    }

    /// Tells the cardholder that the bank authenticates them decoupled next, on an information screen (Req 461).
    private mutating func startFallback() -> Decision {
        informingFallback = true
        return .show(screen())
    }

    private func result(cancel: ChallengeCancel) -> ChallengeResult {
        var result = ChallengeResult.cancelled(cancel, interactions: interactions)
        result.whiteListStatus = whiteListStatus
        return result
    }

    /// Y when the cardholder ticked the whitelisting box, N when they answered otherwise (2.2.0+).
    private var whiteListStatus: String? {
        guard version >= .v2_2_0, let whitelistingEntry else { return nil }
        return whitelistingEntry == "Y" ? "Y" : "N"
    }

    /// The current step as the SDK of this version shows it.
    func screen(warning: Bool = false, resent: Bool = false) -> ChallengeScreenContent {
        if informingFallback, let fallback = script.decoupledFallback {
            var screen = ChallengeScreenContent(uiType: ACSUIType.information.available(in: version))
            screen.header = "Approve in your banking app"
            screen.text = fallback.text
            screen.oobContinueLabel = "Continue"
            return screen
        }
        return script.screen(at: stepIndex, in: version, warning: warning, resent: resent)
    }

    /// The values of an `application/x-www-form-urlencoded` query string.
    static func formValues(_ query: String) -> [String] {
        query.split(separator: "&").compactMap { pair in
            let value = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).dropFirst().first ?? ""
            return String(value).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
    }
}

extension ChallengeSession {
    /// The cardholder's progress as the record keeps it: what another instance of a cluster goes on from (docs/scale.md).
    var progress: JSONValue {
        .object(omittingAbsent: [
            ("step", .number(String(stepIndex))), ("wrongAnswers", .number(String(wrongAnswers))), ("resends", .number(String(resends))),
            ("interactions", .number(String(interactions))), ("whitelistingEntry", .string(whitelistingEntry)),
            ("decoupledFallback", .string(informingFallback ? "informing" : fallsBack ? "allowed" : nil)),
        ])
    }

    /// The session of `script` at the progress a record kept; nil when it is not one (or no step of the script).
    init?(script: ChallengeScript, version: MessageVersion, progress: JSONValue) {
        func count(_ key: String) -> Int? { progress[key]?.numberText.flatMap(Int.init).flatMap { $0 >= 0 ? $0 : nil } }
        let fallback = progress["decoupledFallback"]?.stringValue
        guard let step = count("step"), step < script.steps.count || fallback == "informing", let wrongAnswers = count("wrongAnswers"),
              let resends = count("resends"), let interactions = count("interactions") else { return nil }
        self.init(script: script, version: version, fallbackAllowed: fallback != nil)
        informingFallback = fallback == "informing"
        stepIndex = step
        self.wrongAnswers = wrongAnswers
        self.resends = resends
        self.interactions = interactions
        whitelistingEntry = progress["whitelistingEntry"]?.stringValue
    }
}
