public import EMV3DS
public import Faults
import JSON

/// Negative cases generated from the field tables: each element of a message the harness sends to the party under test,
/// spoilt, with the answer the specification requires of the receiver (for a 3DS Server, its ARes and RReq:
/// NegativeServerScenarios.swift). For an SDK: the first CRes of each screen type
/// without one of the elements the CRes table requires for that screen in a version (Erro 201 naming it), or with one of
/// its string elements sent as "" or, where the table takes its value from a set, with a value outside the version's set
/// (Erro 203 naming it); the SDK validates each CRes and sends an Error Message (Core specification; Annex A Table A.4,
/// the element's name in `errorDetail`).
public enum NegativeScenarios {
    /// The prefix of every generated scenario's name.
    public static let prefix = "negative-"
    /// The generated scenarios' cards: this prefix, a serial and the Luhn digit (16 digits, in the "4" range).
    static let cardPrefix = "400000009"

    /// The cases of each screen type, on the scripted challenge of that type (the first of `scenarios` without faults, of a
    /// card): its first CRes without each element required there, or with each string element empty, in the versions
    /// where the table says so.
    public static func cres(from scenarios: [Scenario]) -> [Scenario] {
        var serial = 0
        // An element every screen carries (the ids, the counter, acsUiType) is a case of the first screen type only.
        var covered: [String: Set<MessageVersion>] = [:]
        return ACSUIType.allCases.flatMap { uiType -> [Scenario] in
            guard let base = scenarios.first(where: { showsFirst(uiType, $0) }), case .challenge(let script) = base.outcome else { return [] }
            var versionsByCase: [(mutation: Mutation, element: String, value: String?, versions: [MessageVersion])] = []
            for version in MessageVersion.allCases where uiType.since <= version {
                let screen = script.screen(at: 0, in: version)
                let first = CRes(messageVersion: version, ids: placeholderIDs, counter: 0, content: .screen(screen)).json
                let context = MessageContext(version: version, channel: .app)
                var found = probe(first, context: context, final: false)
                // The final CRes (the answer to the last step's CReq) of the text screen's challenge: its own elements.
                if uiType == .text {
                    let final = CRes(messageVersion: version, ids: placeholderIDs, counter: script.steps.count, content: .final(.authenticated)).json
                    found += probe(final, context: context, final: true)
                }
                for (mutation, element, value) in found {
                    let key = "\(mutation.rawValue) \(element) \(value ?? "")"
                    if everyScreen.contains(element), !covered[key, default: []].insert(version).inserted { continue }
                    if let index = versionsByCase.firstIndex(where: { $0.mutation == mutation && $0.element == element && $0.value == value }) {
                        versionsByCase[index].versions.append(version)
                    } else {
                        versionsByCase.append((mutation, element, value, [version]))
                    }
                }
            }
            // Members no version defines, which the SDK ignores (a party that refuses them fails): in the first CRes of
            // the text screen, and in its final CRes (stripe/stripe-android PR 10590: ACSs send extra members there).
            // And an extension no version defines: refused with 202 when critical, ignored when not.
            if uiType == .text {
                versionsByCase.append((.unknownMember, unknownMember, nil, MessageVersion.allCases))
                versionsByCase.append((.unknownMemberInFinal, unknownMember, nil, MessageVersion.allCases))
                versionsByCase.append((.criticalExtension, "messageExtension", nil, MessageVersion.allCases))
                versionsByCase.append((.nonCriticalExtension, "messageExtension", nil, MessageVersion.allCases))
            }
            return versionsByCase.map { mutation, element, value, versions in
                var scenario = base
                scenario.name = "\(prefix)cres-\(uiType.rawValue)-\(mutation.rawValue)-\(element)" + (value.map { "-\($0)" } ?? "")
                serial += 1
                let digits = cardPrefix + String(repeating: "0", count: 6 - String(serial).count) + String(serial)
                scenario.pan = digits + String(CardNumber.luhnCheckDigit(for: digits))
                scenario.versions = Set(versions)
                let inVersions = "(\(versions.map(\.rawValue).joined(separator: ", ")))"
                // The final CRes answers the CReq after the last step.
                let round = mutation.inFinal ? script.steps.count : 0
                let which = mutation.inFinal ? "The final CRes of the challenge" : "The first CRes of a screen of acsUiType \(uiType.rawValue)"
                switch mutation {
                case .missing, .finalMissing:
                    scenario.description = "\(which) without \(element), which Annex A requires there \(inVersions)."
                    scenario.faults = [FaultInjection(.missingField(element), on: .sdk, round: round)]
                    scenario.expectation = Expectation(sdk: .protocolError, sdkErro: .requiredElementMissing,
                                                       text: "The SDK refuses the CRes: Erro 201 naming \(element), and protocolError.")
                case .empty, .finalEmpty:
                    scenario.description = "\(which) with \(element) sent as \"\" \(inVersions)."
                    scenario.faults = [FaultInjection(.emptyField(element), on: .sdk, round: round)]
                    scenario.expectation = Expectation(sdk: .protocolError, sdkErro: .formatInvalid,
                                                       text: "The SDK refuses the CRes: Erro 203 naming \(element), and protocolError.")
                case .outside, .finalOutside:
                    let value = value ?? ""
                    scenario.description = "\(which) with \(element) \"\(value)\", a value outside those the version defines for it \(inVersions)."
                    scenario.faults = [FaultInjection(.fieldValue(element, value), on: .sdk, round: round)]
                    scenario.expectation = Expectation(sdk: .protocolError, sdkErro: .formatInvalid,
                                                       text: "The SDK refuses the CRes: Erro 203 naming \(element), and protocolError.")
                case .criticalExtension:
                    scenario.description = "\(which) with a messageExtension no version defines, marked critical (criticalityIndicator true)."
                    scenario.faults = [FaultInjection(.criticalExtension, on: .sdk)]
                    scenario.expectation = Expectation(sdk: .protocolError, sdkErro: .criticalExtensionNotRecognised,
                                                       text: "The SDK refuses the CRes: Erro 202 naming the extension's id "
                                                           + "(\(Fault.criticalExtensionID)), and protocolError.")
                case .nonCriticalExtension:
                    scenario.description = "\(which) with a messageExtension no version defines, not critical (criticalityIndicator false). "
                        + "The SDK ignores it: the challenge completes, with no Erro."
                    scenario.faults = [FaultInjection(.nonCriticalExtension, on: .sdk)]
                    scenario.expectation = nil
                case .unknownMember, .unknownMemberInFinal:
                    scenario.description = "\(which) with \(element), a member no version defines. The SDK ignores it: the challenge completes, "
                        + "with no Erro."
                    scenario.faults = [FaultInjection(.unknownMember(element), on: .sdk, round: round)]
                    scenario.expectation = nil
                }
                return scenario
            }
        }
    }

