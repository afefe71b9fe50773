public import EMV3DS
public import Foundation
public import JSON
public import Store

/// One transaction as every role saw it, keyed by the `dsTransID` the DS gave it: each
/// message between the parties with its time (CReq and CRes decrypted, the device data the DS
/// decrypted), the checks made of the party under test, and the run case it belongs to.
public struct JournalEntry: ArchivableRecord {
    public enum State: String, Sendable {
        /// Messages may still come: a challenge, a decoupled authentication, a result to relay.
        case open
        case ended
    }

    public struct Message: Sendable {
        public let from: Participant
        public let to: Participant
        public let at: Date
        /// The message type, or what the view is ("device data").
        public let type: String
        /// The message as JSON text (CReq and CRes decrypted).
        public let body: [UInt8]
        /// How the harness came to see it ("decrypted by the ACS").
        public let note: String?
        /// Whether `body` is JSON (it is written into the record as it is) or text (written as a string).
        public let isJSON: Bool
        /// A message kept as what changed from an earlier one, whose `body` is then empty: the AReq the DS relays to the
        /// ACS is the 3DS Server's with the DS's members, kept once.
        public var changes: Changes? = nil
    }

    /// What a relayed message changed of the message it relays: its members set (replacing one of the same name in place,
    /// else added at the end, in order), and those removed.
    public struct Changes: Sendable {
        /// The index of the message it relays.
        public let of: Int
        public let set: [(key: String, value: JSONValue)]
        public let removed: [String]

        /// `relayed` as the changes of `original` (two objects), or nil when either is not an object.
        init?(of index: Int, original: JSONValue, relayed: JSONValue) {
            guard case .object(let before) = original, case .object(let after) = relayed else { return nil }
            of = index
            (set, removed) = Self.inPlace(before, after) ?? Self.byName(before, after)
        }

        /// The changes of a relay that changed the message in place, as `JSONValue.set` does: members kept in their
        /// order, some replaced, some removed, new ones appended. Read in one pass, no name hashed (this runs for every
        /// relayed AReq, under the journal's lock); nil when `after` is not of that form.
        static func inPlace(_ before: [(key: String, value: JSONValue)], _ after: [(key: String, value: JSONValue)])
            -> (set: [(key: String, value: JSONValue)], removed: [String])? {
            var set: [(key: String, value: JSONValue)] = []
            var removed: [String] = []
            var next = 0
            for member in before {
                if next < after.count, after[next].key == member.key {
                    if after[next].value != member.value { set.append(after[next]) }
                    next += 1
                } else {
                    removed.append(member.key)
                }
            }
            let appended = after[next...]
            // A member moved (or repeated) is not a change in place: an appended name is new, a removed one gone.
            guard appended.allSatisfy({ added in !before.contains { $0.key == added.key } }),
                  removed.allSatisfy({ name in !after.contains { $0.key == name } }) else { return nil }
            set += appended
            return (set, removed)
        }

        /// The changes of any two objects, by name: the members of `after` not in `before` as they are, and the names gone.
        static func byName(_ before: [(key: String, value: JSONValue)], _ after: [(key: String, value: JSONValue)])
            -> (set: [(key: String, value: JSONValue)], removed: [String]) {
            var earlier: [String: JSONValue] = [:]
            for (key, value) in before { earlier[key] = value }
            let kept = Set(after.map(\.key))
            return (after.filter { earlier[$0.key] != $0.value }, before.map(\.key).filter { !kept.contains($0) })
        }

        init(of index: Int, set: [(key: String, value: JSONValue)], removed: [String]) {
            of = index
            self.set = set
            self.removed = removed
        }

        /// Changes as a stored message writes them (`set`, `removed`).
        init?(stored message: JSONValue, of index: Int) {
            guard case .object(let set)? = message["set"], case .array(let removed)? = message["removed"] else { return nil }
            self.init(of: index, set: set, removed: removed.compactMap(\.stringValue))
        }

        /// The relayed message made whole from `original`.
        func applied(to original: JSONValue) -> JSONValue? {
            guard case .object(var members) = original else { return nil }
            members.removeAll { removed.contains($0.key) }
            for (key, value) in set {
                if let index = members.firstIndex(where: { $0.key == key }) { members[index].value = value } else { members.append((key, value)) }
            }
            return .object(members)
        }
    }

