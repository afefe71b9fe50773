import AccessControlServer
import EMV3DS
import Faults
import Foundation
import JSON
public import Scenarios
import Yams

/// The scenario file (`config/scenarios.yaml`): the named outcomes and their test PANs.
/// A scenario has exactly one of `transStatus` (frictionless), `challenge` or `decoupled`.
public enum ScenarioFile {
    // Each section is read by its table of keys (``KeyTableDecodable``): unknown keys fail.
    struct Document: KeyTableDecodable {
        var defaultScenario = ""
        var scenarios: [Entry] = []

        static var keys: [TableKey<Self>] {
            [.key("defaultScenario", \.defaultScenario, required: true), .key("scenarios", \.scenarios, required: true)]
        }
    }

    struct Entry: KeyTableDecodable {
        var name = ""
        var pan: String?
        var description = ""
        var transStatus: String?
        var transStatusReason: String?
        var challenge: ChallengeEntry?
        var decoupled: DecoupledEntry?
        var panRange: String?
        var amount: String?
        var messageCategory: String?
        var faults: [FaultEntry]?
        var expect: ExpectEntry?
        var threeDSMethod: ThreeDSMethodEntry?
        var spc: SPCEntry?
        var outcomeFields: [String: YAMLJSON]?

        static var keys: [TableKey<Self>] {
            [.key("name", \.name, required: true), .key("pan", \.pan), .key("description", \.description, required: true),
             .key("transStatus", \.transStatus), .key("transStatusReason", \.transStatusReason), .key("challenge", \.challenge),
             .key("decoupled", \.decoupled), .key("panRange", \.panRange), .key("amount", \.amount),
             .key("messageCategory", \.messageCategory), .key("faults", \.faults), .key("expect", \.expect),
             .key("threeDSMethod", \.threeDSMethod), .key("spc", \.spc), .key("outcomeFields", \.outcomeFields)]
        }
    }

    /// `spc`: Secure Payment Confirmation first (2.3.1, browser), the scenario's outcome as its fallback.
    struct SPCEntry: KeyTableDecodable {
        var transStatus: String?
        var displayName: String?

        static var keys: [TableKey<Self>] { [.key("transStatus", \.transStatus), .key("displayName", \.displayName)] }
    }

    /// `threeDSMethod`: `url: none`, `notifyAfter` (seconds, or never), `unlessCompleted` (a scenario's name).
    struct ThreeDSMethodEntry: KeyTableDecodable {
        var url: String?
        var notifyAfter: Double?
        var neverNotifies = false
        var unlessCompleted: String?

        static var keys: [TableKey<Self>] {
            [.key("url", \.url), .key("unlessCompleted", \.unlessCompleted),
             // A number of seconds, or "never".
             TableKey("notifyAfter") { entry, container, key in
                 if (try? container.decodeIfPresent(String.self, forKey: key)) == "never" {
                     entry.neverNotifies = true
                 } else {
                     entry.notifyAfter = try container.decodeIfPresent(Double.self, forKey: key)
                 }
             }]
        }
    }

    struct FaultEntry: KeyTableDecodable {
        var leg = ""
        var fault = ""
        var value: String?
        var round: Int?

        static var keys: [TableKey<Self>] {
            [.key("leg", \.leg, required: true), .key("fault", \.fault, required: true), .key("value", \.value), .key("round", \.round)]
        }
    }

    struct ExpectEntry: KeyTableDecodable {
        var sdk: String?
        var sdkErro: String?
        var threeDSServer: String?
        var text = ""

        static var keys: [TableKey<Self>] {
            [.key("sdk", \.sdk), .key("sdkErro", \.sdkErro), .key("threeDSServer", \.threeDSServer), .key("text", \.text, required: true)]
        }
    }

    struct ChallengeEntry: KeyTableDecodable {
        var steps: [StepEntry] = []
        var attempts: Int?
        var success: String?
        var failureStatus: String?
        var failureReason: String?
        var whitelisting: String?
        var cardholder: String?
        var decoupledFallback: DecoupledFallbackEntry?

        static var keys: [TableKey<Self>] {
            [.key("steps", \.steps, required: true), .key("attempts", \.attempts), .key("success", \.success),
             .key("failureStatus", \.failureStatus), .key("failureReason", \.failureReason), .key("whitelisting", \.whitelisting),
             .key("cardholder", \.cardholder), .key("decoupledFallback", \.decoupledFallback)]
        }
    }

