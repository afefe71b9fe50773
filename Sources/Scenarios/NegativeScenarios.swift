import EMV3DS
import Faults
import JSON

/// Negative cases generated from the field tables: each element of a message the harness sends to the party under test,
/// spoilt, with the answer the specification requires of the receiver (for a 3DS Server, its ARes and RReq:
/// NegativeServerScenarios.swift). For an SDK: the first CRes of each screen type
/// without one of the elements the CRes table requires for that screen in a version (Erro 201 naming it), or with one of
/// its string elements sent as "", with a value outside the version's set where the table takes it from one, with an
/// element sent as a JSON value of another type, or with a string of a length outside its format's bounds (Erro 203
/// naming it); the SDK validates each CRes and sends an Error Message (Core specification; Annex A Table A.4, the
/// element's name in `errorDetail`).
public enum NegativeScenarios {
    /// The prefix of every generated scenario's name.
    public static let prefix = "negative-"
    /// The generated CRes cases' cards (``card(_:serial:)``).
    static let cardPrefix = "400000009"

    /// Every generated case over `scenarios`: the SDK's (CRes, the Erro in its place, acsSignedContent), then the 3DS
    /// Server's (ARes, the Erro in its place, RReq, PRes).
    static func all(from scenarios: [Scenario]) -> [Scenario] {
        cres(from: scenarios) + cresErro(from: scenarios) + signedContent(from: scenarios) + ares(from: scenarios) + challengeAres(from: scenarios)
            + otherOutcomeAres(from: scenarios) + erro(from: scenarios) + rreq(from: scenarios) + challengeRReq(from: scenarios)
            + pres(from: scenarios)
    }

    /// The cases of each screen type, on the scripted challenge of that type (the first of `scenarios` without faults, of a
    /// card): its first CRes without each element required there, or with each string element empty, in the versions
    /// where the table says so.
    public static func cres(from scenarios: [Scenario]) -> [Scenario] {
        var serial = 0
        // An element every screen carries (the ids, the counter, acsUiType) is a case of the first screen type only.
        var covered: [Spoil: Set<MessageVersion>] = [:]
        return ACSUIType.allCases.flatMap { uiType -> [Scenario] in
            guard let base = scenarios.first(where: { showsFirst(uiType, $0) }), case .challenge(let script) = base.outcome else { return [] }
            var found: [FoundCase] = []
            for version in MessageVersion.allCases where uiType.since <= version {
                let screen = script.screen(at: 0, in: version)
                let first = CRes(messageVersion: version, ids: placeholderIDs, counter: 0, content: .screen(screen)).json
                let context = MessageContext(version: version, channel: .app)
                var spoils = probe(first, context: context, final: false)
                // The final CRes (the answer to the last step's CReq) of the text screen's challenge: its own elements.
                if uiType == .text {
                    spoils += spoilsToIgnore(first, rules: ChallengeRules.cRes, context: context)
                    let final = CRes(messageVersion: version, ids: placeholderIDs, counter: script.steps.count, content: .final(.authenticated)).json
                    spoils += probe(final, context: context, final: true)
                }
                for spoil in spoils {
                    // Another version is another value per screen, the same spoil of the envelope.
                    let key = [.version, .finalVersion].contains(spoil.mutation) ? Spoil(spoil.mutation, spoil.element) : spoil
                    if everyScreen.contains(spoil.element), !covered[key, default: []].insert(version).inserted { continue }
                    add(spoil, in: version, to: &found)
                }
            }
            // Members no version defines, which the SDK ignores (a party that refuses them fails): in the first CRes of
            // the text screen, and in its final CRes (stripe/stripe-android PR 10590: ACSs send extra members there).
            // And an extension no version defines: refused with 202 when critical, ignored when not.
            if uiType == .text {
                found += [Spoil(.unknownMember, unknownMember), Spoil(.unknownMemberInFinal, unknownMember),
                          Spoil(.criticalExtension, "messageExtension"), Spoil(.nonCriticalExtension, "messageExtension")]
                    .map { FoundCase(spoil: $0, versions: MessageVersion.allCases) }
            }
            return found.map { found in
                let (spoil, versions) = (found.spoil, found.versions)
                var scenario = base
                serial += 1
                scenario.name = name("cres-\(uiType.rawValue)", spoil)
                scenario.pan = card(cardPrefix, serial: serial)
                scenario.versions = Set(versions)
                // The final CRes answers the CReq after the last step.
                scenario.faults = [FaultInjection(spoil.fault, on: .sdk, round: spoil.mutation.inFinal ? script.steps.count : 0)]
                let inVersions = "(\(versions.map(\.rawValue).joined(separator: ", ")))"
                let which = spoil.mutation.inFinal ? "The final CRes of the challenge" : "The first CRes of a screen of acsUiType \(uiType.rawValue)"
                scenario.description = "\(which) \(spoil.change) \(inVersions)."
                if let (code, naming) = spoil.erroDue {
                    scenario.expectation = Expectation(sdk: .protocolError, sdkErro: code,
                                                       text: "The SDK refuses the CRes: Erro \(code.rawValue) naming \(naming), and protocolError.")
                } else {
                    scenario.description += " The SDK ignores it: the challenge completes, with no Erro."
                    scenario.expectation = nil
                }
                return scenario
            }
        }
    }