    /// The run and case a transaction was attached to.
    public struct RunCase: Sendable, Equatable {
        public let run: String
        public let caseID: String

        public init(run: String, caseID: String) {
            self.run = run
            self.caseID = caseID
        }
    }

    public let dsTransID: String
    public let startedAt: Date
    public var ids: TransactionIDs
    public let maskedPAN: String
    /// The card number as the messages carry it, to mask it in them as the record is written; never shown.
    private let pan: String?
    /// The card number, to bind the transaction to the run case it was issued to; never shown.
    public var cardNumber: String? { pan }
    public let version: String?
    /// `deviceChannel`: 01 app, 02 browser, 03 3RI.
    public let channel: String?
    public var scenario: String?
    public var runCase: RunCase?
    /// The run case the party under test named for this transaction (the `X-Harness-Case` header).
    public var caseTag: String?
    /// Why that tag attached the transaction to nothing.
    public var caseTagProblem: String?
    /// The type of the party's message a role refused with an Erro (an AReq, a PReq): a test run that finds no case for it
    /// shows it among the messages refused outside its cases.
    public var refused: String?
    /// Whom a refused message's failed checks judge: the runs it concerns.
    public var refusedParties: Set<ConformanceCheck.Party> {
        refused == nil ? [] : Set(checks.filter { $0.verdict == .fail }.map(\.check.party))
    }
    public var transStatus: String?
    public var state = State.open
    public var endedBecause: String?
    public var messages: [Message] = []
    public var checks: [CheckResult] = []

    public init(dsTransID: String, startedAt: Date = Date(), ids: TransactionIDs, pan: String?, version: String?, channel: String?,
                scenario: String?) {
        self.dsTransID = dsTransID
        self.startedAt = startedAt
        self.ids = ids
        maskedPAN = pan.map(CardNumber.masked) ?? ""
        self.pan = pan.flatMap { $0.count >= 10 && $0.allSatisfy(\.isASCII) ? $0 : nil }
        self.version = version
        self.channel = channel
        self.scenario = scenario
    }

    /// An entry as ``archivedJSON`` stored it: taken up by another instance of a cluster with its transaction. The card
    /// number is the masked one (the later messages of a transaction do not carry it); a message stored as text is text again.
    public init?(stored json: JSONValue) {
        guard let dsTransID = json["dsTransID"]?.stringValue, let started = json["startedAt"]?.stringValue.flatMap(UTCTime.date(iso8601:)) else { return nil }
        self.dsTransID = dsTransID
        startedAt = started
        ids = TransactionIDs(threeDSServerTransID: json["threeDSServerTransID"]?.stringValue, acsTransID: json["acsTransID"]?.stringValue,
                             dsTransID: dsTransID, sdkTransID: json["sdkTransID"]?.stringValue)
        maskedPAN = json["acctNumber"]?.stringValue ?? ""
        pan = nil
        version = json["messageVersion"]?.stringValue
        channel = json["deviceChannel"]?.stringValue
        scenario = json["scenario"]?.stringValue
        if let run = json["run"]?.stringValue, let caseID = json["case"]?.stringValue { runCase = RunCase(run: run, caseID: caseID) }
        caseTag = json["caseTag"]?.stringValue
        caseTagProblem = json["caseTagProblem"]?.stringValue
        refused = json["refused"]?.stringValue
        transStatus = json["transStatus"]?.stringValue
        state = json["state"]?.stringValue.flatMap(State.init(rawValue:)) ?? .open
        endedBecause = json["endedBecause"]?.stringValue
        checks = (json["checks"]?.arrayValue ?? []).compactMap(CheckResult.init(json:))
        for stored in json["messages"]?.arrayValue ?? [] {
            guard let from = stored["from"]?.stringValue.flatMap(Participant.init(rawValue:)), let to = stored["to"]?.stringValue.flatMap(Participant.init(rawValue:)),
                  let type = stored["type"]?.stringValue else { continue }
            let at = stored["at"]?.stringValue.flatMap(UTCTime.date(iso8601:)) ?? started
            if let base = stored["changesOf"]?.numberText.flatMap({ Int($0) }), let changes = Changes(stored: stored, of: base) {
                messages.append(Message(from: from, to: to, at: at, type: type, body: [], note: stored["note"]?.stringValue, isJSON: true, changes: changes))
                continue
            }
            let copied = stored["sameAs"]?.numberText.flatMap { Int($0) }.flatMap { messages.indices.contains($0) ? messages[$0] : nil }
            let (body, isJSON): ([UInt8], Bool) = switch stored["message"] {
            case .string(let text)?: (Array(text.utf8), false)
            case let value?: (JSONWriter.write(value), true)
            case nil: (copied?.body ?? [], copied?.isJSON ?? true)
            }
            messages.append(Message(from: from, to: to, at: at, type: type, body: body, note: stored["note"]?.stringValue, isJSON: isJSON))
        }
    }

