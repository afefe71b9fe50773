public import EMV3DS
import Foundation
import JSON

/// One screen of a scripted challenge: what the SDK shows, and the answer that passes it.
public struct ChallengeStep: Sendable, Equatable {
    /// What the CRes shows (texts, options, HTML...). For HTML types a nil `html` means the
    /// ACS's own form (see `ChallengeStep.defaultHTML`).
    public var screen: ChallengeScreenContent
    /// The answer that passes: the code for text (01), the key for single-select (02),
    /// comma-separated keys in any order for multi-select (03), the form value for HTML (05/06).
    /// Out-of-band and information screens (04/07) pass on `oobContinue`, and ignore it.
    public var answer: String
    /// The code a text step expects after the cardholder asked for a new one.
    public var resendAnswer: String?
    /// The text shown instead of `challengeInfoText` after a wrong answer.
    public var errorText: String

    public init(screen: ChallengeScreenContent, answer: String, resendAnswer: String? = nil,
                errorText: String = "Incorrect answer. Please try again.") {
        self.screen = screen
        self.answer = answer
        self.resendAnswer = resendAnswer
        self.errorText = errorText
    }

    /// The answer expected after `resends` requests for a new code.
    public func expectedAnswer(afterResends resends: Int) -> String {
        resends > 0 ? resendAnswer ?? answer : answer
    }

    /// Whether `entry` passes this step. Multi-select compares the set of keys.
    public func accepts(_ entry: String, afterResends resends: Int) -> Bool {
        let expected = expectedAnswer(afterResends: resends)
        guard screen.uiType == .multiSelect else { return entry == expected }
        func keys(_ text: String) -> Set<String> {
            Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        return keys(entry) == keys(expected)
    }

    /// The ACS's own HTML for an HTML step: a form with one field, `answer`, posting to
    /// `https://emv3ds/challenge` as the SDK specification requires.
    public static func defaultHTML(header: String?, text: String?, submitLabel: String?) -> String {
        let escape = Markup.escape
        return """
        <!DOCTYPE html><html><head><meta name="viewport" content="width=device-width, initial-scale=1"><title>\(escape(header ?? "Verification"))</title></head>\
        <body><h1>\(escape(header ?? "Verification"))</h1><p>\(escape(text ?? "Enter the code we sent you."))</p>\
        <form action="https://emv3ds/challenge" method="post"><input type="text" name="answer" autocomplete="one-time-code">\
        <input type="submit" value="\(escape(submitLabel ?? "Submit"))"></form></body></html>
        """
    }
}

/// A scripted challenge: its steps in order, and how it ends.
extension ChallengeScript {
    /// Step `index` as the SDK of `version` is shown it: first (`warning` after a wrong answer, `resent` after a new code
    /// was asked for), with the version's screen type and members; a text screen where no step is left.
    public func screen(at index: Int, in version: MessageVersion, warning: Bool = false, resent: Bool = false) -> ChallengeScreenContent {
        guard steps.indices.contains(index) else { return ChallengeScreenContent(uiType: .text) }
        let step = steps[index]
        var screen = step.screen
        screen.uiType = screen.uiType.available(in: version)
        if screen.uiType.isHTML && screen.html == nil {
            screen.html = ChallengeStep.defaultHTML(header: screen.header, text: warning ? step.errorText : screen.text,
                                                    submitLabel: screen.submitLabel)
        }
        if screen.uiType == .outOfBand && screen.oobContinueLabel == nil { screen.oobContinueLabel = "Continue" }
        if warning {
            screen.text = step.errorText
            screen.textIsWarning = true
        } else if resent {
            screen.text = "A new code has been sent."
        }
        if version < .v2_2_0 {
            screen.oobAppURL = nil
            screen.oobAppLabel = nil
            screen.whitelistingInfoText = nil
        } else if index == 0, screen.whitelistingInfoText == nil {
            screen.whitelistingInfoText = whitelistingInfoText
        }
        return screen
    }
}

public struct ChallengeScript: Sendable, Equatable {
    public var steps: [ChallengeStep]
    /// Wrong answers allowed on one step; the last one ends the challenge with `failure`.
    public var attempts: Int
    /// The status when every step passed (Y or A).
    public var success: TransStatus
    /// The status and reason when the attempts ran out.
    public var failure: (status: TransStatus, reason: String)
    /// The whitelisting prompt shown with the first screen (2.2.0 and later), if any.
    public var whitelistingInfoText: String?
    /// What the scripted cardholder does: answers every step, or cancels on the first screen.
    public var cardholder: Cardholder
    /// Decoupled Authentication Fallback (2.3.1): where the AReq allows it, the challenge ends D instead.
    public var decoupledFallback: DecoupledFallbackScript?

