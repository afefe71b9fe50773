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
}
