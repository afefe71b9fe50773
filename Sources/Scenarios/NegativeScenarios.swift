public import EMV3DS
public import Faults

/// Negative cases generated from the field tables: each element Annex A requires of a message the harness sends to the
/// party under test, left out, with the answer the specification requires of the receiver. For an SDK: the first CRes
/// of each screen type without one of the elements the CRes table requires for that screen in a version, which the SDK
/// must refuse with Erro 201 naming it (Core specification: the SDK validates each CRes, and sends an Error Message for
/// a required data element missing, Table A.4: 201, its name in `errorDetail`).
public enum NegativeScenarios {
    /// The prefix of every generated scenario's name.
    public static let prefix = "negative-"
    /// The generated scenarios' cards: this prefix, a serial and the Luhn digit (16 digits, in the "4" range).
    static let cardPrefix = "400000009"

    /// One case per screen type and required element, on the scripted challenge of that screen type (the first of
    /// `scenarios` without faults, of a card): its first CRes without the element, in the versions that require it.
    public static func cresMissingElements(from scenarios: [Scenario]) -> [Scenario] {
        var serial = 0
        // An element every screen requires (the ids, the counter, acsUiType) is a case of the first screen type only.
        var covered: [String: Set<MessageVersion>] = [:]
        return ACSUIType.allCases.flatMap { uiType -> [Scenario] in
            guard let base = scenarios.first(where: { showsFirst(uiType, $0) }), case .challenge(let script) = base.outcome else { return [] }
            var versionsByElement: [(element: String, versions: [MessageVersion])] = []
            for version in MessageVersion.allCases where uiType.since <= version {
                let screen = script.screen(at: 0, in: version)
                let cres = CRes(messageVersion: version, ids: placeholderIDs, counter: 0, content: .screen(screen)).json
                for element in ChallengeRules.requiredElements(of: cres, in: version) {
                    if everyScreen.contains(element), !covered[element, default: []].insert(version).inserted { continue }
                    if let index = versionsByElement.firstIndex(where: { $0.element == element }) {
                        versionsByElement[index].versions.append(version)
                    } else {
                        versionsByElement.append((element, [version]))
                    }
                }
            }
            return versionsByElement.map { element, versions in
                var scenario = base
                scenario.name = "\(prefix)cres-\(uiType.rawValue)-missing-\(element)"
                serial += 1
                let digits = cardPrefix + String(repeating: "0", count: 6 - String(serial).count) + String(serial)
                scenario.pan = digits + String(CardNumber.luhnCheckDigit(for: digits))
                scenario.versions = Set(versions)
                scenario.description = "The first CRes of a screen of acsUiType \(uiType.rawValue) without \(element), which Annex A requires there "
                    + "(\(versions.map(\.rawValue).joined(separator: ", ")))."
                scenario.faults = [FaultInjection(.missingField(element), on: .sdk)]
                scenario.expectation = Expectation(sdk: .protocolError, sdkErro: .requiredElementMissing,
                                                   text: "The SDK refuses the CRes: Erro 201 naming \(element), and protocolError.")
                return scenario
            }
        }
    }

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