    public enum Cardholder: String, Sendable, CaseIterable {
        /// Gives the passing answers.
        case answers
        /// Cancels on the first screen: the SDK sends challengeCancel 01 and reports cancelled.
        case cancels
    }

    public init(steps: [ChallengeStep], attempts: Int = 3, success: TransStatus = .authenticated,
                failure: (status: TransStatus, reason: String) = (.notAuthenticated, "01"), whitelistingInfoText: String? = nil,
                cardholder: Cardholder = .answers) {
        self.steps = steps
        self.attempts = attempts
        self.success = success
        self.failure = failure
        self.whitelistingInfoText = whitelistingInfoText
        self.cardholder = cardholder
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.steps == rhs.steps && lhs.attempts == rhs.attempts && lhs.success == rhs.success
            && lhs.failure == rhs.failure && lhs.whitelistingInfoText == rhs.whitelistingInfoText && lhs.cardholder == rhs.cardholder
            && lhs.decoupledFallback == rhs.decoupledFallback
    }

    /// What the scripted cardholder enters, in order: the answers that pass every step, or a
    /// cancel. What `simulate` sends by default, and what a run's case tells a person to do.
    /// In `version` (every version when nil): a decoupled fallback's information screen (2.3.1) takes a continue too.
    public func passingAnswers(in version: MessageVersion? = nil) -> [String] {
        guard cardholder == .answers else { return ["cancel"] }
        let answers = steps.map { $0.screen.uiType.continuesOutOfBand ? "continue" : $0.answer }
        guard decoupledFallback?.afterSuccess == true, version.map({ $0 >= .v2_3_1 }) ?? true else { return answers }
        return answers + ["continue"]
    }

    /// The transStatus the challenge ends in when the cardholder does what the script says; in 2.3.1, with a fallback
    /// after the steps pass (reason 30), the decoupled authentication's, the requestor allowing it as this harness's does.
    public func expectedResult(in version: MessageVersion) -> TransStatus {
        guard cardholder == .answers else { return ChallengeCancel.cardholderCancelled.result.transStatus }
        if let fallback = decoupledFallback, fallback.afterSuccess, version >= .v2_3_1 { return fallback.decoupled.status }
        return success
    }
}

/// Decoupled Authentication Fallback (2.3.1, ``DecoupledFallback``): the challenge's end, where the AReq allowed it.
/// Reason 30 replaces success (authenticated, but more is needed), 29 replaces the failure when the attempts run out
/// (not completed by the cardholder). The ACS first shows an information screen (Req 461), then ends with RReq D and
/// final CRes D; the 3RI AReq that follows gets ARes D and the result of `decoupled`.
public struct DecoupledFallbackScript: Sendable, Equatable {
    public var reason: String
    /// The information screen's text.
    public var text: String
    public var decoupled: DecoupledScript

    public init(reason: String, text: String = DecoupledFallbackScript.defaultText, decoupled: DecoupledScript = DecoupledScript()) {
        self.reason = reason
        self.text = text
        self.decoupled = decoupled
    }

    public static let defaultText = "To finish, approve this purchase in your banking app. You can close this screen."

    /// 30: after the steps passed; 29: after the attempts ran out.
    public var afterSuccess: Bool { reason == "30" }
}

/// A decoupled authentication: ARes D, and the result by RReq after `delay`.
public struct DecoupledScript: Sendable, Equatable {
    public var status: TransStatus
    public var reason: String?
    /// Seconds between the ARes and the RReq; nil: the result never comes.
    public var delay: Double?
    /// `cardholderInfo`: what the app tells the cardholder to do meanwhile.
    public var cardholderInfo: String?

    public init(status: TransStatus = .authenticated, reason: String? = nil, delay: Double? = 2, cardholderInfo: String? = nil) {
        self.status = status
        self.reason = reason
        self.delay = delay
        self.cardholderInfo = cardholderInfo
    }
}