    /// Records `result`, keeping the worst verdict of a check made several times (each CReq's counter).
    /// Adds a message between two parties: `body` as it came or went, JSON unless `isJSON` is false
    /// (a JWE that did not decrypt, an answer a fault garbled).
    public mutating func add(from: Participant, to: Participant, type: String, body: [UInt8], note: String? = nil, isJSON: Bool = true) {
        // A relayed message (the ARes, RReq and RRes pass the DS unchanged) shares its first copy's
        // bytes: an entry is kept in memory, and an ARes with acsSignedContent is 4.5 KB.
        let body = messages.first { $0.body.count == body.count && $0.body == body }?.body ?? body
        messages.append(Message(from: from, to: to, at: Date(), type: type, body: body, note: note, isJSON: isJSON))
    }

    /// Adds a message that relays the first one of its type from `source`, kept as what it changed of it (``Changes``):
    /// `original` is that message as read, `relayed` this one as sent. Kept whole when there is no such message.
    public mutating func add(from: Participant, to: Participant, type: String, relaying source: Participant, original: JSONValue,
                             relayed: JSONValue, body: @autoclosure () -> [UInt8]) {
        guard let index = messages.firstIndex(where: { $0.type == type && $0.from == source && $0.isJSON && $0.changes == nil }),
              let changes = Changes(of: index, original: original, relayed: relayed) else {
            return add(from: from, to: to, type: type, body: body())
        }
        messages.append(Message(from: from, to: to, at: Date(), type: type, body: [], note: nil, isJSON: true, changes: changes))
    }

    /// Ends the entry (first reason kept); `transStatus` is the final one when given.
    public mutating func end(transStatus: String?, because reason: String) {
        if let transStatus { self.transStatus = transStatus }
        guard state == .open else { return }
        state = .ended
        endedBecause = reason
    }

    public mutating func record(_ result: CheckResult) {
        if let index = checks.firstIndex(where: { $0.check == result.check }) {
            if result.verdict.severity >= checks[index].verdict.severity { checks[index] = result }
        } else {
            checks.append(result)
        }
    }

    /// fail when a check failed, warning when one warned, pass when every check passed; nil with no checks.
    public var verdict: CheckResult.Verdict? {
        checks.map(\.verdict).max { $0.severity < $1.severity }
    }