    /// The cases of an SDK's reading of an Erro the ACS sends in place of the text screen's first CRes (an `erro` fault on
    /// the `sdk` leg, as `application/json`), spoilt from the Erro table as the 3DS Server's Erro is (``erro(from:)``), in
    /// every version: `negative-cres-01-erro-<mutation>-<element>`. Whatever is wrong with it, the SDK ends the challenge
    /// (protocolError) and sends the ACS nothing about it: "A receiving component never responds to the sending component
    /// of an Error Message, also when it is in error" (EMVCo 3DS FAQ, Technical Questions, April 2026, Q52). `sdk.erro`
    /// fails an Erro that comes, `challenge.end` a CReq.
    public static func cresErro(from scenarios: [Scenario]) -> [Scenario] {
        guard let base = scenarios.first(where: { showsFirst(.text, $0) }) else { return [] }
        // The Erro takes its ids and version from the CRes it replaces.
        let found = erroSpoils(code: erroInsteadOfTheCRes, from: .acs, channel: .app) { version in
            CRes(messageVersion: version, ids: placeholderIDs, counter: 0, content: .final(.authenticated)).json
        }
        return erroCases(found, base: base, message: "cres-\(ACSUIType.text.rawValue)-erro", cardPrefix: cresErroCardPrefix,
                         code: erroInsteadOfTheCRes, on: .sdk, spoilt: "The Erro the ACS answers the first CReq with, in place of the CRes,",
                         expectation: Expectation(sdk: .protocolError, text: "The SDK ends the challenge (protocolError) and sends the ACS nothing "
                                                      + "about the Erro, in error or not (EMVCo FAQ Q52; graded: sdk.erro, challenge.end)."))
    }

    /// The spoils of the Erro a party sends with `code` instead of the answer `answer` gives for each version, read with the
    /// Erro table in `channel`, with the versions of each; and the member no one defines, in every version.
    static func erroSpoils(code: ErrorCode, from component: ErrorComponent, channel: DeviceChannel? = nil,
                           answer: (MessageVersion) -> JSONValue) -> [FoundCase] {
        var found: [FoundCase] = []
        for version in MessageVersion.allCases {
            let erro = Fault.erroMessage(code, insteadOf: answer(version), from: component).json
            for spoil in probe(erro, rules: ErroRules.rules, context: MessageContext(version: version, channel: channel), final: false) {
                add(spoil, in: version, to: &found)
            }
        }
        return found + [FoundCase(spoil: Spoil(.unknownMember, unknownMember), versions: MessageVersion.allCases)]
    }

