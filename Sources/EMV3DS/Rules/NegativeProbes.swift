public import JSON

/// What a negative case may spoil in a message, read from its table with the rest of the message as it is: so a conditional
/// element (2.3.1's `oobContinueLabel`, required only without `oobAppLabel`) counts only where its condition holds. Each
/// answer is one the table refuses for that element alone, so the Erro due is never in doubt. Left out: `messageType` and
/// `messageVersion` (their absence or change is another error).
extension MessageRules {
    /// The elements of `message` that Annex A requires there: each one left out makes a message the receiver must refuse,
    /// with Erro 201 naming it. What the harness requires beyond Annex A is left out (a party is never failed for
    /// following the specification).
    public func requiredElements(of message: JSONValue, context: MessageContext) -> [String] {
        let beyond = Set(table.fields.filter { $0.applies(to: context.version) && $0.beyondAnnexA != nil }.map(\.name))
        return probed(message).filter { name in
            guard !beyond.contains(name) else { return false }
            var without = message
            without.set(name, nil)
            return check(without, context: context).violations.contains { $0.code == .requiredElementMissing && $0.field == name }
        }
    }

    /// The string elements of `message` that the table refuses sent as "" with 203 (Annex A: a data element is not sent
    /// empty; Table A.4: 203, its name in `errorDetail`): those optional there. An element required there and sent empty
    /// reads as missing (201) as well as invalid (203), so it is left out: a negative case takes one reading only.
    public func elementsRefusedEmpty(of message: JSONValue, context: MessageContext) -> [String] {
        probed(message).filter { name in
            guard message[name]?.stringValue != nil else { return false }
            var emptied = message
            emptied.set(name, .string(""))
            return refusesAlone(emptied, name, context)
        }
    }

    /// The values the table allows `element` in `version`, when it takes them from a set; nil for an element of another
    /// format, or one the version does not define.
    public func allowedValues(of element: String, in version: MessageVersion) -> [String]? {
        for rule in table.fields where rule.name == element && rule.applies(to: version) {
            if case .oneOf(let values) = rule.format { return values }
        }
        return nil
    }

    /// For each element of `message` whose value the table takes from a set, a value outside the set of the version that
    /// the table refuses with 203 naming it (Annex A: a value the version does not define is invalid; Table A.4: 203): one
    /// another version defines when there is one (`acsUiType` 06 before 2.3.1, which a parser of every version's values
    /// wrongly takes), else one no version defines.
    public func valuesOutsideTheirSet(of message: JSONValue, context: MessageContext) -> [(element: String, value: String)] {
        probed(message).compactMap { name -> (element: String, value: String)? in
            guard message[name]?.stringValue != nil, let allowed = allowedValues(of: name, in: context.version) else { return nil }
            let elsewhere = MessageVersion.allCases.reversed().flatMap { allowedValues(of: name, in: $0) ?? [] }
            let madeUp = allowed.first.map { String(repeating: $0.allSatisfy(\.isNumber) ? "9" : "Z", count: $0.count) } ?? "Z"
            for candidate in elsewhere + [madeUp] where !allowed.contains(candidate) {
                var spoilt = message
                spoilt.set(name, .string(candidate))
                if refusesAlone(spoilt, name, context) { return (name, candidate) }
            }
            return nil
        }
    }

    /// The members a negative case may spoil.
    private func probed(_ message: JSONValue) -> [String] {
        (message.objectMembers ?? []).map(\.key).filter { !["messageType", "messageVersion"].contains($0) }
    }

    /// True when the table refuses `message` with 203 about `name`, and for nothing else.
    private func refusesAlone(_ message: JSONValue, _ name: String, _ context: MessageContext) -> Bool {
        let violations = check(message, context: context).violations
        return !violations.isEmpty && violations.allSatisfy { $0.code == .formatInvalid && $0.field == name }
    }
}