    /// `challenge.decoupledFallback` (2.3.1): `reason` 30 after the steps pass or 29 after the attempts run out, the
    /// information screen's `text`, and the `decoupled` authentication of the 3RI AReq that follows.
    struct DecoupledFallbackEntry: KeyTableDecodable {
        var reason = ""
        var text: String?
        var decoupled: DecoupledEntry?

        static var keys: [TableKey<Self>] {
            [.key("reason", \.reason, required: true), .key("text", \.text), .key("decoupled", \.decoupled)]
        }
    }

    struct OptionEntry: KeyTableDecodable {
        var key = ""
        var label = ""

        static var keys: [TableKey<Self>] { [.key("key", \.key, required: true), .key("label", \.label, required: true)] }
    }

    struct ImageEntry: KeyTableDecodable {
        var medium: String?
        var high: String?
        var extraHigh: String?

        static var keys: [TableKey<Self>] { [.key("medium", \.medium), .key("high", \.high), .key("extraHigh", \.extraHigh)] }

        var json: JSONValue { .object(omittingAbsent: [("medium", .string(medium)), ("high", .string(high)), ("extraHigh", .string(extraHigh))]) }
    }

    struct StepEntry: KeyTableDecodable {
        var uiType = ""
        var answer: String?
        var resendAnswer: String?
        var errorText: String?
        /// The screen's texts, by key.
        var texts: [TextKey: String] = [:]
        var options: [OptionEntry]?
        var issuerImage: ImageEntry?
        var psImage: ImageEntry?

        enum TextKey: String, CaseIterable {
            case header, label, text, additionalInfo, submitLabel, oobContinueLabel, oobAppURL, oobAppLabel, html, htmlRefresh
            case expandInfoLabel, expandInfoText, whyInfoLabel, whyInfoText, resendLabel
        }

        static var keys: [TableKey<Self>] {
            [.key("uiType", \.uiType, required: true), .key("answer", \.answer), .key("resendAnswer", \.resendAnswer),
             .key("errorText", \.errorText), .key("options", \.options), .key("issuerImage", \.issuerImage), .key("psImage", \.psImage)]
                + TextKey.allCases.map { text in .key(text.rawValue, \.texts[text]) }
        }
    }

    struct DecoupledEntry: KeyTableDecodable {
        var transStatus: String?
        var transStatusReason: String?
        var delay: Double?
        var never = false
        var cardholderInfo: String?

        static var keys: [TableKey<Self>] {
            [.key("transStatus", \.transStatus), .key("transStatusReason", \.transStatusReason), .key("cardholderInfo", \.cardholderInfo),
             // A number of seconds, or "never".
             TableKey("delay") { entry, container, key in
                 if (try? container.decodeIfPresent(String.self, forKey: key)) == "never" {
                     entry.never = true
                 } else {
                     entry.delay = try container.decodeIfPresent(Double.self, forKey: key)
                 }
             }]
        }
    }

    /// The names `uiType` accepts beside the codes "01"-"07".
    static let uiTypeNames: [String: ACSUIType] = [
        "text": .text, "single-select": .singleSelect, "multi-select": .multiSelect, "oob": .outOfBand,
        "html": .html, "html-oob": .htmlOutOfBand, "information": .information,
    ]

