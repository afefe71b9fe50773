import EMV3DS
import Faults
import Foundation
import JSON
public import Scenarios
import Synchronization
import Yams

/// The scenario file (`config/scenarios.yaml`): the named outcomes and their test PANs.
/// A scenario has exactly one of `transStatus` (frictionless), `challenge` or `decoupled`.
public enum ScenarioFile {
    /// Reads and checks a scenario file.
    public static func load(path: String) throws(ConfigurationError) -> ScenarioCatalog {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw .unreadable(path: path) }
        return try parse(text, source: path)
    }

    /// Parses scenario YAML; errors name `source`, the scenario and the field. A text read before gives the catalog it
    /// gave then: the same bytes (`==` on strings would take another normalisation of the screens' texts for the same).
    public static func parse(_ text: String, source: String = "scenarios") throws(ConfigurationError) -> ScenarioCatalog {
        if let known = recent.withLock({ entries in entries.last { $0.text.utf8.elementsEqual(text.utf8) }?.catalog }) { return known }
        let catalog = try read(text, source: source)
        recent.withLock { entries in
            entries.append((text, catalog))
            if entries.count > 4 { entries.removeFirst() }
        }
        return catalog
    }

    /// The catalogs of the last texts read, newest last. Reading one costs a tenth of a second in a debug build (the
    /// YAML, and the negative cases probed element by element against the field tables), and a process reads the same
    /// file again for each harness it starts, each team and each reload.
    private static let recent = Mutex<[(text: String, catalog: ScenarioCatalog)]>([])

    private static func read(_ text: String, source: String) throws(ConfigurationError) -> ScenarioCatalog {
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

    static func scenario(_ entry: Entry, at path: String, source: String, location: YAMLLocation?) throws(ConfigurationError) -> Scenario {
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
    static func outcomeFields(_ fields: [String: YAMLJSON], invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> JSONValue {
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

    static func threeDSMethod(_ entry: ThreeDSMethodEntry, invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> ThreeDSMethodScript {
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
    static func trigger(_ entry: Entry, invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> Trigger {
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

    static func faults(_ entries: [FaultEntry], invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> [FaultInjection] {
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

    static func expectation(_ entry: ExpectEntry, invalid: (String, String) -> ConfigurationError) throws(ConfigurationError) -> Expectation {
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
    static func finalStatus(_ text: String, _ reason: String?, allowed: [TransStatus], field: String,
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

}
