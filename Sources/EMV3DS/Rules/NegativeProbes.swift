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

    /// The element a duplicated-member case writes twice, with its value, in `message`: the first element Annex A requires
    /// there that names no transaction, when the table refuses the message read with it twice with 204 naming it alone
    /// (Table A.4: 204, "duplicate data element", the element's name in errorDetail). One per message: the member's name
    /// does not change what the reader must do.
    public func elementToDuplicate(in message: JSONValue, context: MessageContext) -> String? {
        guard let name = requiredElements(of: message, context: context).first(where: { !TransactionIDs.names.contains($0) }),
              let spoilt = NegativeValue.duplicating(name, in: message),
              let read = try? JSONReader.parse(JSONWriter.write(spoilt)) else { return nil }
        let violations = check(read.value, context: context, duplicates: read.duplicates).violations
        return !violations.isEmpty && violations.allSatisfy({ $0.code == .duplicateElement && $0.field == name }) ? name : nil
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

    /// The elements of `message` that the table refuses sent as a JSON value of another type (``NegativeValue/ofAnotherType(_:)``),
    /// with 203 naming them alone (Annex A gives each element's format; Table A.4: 203, "data element not in the required
    /// format"): a string sent as a number, an object as the string of its JSON text. Not the transaction ids: one of
    /// another type names no transaction the receiver has as well as being malformed, so 301 is as right a reading as 203,
    /// and a negative case takes one reading only.
    public func elementsRefusedOfAnotherType(of message: JSONValue, context: MessageContext) -> [String] {
        probed(message).filter { name in
            guard !TransactionIDs.names.contains(name), let value = message[name] else { return false }
            var spoilt = message
            spoilt.set(name, NegativeValue.ofAnotherType(value))
            return refusesAlone(spoilt, name, context)
        }
    }

    /// A value of the format the table gives `element` in `version` (``FieldFormat/example``): nil for an element of a format
    /// made of other tables, or one the version does not define.
    public func example(of element: String, in version: MessageVersion) -> JSONValue? {
        format(of: element, in: version)?.example
    }

    /// The lengths in characters the table allows `element` in `version`, when its format bounds them; nil otherwise.
    public func lengthBounds(of element: String, in version: MessageVersion) -> ClosedRange<Int>? {
        for rule in table.fields where rule.name == element && rule.applies(to: version) {
            switch rule.format {
            case .string(let bounds), .numeric(let bounds), .numericAtLeast(let bounds, _): return bounds
            case .url(let most), .httpsURL(let most), .base64url(let most): return 1...most
            default: return nil
            }
        }
        return nil
    }

    /// For each string element of `message` whose format bounds its length, the lengths just outside the bounds (one more
    /// than the most, one less than the least where that is not 0) that the table refuses with 203 naming it alone (Annex A
    /// "Length"; Table A.4: 203). The value is the element's own, cut or lengthened (``NegativeValue/resized(_:to:)``).
    public func lengthsOutsideTheirBounds(of message: JSONValue, context: MessageContext) -> [(element: String, length: Int)] {
        probed(message).flatMap { name -> [(element: String, length: Int)] in
            guard let text = message[name]?.stringValue, let bounds = lengthBounds(of: name, in: context.version) else { return [] }
            return [bounds.lowerBound - 1, bounds.upperBound + 1].filter { $0 > 0 }.compactMap { length in
                var spoilt = message
                spoilt.set(name, .string(NegativeValue.resized(text, to: length)))
                return refusesAlone(spoilt, name, context) ? (name, length) : nil
            }
        }
    }

    /// For each string element of `message` whose format has a shape beyond its length (digits, a URL's scheme, a date,
    /// base64url), the break (``FieldFormat/formatBreak``) that keeps its length and that the table refuses with 203 naming
    /// it alone (Annex A "Format"; Table A.4: 203, "data element not in the required format"). Not the transaction ids: a
    /// malformed one names no transaction as well (301), as for ``elementsRefusedOfAnotherType(of:context:)``.
    public func elementsRefusedMalformed(of message: JSONValue, context: MessageContext) -> [(element: String, break: NegativeValue.FormatBreak)] {
        probed(message).compactMap { name -> (element: String, break: NegativeValue.FormatBreak)? in
            guard !TransactionIDs.names.contains(name), let text = message[name]?.stringValue,
                  let broken = format(of: name, in: context.version)?.formatBreak, let spoilt = broken.apply(to: text) else { return nil }
            var message = message
            message.set(name, .string(spoilt))
            return refusesAlone(message, name, context) ? (name, broken) : nil
        }
    }

    /// The elements another version of the table defines and `context`'s version does not, in table order, that `message`
    /// may carry each alone and still be taken: what a sender writing for another version adds (2.2.0's
    /// `whitelistingInfoText` in a 2.1.0 or 2.3.1 CRes, 2.3.1's `trustListInfoText` before it). No rule of Annex A refuses
    /// such an element, and a receiver rejects a message for no validation the tables do not list (Annex A, A.2 "Field
    /// Edit Criteria", 2.3.1): it ignores the element, as the harness does (a warning on the transaction). Not the
    /// transaction ids (2.2.0's `sdkTransID` in a 2.1.0 RReq): any value given one names no transaction, and a reader that
    /// looks it up answers 301 for that; nor an element whose value would be empty (`{}`, `[]`), which is another fault,
    /// or of which no value can be made (a list of objects).
    public func elementsOtherVersionsDefine(besides message: JSONValue, context: MessageContext) -> [String] {
        var seen: Set<String> = []
        return table.fields.compactMap { rule -> String? in
            let name = rule.name
            guard seen.insert(name).inserted, !TransactionIDs.names.contains(name), !defines(name, in: context.version), message[name] == nil,
                  let value = exampleFromAnotherVersion(of: name, besides: context.version), value != .object([]), value != .array([]) else { return nil }
            var spoilt = message
            spoilt.set(name, value)
            return check(spoilt, context: context).violations.isEmpty ? name : nil
        }
    }

    /// The conditional elements of `context`'s version that a rule has the receiver ignore where their condition does not
    /// hold (``FieldRule/ignoredOutsideItsCondition``), in table order, that `message` lacks and may carry there: taken by
    /// the table, and not required by it. 2.2.0's and 2.3.1's `transStatus` in a CRes that is not the final one.
    public func elementsIgnoredOutsideTheirCondition(besides message: JSONValue, context: MessageContext) -> [String] {
        table.fields.compactMap { rule -> String? in
            guard rule.applies(to: context.version), rule.ignoredOutsideItsCondition != nil, rule.presence.isConditional,
                  message[rule.name] == nil, let value = rule.format.example else { return nil }
            var spoilt = message
            spoilt.set(rule.name, value)
            let taken = check(spoilt, context: context).violations.isEmpty
            return taken && !requiredElements(of: spoilt, context: context).contains(rule.name) ? rule.name : nil
        }
    }

    /// The rule that has the receiver ignore `element` where its condition does not hold in `version`, when one does.
    public func ignoredOutsideItsCondition(_ element: String, in version: MessageVersion) -> String? {
        table.fields.first { $0.name == element && $0.applies(to: version) }?.ignoredOutsideItsCondition
    }

    /// A value of `element` of the format the newest version that defines it, other than `version`, gives it (the shortest
    /// ``FieldFormat/example``): right in type and length there, not necessarily in meaning (a status comes without the
    /// source a message of that version would give it). An object of members with rules of their own carries its required
    /// members. Nil when only `version` defines it, or no value can be made.
    public func exampleFromAnotherVersion(of element: String, besides version: MessageVersion) -> JSONValue? {
        let rule = MessageVersion.allCases.reversed().lazy.filter { $0 != version }
            .compactMap { other in self.table.fields.first { $0.name == element && $0.applies(to: other) }.map { ($0, other) } }.first
        guard let (rule, other) = rule else { return nil }
        if case .fields(let inner) = rule.format {
            let members = inner.fields.filter { $0.applies(to: other) && $0.presence == .required }
                .compactMap { member in member.format.example.map { (member.name, $0) } }
            return members.isEmpty ? nil : .object(members)
        }
        return rule.format.example
    }

    /// The format the table gives `element` in `version`; nil for one the version does not define.
    public func format(of element: String, in version: MessageVersion) -> FieldFormat? {
        table.fields.first { $0.name == element && $0.applies(to: version) }?.format
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
