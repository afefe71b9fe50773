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
    }

    /// What the scripted cardholder enters, in order: the answers that pass every step, or a
    /// cancel. What `simulate` sends by default, and what a run's case tells a person to do.
    public var passingAnswers: [String] {
        guard cardholder == .answers else { return ["cancel"] }
        return steps.map { $0.screen.uiType.continuesOutOfBand ? "continue" : $0.answer }
    }

    /// The transStatus the challenge ends in when the cardholder does what the script says.
    public var expectedResult: TransStatus {
        cardholder == .cancels ? ChallengeCancel.cardholderCancelled.result.transStatus : success
    }
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