    /// What a message's table (the CRes's unless said) refuses of `message` for one element alone: each element left out,
    /// sent empty, or given a value outside its version's set.
    static func probe(_ message: JSONValue, rules: MessageRules = ChallengeRules.cRes, context: MessageContext,
                              final: Bool) -> [(Mutation, String, String?)] {
        rules.requiredElements(of: message, context: context).map { (final ? .finalMissing : .missing, $0, nil) }
            + rules.elementsRefusedEmpty(of: message, context: context).map { (final ? .finalEmpty : .empty, $0, nil) }
            + rules.valuesOutsideTheirSet(of: message, context: context).map { (final ? .finalOutside : .outside, $0.element, $0.value) }
    }

    /// How a generated case spoils its CRes.
    enum Mutation: String, Sendable {
        /// An element the screen requires left out: Erro 201.
        case missing
        /// A string element sent as "": Erro 203.
        case empty
        /// An element of a set of values given one outside the version's set: Erro 203.
        case outside
        /// The same three in the final CRes.
        case finalMissing = "final-missing", finalEmpty = "final-empty", finalOutside = "final-outside"

        /// In the final CRes, which answers the CReq after the last step.
        var inFinal: Bool { [.finalMissing, .finalEmpty, .finalOutside, .unknownMemberInFinal].contains(self) }
        /// An unknown extension marked critical: Erro 202.
        case criticalExtension = "critical"
        /// An unknown extension not marked critical: ignored.
        case nonCriticalExtension = "noncritical"
        /// A member no version defines, in the first CRes: ignored.
        case unknownMember = "unknown"
        /// The same in the final CRes.
        case unknownMemberInFinal = "final-unknown"
    }

    /// The member no version defines that the unknown-member cases add.
    static let unknownMember = "harnessUnknownMember"

    /// What every CRes that shows a screen carries whatever the screen.
    static let everyScreen: Set<String> = ["threeDSServerTransID", "acsTransID", "sdkTransID", "acsCounterAtoS", "challengeCompletionInd", "acsUiType"]

    /// The ids a probed CRes carries: any UUID does.
    private static let placeholderIDs = TransactionIDs(threeDSServerTransID: "00000000-0000-4000-8000-000000000000",
                                                       acsTransID: "00000000-0000-4000-8000-000000000000",
                                                       sdkTransID: "00000000-0000-4000-8000-000000000000")

    /// Whether `scenario` is a plain scripted challenge whose first screen is of `uiType`, on a card of its own.
    private static func showsFirst(_ uiType: ACSUIType, _ scenario: Scenario) -> Bool {
        guard scenario.pan != nil, scenario.faults.isEmpty, scenario.expectation == nil, scenario.spc == nil,
              case .challenge(let script) = scenario.outcome, script.cardholder == .answers, script.decoupledFallback == nil,
              script.whitelistingInfoText == nil else { return false }
        return script.steps.first?.screen.uiType == uiType
    }
}
