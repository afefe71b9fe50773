import EMV3DS
import Scenarios

// A scenario entry's challenge: its steps and screens, its decoupled script and fallback, checked as they are read.
extension ScenarioFile {
    /// The names `uiType` accepts beside the codes "01"-"07".
    static let uiTypeNames: [String: ACSUIType] = [
        "text": .text, "single-select": .singleSelect, "multi-select": .multiSelect, "oob": .outOfBand,
        "html": .html, "html-oob": .htmlOutOfBand, "information": .information,
    ]

    /// A decoupled authentication: `decoupled`, or a challenge's `decoupledFallback.decoupled`.
    static func decoupledScript(_ entry: DecoupledEntry, field: String,
                                        invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> DecoupledScript {
        let (status, reason) = try finalStatus(entry.transStatus ?? "Y", entry.transStatusReason,
                                               allowed: [.authenticated, .attempted, .notAuthenticated, .rejected, .unavailable],
                                               field: field + ".transStatus", invalid: invalid)
        let delay = entry.never ? nil : entry.delay ?? 2
        // A Duration of 1e19 seconds, infinity or NaN traps: the range is checked where the number enters.
        if let delay, !(delay.isFinite && (0...86_400).contains(delay)) {
            throw invalid(field + ".delay", "\(delay) is not 0-86400 seconds, or never")
        }
        return DecoupledScript(status: status, reason: reason, delay: delay, cardholderInfo: entry.cardholderInfo)
    }

    static func fallback(_ entry: DecoupledFallbackEntry,
                                 invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> DecoupledFallbackScript {
        let field = "challenge.decoupledFallback"
        guard DecoupledFallback.reasons.contains(entry.reason) else {
            throw invalid(field + ".reason", "\"\(entry.reason)\" is not 30 (after the steps pass) or 29 (after the attempts run out)")
        }
        if let text = entry.text, text.isEmpty || text.count > 350 { throw invalid(field + ".text", "must be 1-350 characters") }
        return DecoupledFallbackScript(reason: entry.reason, text: entry.text ?? DecoupledFallbackScript.defaultText,
                                       decoupled: try entry.decoupled.map { entry throws(ConfigurationError) in
                                           try decoupledScript(entry, field: field + ".decoupled", invalid: invalid)
                                       } ?? DecoupledScript())
    }

    static func script(_ entry: ChallengeEntry, invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> ChallengeScript {
        guard !entry.steps.isEmpty else { throw invalid("challenge.steps", "at least one step") }
        var steps: [ChallengeStep] = []
        for (index, step) in entry.steps.enumerated() {
            steps.append(try challengeStep(step, field: "challenge.steps[\(index)]", invalid: invalid))
        }
        let attempts = entry.attempts ?? 3
        guard attempts >= 1 else { throw invalid("challenge.attempts", "at least 1") }
        let success = entry.success ?? "Y"
        guard let successStatus = TransStatus(rawValue: success), successStatus.carriesAuthenticationValue else {
            throw invalid("challenge.success", "\"\(success)\" is not Y or A")
        }
        let (failureStatus, failureReason) = try finalStatus(entry.failureStatus ?? "N", entry.failureReason ?? "01",
                                                             allowed: [.notAuthenticated, .rejected, .unavailable],
                                                             field: "challenge.failureStatus", invalid: invalid)
        if let text = entry.whitelisting, text.isEmpty || text.count > 64 {
            throw invalid("challenge.whitelisting", "must be 1-64 characters (whitelistingInfoText)")
        }
        let cardholder = entry.cardholder ?? ChallengeScript.Cardholder.answers.rawValue
        guard let scriptedCardholder = ChallengeScript.Cardholder(rawValue: cardholder) else {
            throw invalid("challenge.cardholder", "\"\(cardholder)\" is not \(ChallengeScript.Cardholder.allCases.map(\.rawValue).joined(separator: " or "))")
        }
        var script = ChallengeScript(steps: steps, attempts: attempts, success: successStatus, failure: (failureStatus, failureReason ?? "01"),
                                     whitelistingInfoText: entry.whitelisting, cardholder: scriptedCardholder)
        script.decoupledFallback = try entry.decoupledFallback.map { entry throws(ConfigurationError) in try fallback(entry, invalid: invalid) }
        // Each screen as the ACS sends it, in every version, against the CRes table.
        if let problem = script.problems.first {
            let key = screenKeys[problem.violation.field] ?? problem.violation.field
            throw invalid("challenge.steps[\(problem.step)].\(key)",
                          "\(problem.violation.reason) (a \(problem.version.rawValue) CRes of this screen would be refused with \(problem.violation.code.rawValue))")
        }
        return script
    }

    /// Where each text of a step goes on the screen.
    static var screenTexts: [(StepEntry.TextKey, WritableKeyPath<ChallengeScreenContent, String?>)] { [
        (.header, \.header), (.label, \.label), (.text, \.text), (.additionalInfo, \.additionalInfo), (.submitLabel, \.submitLabel),
        (.oobContinueLabel, \.oobContinueLabel), (.oobAppURL, \.oobAppURL), (.oobAppLabel, \.oobAppLabel), (.html, \.html),
        (.htmlRefresh, \.htmlRefresh), (.expandInfoLabel, \.expandInfoLabel), (.expandInfoText, \.expandInfoText),
        (.whyInfoLabel, \.whyInfoLabel), (.whyInfoText, \.whyInfoText), (.resendLabel, \.resendInformationLabel),
    ] }

    /// The lengths SDKs accept for the texts they lay out themselves: longer or empty ones are refused.
    static let textLimits: [(StepEntry.TextKey, Int)] = [
        (.header, 45), (.label, 45), (.submitLabel, 45), (.oobContinueLabel, 45), (.text, 350), (.whyInfoLabel, 45),
        (.expandInfoLabel, 45), (.resendLabel, 45),
    ]

    /// One screen of a challenge and the answer that passes it.
    static func challengeStep(_ step: StepEntry, field: String,
                                      invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> ChallengeStep {
        guard let type = ACSUIType(rawValue: step.uiType) ?? uiTypeNames[step.uiType] else {
            throw invalid(field + ".uiType", "\"\(step.uiType)\" is not 01-07 or one of \(uiTypeNames.keys.sorted().joined(separator: ", "))")
        }
        for (key, limit) in textLimits {
            if let value = step.texts[key], value.isEmpty || value.count > limit {
                throw invalid("\(field).\(key.rawValue)", "must be 1-\(limit) characters (SDKs refuse empty or longer texts)")
            }
        }
        var screen = ChallengeScreenContent(uiType: type)
        for (key, member) in screenTexts { screen[keyPath: member] = step.texts[key] }
        if screen.submitLabel == nil, [.text, .singleSelect, .multiSelect].contains(type) { screen.submitLabel = "Submit" }
        screen.issuerImage = step.issuerImage?.json
        screen.psImage = step.psImage?.json
        screen.options = (step.options ?? []).map { ($0.key, $0.label) }
        if type == .singleSelect || type == .multiSelect {
            guard !screen.options.isEmpty else { throw invalid(field + ".options", "required for uiType \(type.rawValue)") }
        } else if step.options != nil {
            throw invalid(field + ".options", "only single-select and multi-select steps have options")
        }
        let answer: String
        if type.continuesOutOfBand {
            answer = step.answer ?? "continue"
        } else {
            guard let given = step.answer, !given.isEmpty else { throw invalid(field + ".answer", "required for uiType \(type.rawValue)") }
            answer = given
        }
        let keys = Set(screen.options.map(\.key))
        if type == .singleSelect, !keys.contains(answer) { throw invalid(field + ".answer", "\"\(answer)\" is not one of the option keys") }
        if type == .multiSelect, let unknown = answer.split(separator: ",").first(where: { !keys.contains(String($0)) }) {
            throw invalid(field + ".answer", "\"\(unknown)\" is not one of the option keys")
        }
        if step.resendAnswer != nil, type != .text { throw invalid(field + ".resendAnswer", "only text steps send new codes") }
        return ChallengeStep(screen: screen, answer: answer, resendAnswer: step.resendAnswer,
                             errorText: step.errorText ?? "Incorrect answer. Please try again.")
    }

    /// The scenario file's name for each CRes field of a screen.
    static let screenKeys = [
        "challengeInfoHeader": "header", "challengeInfoLabel": "label", "challengeInfoText": "text",
        "submitAuthenticationLabel": "submitLabel", "challengeSelectInfo": "options", "acsHTML": "html",
        "challengeEntryBox.challengeDataEntryLabel": "label", "challengeEntryBox": "label", "infoContinueLabel": "oobContinueLabel",
    ]
}
