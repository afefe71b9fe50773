public import JSON

extension ChallengeRules {
    /// The elements of `cres` (a CRes that shows a screen) that Annex A requires there: each one left out makes the CRes
    /// one an SDK must refuse, with Erro 201 naming it. Read from the field table with the rest of the message as it is, so
    /// a conditional element (2.3.1's `oobContinueLabel`, required only without `oobAppLabel`) counts only where its
    /// condition holds. Left out: `messageType` and `messageVersion` (their absence is another error), and what the
    /// harness requires beyond Annex A (a party is never failed for following the specification).
    public static func requiredElements(of cres: JSONValue, in version: MessageVersion) -> [String] {
        let beyond = Set(cRes.fields.filter { $0.applies(to: version) && $0.beyondAnnexA != nil }.map(\.name))
        let context = MessageContext(version: version, channel: .app)
        return (cres.objectMembers ?? []).map(\.key).filter { name in
            guard !["messageType", "messageVersion"].contains(name), !beyond.contains(name) else { return false }
            var without = cres
            without.set(name, nil)
            return cRes.check(without, context: context).violations.contains { $0.code == .requiredElementMissing && $0.field == name }
        }
    }

    /// The string elements of `cres` that the table refuses sent as "" with 203 (Annex A: a data element is not sent
    /// empty; Table A.4: 203, its name in `errorDetail`): those optional there. An element required there and sent empty
    /// reads as missing (201) as well as invalid (203), so it is left out: a negative case takes one reading only.
    public static func elementsRefusedEmpty(of cres: JSONValue, in version: MessageVersion) -> [String] {
        let context = MessageContext(version: version, channel: .app)
        return (cres.objectMembers ?? []).filter { $0.value.stringValue != nil }.map(\.key).filter { name in
            guard !["messageType", "messageVersion"].contains(name) else { return false }
            var emptied = cres
            emptied.set(name, .string(""))
            return cRes.check(emptied, context: context).violations.contains { $0.code == .formatInvalid && $0.field == name }
        }
    }

    /// The values the CRes table allows `element` in `version`, when it allows a set of them (`acsUiType`,
    /// `challengeCompletionInd`, `transStatus`); nil for an element of another format, or one the version does not define.
    public static func allowedValues(of element: String, in version: MessageVersion) -> [String]? {
        for rule in cRes.table.fields where rule.name == element && rule.applies(to: version) {
            if case .oneOf(let values) = rule.format { return values }
        }
        return nil
    }

    /// For each element of `cres` whose value the table takes from a set, a value outside the set of `version` that the
    /// table refuses with 203 naming that element and nothing else (Annex A: a value the version does not define is
    /// invalid; Table A.4: 203): one another version defines when there is one (`acsUiType` 06 before 2.3.1, where SDKs
    /// that read every version's values wrongly take it), else one no version defines.
    public static func valuesOutsideTheirSet(of cres: JSONValue, in version: MessageVersion) -> [(element: String, value: String)] {
        let context = MessageContext(version: version, channel: .app)
        return (cres.objectMembers ?? []).compactMap { member -> (element: String, value: String)? in
            let name = member.key
            guard !["messageType", "messageVersion"].contains(name), member.value.stringValue != nil,
                  let allowed = allowedValues(of: name, in: version) else { return nil }
            let elsewhere = MessageVersion.allCases.reversed().flatMap { allowedValues(of: name, in: $0) ?? [] }
            let madeUp = allowed.first.map { String(repeating: $0.allSatisfy(\.isNumber) ? "9" : "Z", count: $0.count) } ?? "Z"
            for candidate in elsewhere + [madeUp] where !allowed.contains(candidate) {
                var spoilt = cres
                spoilt.set(name, .string(candidate))
                let violations = cRes.check(spoilt, context: context).violations
                if !violations.isEmpty, violations.allSatisfy({ $0.code == .formatInvalid && $0.field == name }) { return (name, candidate) }
            }
            return nil
        }
    }
}