    /// The scenarios of the Erro cases of `found`: `base` with an `erro` fault of `code` on `leg`, the case's spoil of that
    /// Erro after it on the same leg, and `expectation`, whatever the spoil (an Erro is never answered); without one (a
    /// PRes case, whose expectation says an Erro is due), `ignored` ends the description.
    static func erroCases(_ found: [FoundCase], base: Scenario, message: String, cardPrefix: String, code: ErrorCode, on leg: FaultLeg,
                          spoilt: String, expectation: Expectation?, ignored: String = "") -> [Scenario] {
        found.enumerated().map { index, found in
            var scenario = base
            scenario.name = name(message, found.spoil)
            scenario.pan = card(cardPrefix, serial: index + 1)
            scenario.versions = Set(found.versions)
            scenario.faults = [FaultInjection(.erro(code), on: leg), FaultInjection(found.spoil.fault, on: leg)]
            scenario.description = "\(spoilt) \(found.spoil.change) (\(found.versions.map(\.rawValue).joined(separator: ", ")))."
                + (expectation == nil ? " " + ignored : "")
            scenario.expectation = expectation
            return scenario
        }
    }

    /// The code of the Erro the ACS answers the first CReq with in the SDK's Erro cases: a transient system failure.
    static let erroInsteadOfTheCRes = ErrorCode.transientSystemFailure

    /// The SDK's Erro cases' cards.
    static let cresErroCardPrefix = "400000013"

    /// What a message's table (the CRes's unless said) refuses of `message` for one element alone: each element left out,
    /// sent empty, given a value outside its version's set, sent as a JSON value of another type, or of a length outside
    /// its format's bounds; and its envelope (``envelopeSpoils(_:rules:context:final:)``).
    static func probe(_ message: JSONValue, rules: MessageRules = ChallengeRules.cRes, context: MessageContext, final: Bool) -> [Spoil] {
        rules.requiredElements(of: message, context: context).map { Spoil(final ? .finalMissing : .missing, $0) }
            + rules.elementsRefusedEmpty(of: message, context: context).map { Spoil(final ? .finalEmpty : .empty, $0) }
            + rules.valuesOutsideTheirSet(of: message, context: context).map { Spoil(final ? .finalOutside : .outside, $0.element, value: $0.value) }
            + rules.elementsRefusedOfAnotherType(of: message, context: context).map { Spoil(final ? .finalType : .type, $0) }
            + rules.lengthsOutsideTheirBounds(of: message, context: context).map {
                Spoil(final ? .finalLength : .length, $0.element, value: String($0.length))
            }
            + rules.elementsRefusedMalformed(of: message, context: context).map { Spoil(final ? .finalFormat : .format, $0.element, value: $0.break.rawValue) }
            + (rules.elementToDuplicate(in: message, context: context).map { [Spoil(final ? .finalDuplicate : .duplicate, $0)] } ?? [])
            + envelopeSpoils(message, rules: rules, context: context, final: final)
    }

    /// What a message's envelope can be spoilt with alone, in `context`'s version: `messageVersion` the nearest other version
    /// the harness speaks (the older first) whose table takes the message as it is, so that only the version is at fault,
    /// and `messageType` the type of the request it answers (or of the answer to it). The nearest first, so that the app's
    /// and the browser's message pick the same one where both can.
    static func envelopeSpoils(_ message: JSONValue, rules: MessageRules, context: MessageContext, final: Bool) -> [Spoil] {
        let own = MessageVersion.allCases.firstIndex(of: context.version) ?? 0
        let nearest = MessageVersion.allCases.enumerated().filter { $0.offset != own }
            .sorted { (abs($0.offset - own), $0.offset) < (abs($1.offset - own), $1.offset) }.map(\.element)
        let other = nearest.first { other in
            var elsewhere = context
            elsewhere.version = other
            return rules.check(message, context: elsewhere).violations.isEmpty
        }
        let counterpart = rules.messageType.counterpart
        return (other.map { [Spoil(final ? .finalVersion : .version, "messageVersion", value: $0.rawValue)] } ?? [])
            + (counterpart.map { [Spoil(final ? .finalMessageType : .messageType, "messageType", value: $0.rawValue)] } ?? [])
    }