    /// Reads and checks a scenario file.
    public static func load(path: String) throws(ConfigurationError) -> ScenarioCatalog {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw .unreadable(path: path) }
        return try parse(text, source: path)
    }

    /// Parses scenario YAML; errors name `source`, the scenario and the field.
    public static func parse(_ text: String, source: String = "scenarios") throws(ConfigurationError) -> ScenarioCatalog {
        let location = YAMLLocation(text)
        let document: Document
        do { document = try YAMLDecoder().decode(Document.self, from: text) } catch let error as DecodingError {
            throw .invalid(source: location.source(source, at: error.pathComponents), reason: error.readableDescription)
        } catch {
            throw .invalid(source: source, reason: "\(error)")
        }
        var scenarios: [Scenario] = []
        for (index, entry) in document.scenarios.enumerated() {
            scenarios.append(try scenario(entry, at: "scenarios[\(index)]", source: source, location: location))
        }
        do { return try ScenarioCatalog(scenarios: scenarios, fallbackName: document.defaultScenario) } catch {
            throw .invalid(source: source, reason: error.description)
        }
    }

    /// One scenario written as in the file (YAML or JSON), e.g. inline in a pin.
    public static func parseScenario(_ text: String, source: String) throws(ConfigurationError) -> Scenario {
        let entry: Entry
        do { entry = try YAMLDecoder().decode(Entry.self, from: text) } catch let error as DecodingError {
            throw .invalid(source: source, reason: error.readableDescription)
        } catch {
            throw .invalid(source: source, reason: "\(error)")
        }
        return try scenario(entry, at: "scenario", source: source, location: nil)
    }

    private static func scenario(_ entry: Entry, at path: String, source: String, location: YAMLLocation?) throws(ConfigurationError) -> Scenario {
        func invalid(_ field: String, _ reason: String) -> ConfigurationError {
            let place = location?.source(source, at: YAMLLocation.components(path + "." + field)) ?? source
            return .invalid(source: place, reason: "\(path) (\(entry.name)).\(field): \(reason)")
        }
        if let pan = entry.pan, !((13...19).contains(pan.count) && CardNumber.isLuhnValid(pan)) {
            throw invalid("pan", "\"\(pan)\" is not a 13-19 digit Luhn-valid card number")
        }
        let outcome: Outcome
        switch (entry.transStatus, entry.challenge, entry.decoupled) {
        case (let status?, nil, nil):
            let frictionless: [TransStatus] = [.authenticated, .attempted, .notAuthenticated, .rejected, .unavailable, .informational]
            let (parsed, reason) = try finalStatus(status, entry.transStatusReason, allowed: frictionless, field: "transStatus", invalid: invalid)
            outcome = .frictionless(parsed, reason: reason)
        case (nil, let challenge?, nil):
            outcome = .challenge(try script(challenge, invalid: invalid))
        case (nil, nil, let decoupled?):
            outcome = .decoupled(try decoupledScript(decoupled, field: "decoupled", invalid: invalid))
        default:
            throw invalid("transStatus", "give exactly one of transStatus, challenge or decoupled")
        }
        var scenario = Scenario(name: entry.name, pan: entry.pan, description: entry.description, outcome: outcome,
                                faults: try faults(entry.faults ?? [], invalid: invalid),
                                expectation: try entry.expect.map { expect throws(ConfigurationError) in try expectation(expect, invalid: invalid) })
        scenario.trigger = try trigger(entry, invalid: invalid)
        if let method = entry.threeDSMethod { scenario.threeDSMethod = try threeDSMethod(method, invalid: invalid) }
        if let fields = entry.outcomeFields { scenario.outcomeFields = try outcomeFields(fields, invalid: invalid) }
        if let spc = entry.spc {
            let (status, _) = try finalStatus(spc.transStatus ?? "Y", nil, allowed: [.authenticated, .attempted], field: "spc.transStatus", invalid: invalid)
            if let name = spc.displayName, !(1...40).contains(name.count) { throw invalid("spc.displayName", "is \(name.count) characters; 1-40 (spcTransData.displayName)") }
            scenario.spc = SPCScript(transStatus: status, displayName: spc.displayName)
        }
        if case .challenge(let script) = outcome, let round = scenario.faults.filter({ $0.leg == .sdk }).map(\.round).max(),
           round > script.steps.count * script.attempts + 1 {
            throw invalid("faults", "round \(round) is past the last CRes this challenge can send")
        }
        return scenario
    }

    /// `outcomeFields`: 2.3.1 ARes members, each checked as the 2.3.1 ARes table has it; `cardholderInfo` is its text.
    private static func outcomeFields(_ fields: [String: YAMLJSON], invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> JSONValue {
        let members = fields.keys.sorted().map { ($0, fields[$0]?.value ?? .null) }
        for (name, _) in members where !AResRules.outcomeFieldNames.contains(name) {
            throw invalid("outcomeFields.\(name)", "is not one of \(AResRules.outcomeFieldNames.joined(separator: ", "))")
        }
        // As an ARes of 2.3.1 would carry them (the cardholder's text in its object).
        var ares = ARes(messageVersion: .v2_3_1, threeDSServerTransID: "", acsTransID: "", dsTransID: "", sdkTransID: nil, acsReferenceNumber: "",
                        dsReferenceNumber: "", transStatus: .authenticated)
        let scripted = JSONValue.object(members.map { (key: $0.0, value: $0.1) })
        if let text = scripted["cardholderInfo"], text.stringValue == nil { throw invalid("outcomeFields.cardholderInfo", "is the cardholder's text, a string") }
        ares.addOutcomeFields(scripted)
        let violations = AResRules.rules.validate(ares.json, version: .v2_3_1).filter { violation in
            AResRules.outcomeFieldNames.contains { violation.field == $0 || violation.field.hasPrefix($0 + ".") }
        }
        if let violation = violations.first { throw invalid("outcomeFields.\(violation.field)", violation.reason) }
        return scripted
    }

    private static func threeDSMethod(_ entry: ThreeDSMethodEntry, invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> ThreeDSMethodScript {
        var script = ThreeDSMethodScript(unlessCompleted: entry.unlessCompleted)
        switch entry.url {
        case nil: break
        case "none": script.hasURL = false
        case let other?: throw invalid("threeDSMethod.url", "\"\(other)\" is not none (leave it out for the ACS's own 3DS Method)")
        }
        if entry.neverNotifies {
            script.notification = .never
        } else if let seconds = entry.notifyAfter {
            // A Duration of 1e19 seconds, infinity or NaN traps: the range is checked where the number enters.
            guard seconds.isFinite, (0...600).contains(seconds) else { throw invalid("threeDSMethod.notifyAfter", "\(seconds) is not 0-600 seconds, or never") }
            script.notification = seconds == 0 ? .immediately : .after(seconds: seconds)
        }
        if !script.hasURL, entry.neverNotifies || entry.notifyAfter != nil {
            throw invalid("threeDSMethod.notifyAfter", "a card range without a 3DS Method URL has no page to notify")
        }
        return script
    }

    /// `panRange`, `amount` and `messageCategory`.
    private static func trigger(_ entry: Entry, invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> Trigger {
        func range(_ text: String, _ field: String, openEnded: Bool) throws(ConfigurationError) -> ClosedRange<UInt64> {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let low = UInt64(parts[0]), high = parts.count == 2 ? (parts[1].isEmpty && openEnded ? UInt64.max : UInt64(parts[1])) : low
            guard parts.count <= 2, let low, let high, low <= high else {
                throw invalid(field, "\"\(text)\" is not N, N-M\(openEnded ? " or N-" : "") with N <= M")
            }
            return low...high
        }
        var trigger = Trigger()
        if let text = entry.panRange {
            trigger.panRange = try range(text, "panRange", openEnded: false)
            let lengths = text.split(separator: "-").map { $0.trimmingCharacters(in: .whitespaces).count }
            guard Set(lengths).count == 1, (13...19).contains(lengths[0]) else { throw invalid("panRange", "both ends must be card numbers of one length (13-19 digits)") }
        }
        if let text = entry.amount { trigger.amount = try range(text, "amount", openEnded: true) }
        if let category = entry.messageCategory {
            guard ["01", "02"].contains(category) else { throw invalid("messageCategory", "\"\(category)\" is not 01 (payment) or 02 (non-payment)") }
            trigger.messageCategory = category
        }
        return trigger
    }

    private static func faults(_ entries: [FaultEntry], invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> [FaultInjection] {
        var injections: [FaultInjection] = []
        for (index, entry) in entries.enumerated() {
            let field = "faults[\(index)]"
            guard let leg = FaultLeg(rawValue: entry.leg) else {
                throw invalid(field + ".leg", "\"\(entry.leg)\" is not one of \(FaultLeg.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let fault: Fault
            do { fault = try Fault(name: entry.fault, value: entry.value) } catch {
                switch error {
                case .name(let reason): throw invalid(field + ".fault", reason)
                case .value(let reason): throw invalid(field + ".value", reason)
                }
            }
            guard fault.legs.contains(leg) else {
                throw invalid(field + ".leg", "\(entry.fault) acts on the \(fault.legs.map(\.rawValue).sorted().joined(separator: ", ")) leg, not \(leg.rawValue)")
            }
            let round = entry.round ?? (fault == .repeatedCounter ? 1 : 0)
            guard round >= 0, leg == .sdk || entry.round == nil else { throw invalid(field + ".round", "only SDK-leg faults have a round (0 or more)") }
            if fault == .repeatedCounter, round == 0 { throw invalid(field + ".round", "repeated-counter needs a CRes before it: round 1 or later") }
            injections.append(FaultInjection(fault, on: leg, round: round))
        }
        return injections
    }

    private static func expectation(_ entry: ExpectEntry, invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> Expectation {
        var expectation = Expectation(text: entry.text)
        if let sdk = entry.sdk {
            guard let report = Expectation.SDKReport(rawValue: sdk) else {
                throw invalid("expect.sdk", "\"\(sdk)\" is not one of \(Expectation.SDKReport.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            expectation.sdk = report
        }
        if let code = entry.sdkErro {
            guard let erro = ErrorCode(rawValue: code) else { throw invalid("expect.sdkErro", "\"\(code)\" is not an EMV error code") }
            expectation.sdkErro = erro
        }
        if let state = entry.threeDSServer {
            guard ["error", "frictionless", "challenge", "completed"].contains(state) else {
                throw invalid("expect.threeDSServer", "\"\(state)\" is not error, frictionless, challenge or completed")
            }
            expectation.threeDSServerState = state
        }
        guard !entry.text.isEmpty else { throw invalid("expect.text", "say what a correct client does") }
        return expectation
    }

    /// A final status and its reason, checked: N, R and U need a two-digit reason, others none.
    private static func finalStatus(_ text: String, _ reason: String?, allowed: [TransStatus], field: String,
                                    invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> (TransStatus, String?) {
        guard let status = TransStatus(rawValue: text), allowed.contains(status) else {
            throw invalid(field, "\"\(text)\" is not one of \(allowed.map(\.rawValue).joined(separator: ", "))")
        }
        let reasonField = field.replacingOccurrences(of: "transStatus", with: "transStatusReason")
        if let reason {
            guard reason.count == 2, reason.allSatisfy(\.isNumber) else { throw invalid(reasonField, "\"\(reason)\" is not two digits") }
            guard status.carriesReason else { throw invalid(reasonField, "only N, R and U carry a reason") }
        } else if status.carriesReason {
            throw invalid(reasonField, "required for transStatus \(status.rawValue)")
        }
        return (status, reason)
    }

    /// A decoupled authentication: `decoupled`, or a challenge's `decoupledFallback.decoupled`.
    private static func decoupledScript(_ entry: DecoupledEntry, field: String,
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

    private static func fallback(_ entry: DecoupledFallbackEntry,
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

    private static func script(_ entry: ChallengeEntry, invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> ChallengeScript {
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
        if let problem = ChallengeSession.problems(in: script).first {
            let key = screenKeys[problem.violation.field] ?? problem.violation.field
            throw invalid("challenge.steps[\(problem.step)].\(key)",
                          "\(problem.violation.reason) (a \(problem.version.rawValue) CRes of this screen would be refused with \(problem.violation.code.rawValue))")
        }
        return script
    }

    /// Where each text of a step goes on the screen.
    private static var screenTexts: [(StepEntry.TextKey, WritableKeyPath<ChallengeScreenContent, String?>)] { [
        (.header, \.header), (.label, \.label), (.text, \.text), (.additionalInfo, \.additionalInfo), (.submitLabel, \.submitLabel),
        (.oobContinueLabel, \.oobContinueLabel), (.oobAppURL, \.oobAppURL), (.oobAppLabel, \.oobAppLabel), (.html, \.html),
        (.htmlRefresh, \.htmlRefresh), (.expandInfoLabel, \.expandInfoLabel), (.expandInfoText, \.expandInfoText),
        (.whyInfoLabel, \.whyInfoLabel), (.whyInfoText, \.whyInfoText), (.resendLabel, \.resendInformationLabel),
    ] }

    /// The lengths SDKs accept for the texts they lay out themselves: longer or empty ones are refused.
    private static let textLimits: [(StepEntry.TextKey, Int)] = [
        (.header, 45), (.label, 45), (.submitLabel, 45), (.oobContinueLabel, 45), (.text, 350), (.whyInfoLabel, 45),
        (.expandInfoLabel, 45), (.resendLabel, 45),
    ]

    /// One screen of a challenge and the answer that passes it.
    private static func challengeStep(_ step: StepEntry, field: String,
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
    private static let screenKeys = [
        "challengeInfoHeader": "header", "challengeInfoLabel": "label", "challengeInfoText": "text",
        "submitAuthenticationLabel": "submitLabel", "challengeSelectInfo": "options", "acsHTML": "html",
        "challengeEntryBox.challengeDataEntryLabel": "label", "challengeEntryBox": "label", "infoContinueLabel": "oobContinueLabel",
    ]
}