    /// The record, written on the store's thread: each message's JSON goes in as it came (the
    /// card number masked in its bytes), not parsed and written again; a message relayed unchanged
    /// (the ARes from the ACS to the DS, then to the 3DS Server) is `"sameAs"` the index of its
    /// first copy; checks are stored without the catalogue's texts. ``json`` reads it back whole.
    public var archivedJSON: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024 + messages.reduce(0) { $0 + $1.body.count + 160 })
        JSONWriter.appendObject(summaryMembers, continuingWith: "checks", to: &out)
        out.append(UInt8(ascii: "["))
        for (index, check) in checks.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            check.appendStored(to: &out)
        }
        out += #"],"messages":["#.utf8
        let masking = CardNumber.Masking(pan)
        for (index, message) in messages.enumerated() {
            out += index > 0 ? #",{"from":"#.utf8 : #"{"from":"#.utf8
            JSONWriter.append(string: message.from.rawValue, to: &out)
            Self.member("to", message.to.rawValue, to: &out)
            Self.member("type", message.type, to: &out)
            Self.member("at", UTCTime.iso8601(message.at), to: &out)
            out += #","offsetMs":"#.utf8
            out += String(Int((message.at.timeIntervalSince(startedAt) * 1000).rounded())).utf8
            if let note = message.note { Self.member("note", note, to: &out) }
            if let changes = message.changes {
                out += #","changesOf":"#.utf8
                out += String(changes.of).utf8
                out += #","set":"#.utf8
                let start = out.count
                JSONWriter.append(.object(changes.set), to: &out)
                masking?.apply(to: &out, from: start)
                out += #","removed":"#.utf8
                JSONWriter.append(.array(changes.removed.map(JSONValue.string)), to: &out)
            } else if let first = messages[..<index].firstIndex(where: { $0.changes == nil && $0.isJSON == message.isJSON && $0.body == message.body }) {
                out += #","sameAs":"#.utf8
                out += String(first).utf8
            } else {
                out += #","message":"#.utf8
                let start = out.count
                if message.isJSON { out += message.body } else { JSONWriter.append(string: String(decoding: message.body, as: UTF8.self), to: &out) }
                masking?.apply(to: &out, from: start)
            }
            out.append(UInt8(ascii: "}"))
        }
        out += "]}".utf8
        return out
    }

    /// Appends `,"key":"value"`.
    private static func member(_ key: String, _ value: String, to out: inout [UInt8]) {
        out += #",""#.utf8
        out += key.utf8
        out += #"":"#.utf8
        JSONWriter.append(string: value, to: &out)
    }

    /// The transaction as the inspector and the reports show it.
    public var json: JSONValue { (try? JSONReader.parse(archivedJSON).value).map(Self.expanded) ?? summary }

    /// A stored record made whole: each `sameAs` message given its copy's body, each check its
    /// text, reference and party.
    public static func expanded(_ record: JSONValue) -> JSONValue {
        var record = record
        if let checks = record["checks"]?.arrayValue {
            record.set("checks", .array(checks.map { CheckResult(json: $0)?.json ?? $0 }))
        }
        if let messages = record["messages"]?.arrayValue {
            record.set("messages", .array(messages.map { message in
                if let base = message["changesOf"]?.numberText.flatMap({ Int($0) }), messages.indices.contains(base),
                   let changes = Changes(stored: message, of: base), let original = messages[base]["message"],
                   let whole = changes.applied(to: original) {
                    var expanded = message
                    for key in ["changesOf", "set", "removed"] { expanded.set(key, nil) }
                    expanded.set("message", whole)
                    return expanded
                }
                guard let index = message["sameAs"]?.numberText.flatMap({ Int($0) }), messages.indices.contains(index), let body = messages[index]["message"] else {
                    return message
                }
                var whole = message
                whole.set("sameAs", nil)
                whole.set("message", body)
                return whole
            }))
        }
        return record
    }

    /// The line of the inspector's list.
    public var summary: JSONValue { .object(omittingAbsent: summaryMembers) }

    private var summaryMembers: [(String, JSONValue?)] {
        [
            ("dsTransID", .string(dsTransID)), ("threeDSServerTransID", .string(ids.threeDSServerTransID)),
            ("acsTransID", .string(ids.acsTransID)), ("sdkTransID", .string(ids.sdkTransID)),
            ("startedAt", .string(UTCTime.iso8601(startedAt))), ("acctNumber", .string(maskedPAN)),
            ("messageVersion", .string(version)), ("deviceChannel", .string(channel)), ("scenario", .string(scenario)),
            ("run", .string(runCase?.run)), ("case", .string(runCase?.caseID)),
            ("caseTag", .string(caseTag)), ("caseTagProblem", .string(caseTagProblem)), ("refused", .string(refused)),
            ("state", .string(state.rawValue)), ("endedBecause", .string(endedBecause)), ("transStatus", .string(transStatus)),
            ("durationMs", messages.last.map { .number(String(Int(($0.at.timeIntervalSince(startedAt) * 1000).rounded()))) }),
            ("verdict", .string(verdict?.rawValue)),
            ("failedChecks", .number(String(checks.count { $0.verdict == .fail }))),
        ]
    }
}

extension CheckResult.Verdict {
    /// pass < warning < fail.
    public var severity: Int {
        switch self {
        case .pass: 0
        case .warning: 1
        case .fail: 2
        }
    }
}