    /// How a generated case spoils its message.
    enum Mutation: String, Sendable {
        /// An element the message requires left out: Erro 201.
        case missing
        /// A string element sent as "": Erro 203.
        case empty
        /// An element of a set of values given one outside the version's set: Erro 203.
        case outside
        /// An element sent as a JSON value of another type: Erro 203.
        case type
        /// A string element of a length outside its format's bounds (the length is the spoil's value): Erro 203.
        case length
        /// A string element of its length whose format is broken (the break is the spoil's value): Erro 203.
        case format
        /// An element written twice: Erro 204.
        case duplicate
        /// The same seven in the final CRes.
        case finalMissing = "final-missing", finalEmpty = "final-empty", finalOutside = "final-outside", finalType = "final-type",
             finalLength = "final-length", finalFormat = "final-format", finalDuplicate = "final-duplicate"
        /// `messageVersion` another version the harness speaks: Erro 102 (or 203), the transaction's version being another.
        case version
        /// `messageType` the counterpart's (the request's type in an answer): Erro 101 (or 203).
        case messageType = "messagetype"
        /// The same two in the final CRes.
        case finalVersion = "final-version", finalMessageType = "final-messagetype"
        /// An unknown extension marked critical: Erro 202.
        case criticalExtension = "critical"
        /// An unknown extension not marked critical: ignored.
        case nonCriticalExtension = "noncritical"
        /// A member no version defines, in the first CRes: ignored.
        case unknownMember = "unknown"
        /// The same in the final CRes.
        case unknownMemberInFinal = "final-unknown"
        /// An element another version defines and the message's does not: ignored (Annex A, A.2).
        case undefined
        /// A conditional element where its condition does not hold, where a rule has the receiver ignore it there.
        case misplaced

        /// In the final CRes, which answers the CReq after the last step.
        var inFinal: Bool {
            [.finalMissing, .finalEmpty, .finalOutside, .finalType, .finalLength, .finalFormat, .finalDuplicate, .unknownMemberInFinal,
             .finalVersion, .finalMessageType].contains(self)
        }
    }

    /// One way of spoiling a message: the mutation, the element, and the value it is given (`outside`), its length
    /// (`length`) or how its format is broken (`format`).
    struct Spoil: Hashable {
        let mutation: Mutation
        let element: String
        var value: String?

        init(_ mutation: Mutation, _ element: String, value: String? = nil) {
            self.mutation = mutation
            self.element = element
            self.value = value
        }

        /// The fault that spoils it so.
        var fault: Fault {
            switch mutation {
            case .missing, .finalMissing: .missingField(element)
            case .empty, .finalEmpty: .emptyField(element)
            case .outside, .finalOutside: .fieldValue(element, value ?? "")
            case .type, .finalType: .fieldType(element)
            case .length, .finalLength: .fieldLength(element, value.flatMap { Int($0) } ?? 0)
            case .format, .finalFormat: .fieldFormat(element, value.flatMap(NegativeValue.FormatBreak.init(rawValue:)) ?? .letter)
            case .duplicate, .finalDuplicate: .duplicateMember(element)
            case .version, .finalVersion: .messageVersion(value ?? "")
            case .messageType, .finalMessageType: .fieldValue(element, value ?? "")
            case .criticalExtension: .criticalExtension
            case .nonCriticalExtension: .nonCriticalExtension
            case .unknownMember, .unknownMemberInFinal: .unknownMember(element)
            case .undefined: .otherVersionMember(element)
            case .misplaced: .misplacedMember(element)
            }
        }
    }

    /// A spoil and the versions where it makes a case.
    struct FoundCase {
        let spoil: Spoil
        var versions: [MessageVersion]
    }

    /// Adds `version` to the case of `spoil` in `found`, or the case.
    static func add(_ spoil: Spoil, in version: MessageVersion, to found: inout [FoundCase]) {
        if let index = found.firstIndex(where: { $0.spoil == spoil }) {
            found[index].versions.append(version)
        } else {
            found.append(FoundCase(spoil: spoil, versions: [version]))
        }
    }

    /// A generated case's name: the prefix, what it spoils (`cres-01`, `ares`), the mutation, the element and the value.
    static func name(_ message: String, _ spoil: Spoil) -> String {
        "\(prefix)\(message)-\(spoil.mutation.rawValue)-\(spoil.element)" + (spoil.value.map { "-\($0)" } ?? "")
    }

    /// A generated case's card: `prefix`, the serial in six digits and the Luhn digit (16 digits, in the "4" range).
    static func card(_ prefix: String, serial: Int) -> String {
        let digits = prefix + String(repeating: "0", count: 6 - String(serial).count) + String(serial)
        return digits + String(CardNumber.luhnCheckDigit(for: digits))
    }

    /// The member no version defines that the unknown-member cases add.
    static let unknownMember = "harnessUnknownMember"

    /// What every CRes that shows a screen carries whatever the screen.
    static let everyScreen: Set<String> = ["threeDSServerTransID", "acsTransID", "sdkTransID", "acsCounterAtoS", "challengeCompletionInd", "acsUiType",
                                           "messageType", "messageVersion"]

    /// The id of every transaction a probed message names: any UUID does.
    static let placeholderID = "00000000-0000-4000-8000-000000000000"
    private static let placeholderIDs = TransactionIDs(threeDSServerTransID: placeholderID, acsTransID: placeholderID, sdkTransID: placeholderID)

    /// Whether `scenario` is a plain scripted challenge whose first screen is of `uiType`, on a card of its own.
    static func showsFirst(_ uiType: ACSUIType, _ scenario: Scenario) -> Bool {
        guard scenario.pan != nil, scenario.faults.isEmpty, scenario.expectation == nil, scenario.spc == nil,
              case .challenge(let script) = scenario.outcome, script.cardholder == .answers, script.decoupledFallback == nil,
              script.whitelistingInfoText == nil else { return false }
        return script.steps.first?.screen.uiType == uiType
    }
}

extension NegativeScenarios.Spoil {
    /// What the case does to its message, after the message's name: "without acsUiType, which Annex A requires there".
    var change: String {
        switch mutation {
        case .missing, .finalMissing: "without \(element), which Annex A requires there"
        case .empty, .finalEmpty: "with \(element) sent as \"\""
        case .outside, .finalOutside: "with \(element) \"\(value ?? "")\", a value outside those the version defines for it"
        case .type, .finalType: "with \(element) sent as a JSON value of another type than its format (a string as a number, an object as a string)"
        case .length, .finalLength: "with \(element) of \(value ?? "?") characters, a length outside the bounds of its format"
        case .format, .finalFormat:
            "with \(element) sent as a value that \(value.flatMap(NegativeValue.FormatBreak.init(rawValue:))?.description ?? "breaks its format")"
        case .duplicate, .finalDuplicate: "with \(element) written twice"
        case .version, .finalVersion: "with messageVersion \(value ?? ""), another version than the transaction's, its content valid in both"
        case .messageType, .finalMessageType: "with messageType \(value ?? ""), another message's type"
        case .criticalExtension where element == "crit": "with crit naming a header parameter no one defines (\(Fault.criticalHeaderParameter))"
        case .criticalExtension: "with a messageExtension no version defines, marked critical (criticalityIndicator true)"
        case .nonCriticalExtension: "with a messageExtension no version defines, not critical (criticalityIndicator false)"
        case .unknownMember, .unknownMemberInFinal: "with \(element), a member no one defines"
        case .undefined: "with \(element), which another version defines and this one does not"
        case .misplaced: "with \(element), where its condition does not hold"
        }
    }

    /// The other codes the fault's Erro may have, as a case's text says them: " (or Erro 203 naming messageType)".
    private var otherReadings: String {
        let others = (fault.erroDue.codes ?? []).dropFirst()
        return others.isEmpty ? "" : " (or Erro \(others.joined(separator: " or ")) naming \(element))"
    }

    /// The Erro the receiver owes (Table A.4) and what its errorDetail names; nil when it must ignore the change.
    var erroDue: (code: ErrorCode, naming: String)? {
        switch mutation {
        case .missing, .finalMissing: (.requiredElementMissing, element)
        case .empty, .finalEmpty, .outside, .finalOutside, .type, .finalType, .length, .finalLength, .format, .finalFormat: (.formatInvalid, element)
        case .duplicate, .finalDuplicate: (.duplicateElement, element)
        // The envelope is read two ways (Fault.erroDue): the first code, and the other said.
        case .version, .finalVersion: (.versionNotSupported, "the versions it supports" + otherReadings)
        case .messageType, .finalMessageType: (.messageNotRecognised, "messageType" + otherReadings)
        case .criticalExtension: (.criticalExtensionNotRecognised, "the extension's id (\(Fault.criticalExtensionID))")
        case .nonCriticalExtension, .unknownMember, .unknownMemberInFinal, .undefined, .misplaced: nil
        }
    }
}
