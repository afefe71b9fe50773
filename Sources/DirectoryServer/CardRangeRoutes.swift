import EMV3DS
import JSON
import Logging
import Messaging
import Net
import Scenarios

// The card ranges as the admin API shows and changes them, and as a PRes lists them.
extension DirectoryServer {
    /// `areq.card-range`: the card is in a range the DS's PRes holds now for `team`, in a version that range offers.
    /// Only a change of the ranges can fail it: the configured ranges offer every version.
    func cardRangeCheck(_ areq: AReq, team: String?) -> CheckResult {
        let cardRanges = cardRanges.log(team)
        guard cardRanges.hasChanges else { return .pass(.areqCardRange) }
        let pan = areq.acctNumber
        let serial = cardRanges.serial
        let configured = configuredRanges()
        guard let range = cardRanges.current(base: configured).first(where: { $0.contains(pan: pan) }) else {
            guard configured.contains(where: { $0.contains(pan: pan) }) else { return .pass(.areqCardRange) }  // never enrolled: outOfRange answers
            return .fail(.areqCardRange, "no card range of the DS holds \(CardNumber.masked(pan)) since a change (serial \(serial)): "
                                         + "a 3DS Server sends no AReq for a card its ranges do not hold")
        }
        guard let versions = range.versions, versions.contains(areq.version) else {
            let offered = range.versions.map { "\($0.lowerBound.rawValue) to \($0.upperBound.rawValue)" } ?? "no version"
            return .fail(.areqCardRange, "messageVersion \(areq.version.rawValue) is not offered by the card's range \(range.startRange)-\(range.endRange) "
                                         + "(\(offered), serial \(serial))")
        }
        return .pass(.areqCardRange)
    }

    /// `GET /admin/ds/card-ranges`: the ranges as a full PRes gives them now in the request's team's scope, with the serial.
    func cardRangeListing(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        let cardRanges = cardRanges.log(try request.team())
        return .emv(.object([("serialNum", .string(cardRanges.serial)),
                             ("cardRangeData", .array(cardRanges.current(base: configuredRanges()).map { $0.json(version: .v2_2_0) }))]))
    }

    /// `POST /admin/ds/card-ranges`: a change the next PReqs of the request's team get (`actionInd` A adds a range within
    /// a scheme that overlaps none, M modifies and D deletes a range the listing gives, by its exact bounds).
    func changeCardRange(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        guard request.body.count <= 4096 else { throw HTTPError(.payloadTooLarge, "a card-range change is at most 4096 bytes") }
        let team = try request.team()
        // Checked against the log it is recorded in: a team's reset in between leaves it in a log no longer read.
        guard let cardRanges = self.cardRanges.logForChange(team, change: request.headers[HarnessChangeHeader.name]) else {
            throw HTTPError(.conflict, "\(TeamCardRanges.maxTeams) teams hold card-range changes already: a team's reset (DELETE /admin/team) drops its own")
        }
        let json = try request.jsonBody()
        guard let action = json["actionInd"]?.stringValue, ["A", "M", "D"].contains(action) else {
            throw HTTPError(.badRequest, "actionInd must be A (add), M (modify) or D (delete)")
        }
        guard let start = json["startRange"]?.stringValue, let end = json["endRange"]?.stringValue, start.count == end.count,
              (13...19).contains(start.count), (start + end).allSatisfy({ ("0"..."9").contains($0) }), start <= end else {
            throw HTTPError(.badRequest, "startRange and endRange must be card numbers of one length (13-19 digits), startRange first")
        }
        func version(_ key: String, _ fallback: MessageVersion) throws(HTTPError) -> MessageVersion {
            guard let text = json[key]?.stringValue else { return fallback }
            guard let version = MessageVersion(rawValue: text) else {
                throw HTTPError(.badRequest, "\(key) must be one of \(MessageVersion.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return version
        }
        let current = cardRanges.current(base: configuredRanges())
        let existing = current.first { $0.startRange == start && $0.endRange == end }
        var range = existing ?? CardRangeData(startRange: start, endRange: end, versions: MessageVersion.v2_1_0...MessageVersion.latest)
        range.acsStartProtocolVersion = try version("acsStartProtocolVersion", range.acsStartProtocolVersion)
        range.acsEndProtocolVersion = try version("acsEndProtocolVersion", range.acsEndProtocolVersion)
        guard range.acsStartProtocolVersion <= range.acsEndProtocolVersion else {
            throw HTTPError(.badRequest, "acsStartProtocolVersion must not be after acsEndProtocolVersion")
        }
        if json["threeDSMethodURL"] != nil { range.threeDSMethodURL = json["threeDSMethodURL"]?.stringValue }
        range.actionInd = action
        switch action {
        case "A":
            guard settings.schemes.scheme(for: start) != nil, settings.schemes.scheme(for: end) != nil else {
                throw HTTPError(.badRequest, "the range must lie within a configured scheme's card ranges, for the DS to route its AReqs")
            }
            if let overlap = current.first(where: { $0.startRange <= end && start <= $0.endRange && $0.startRange.count == start.count }) {
                throw HTTPError(.conflict, "the range overlaps \(overlap.startRange)-\(overlap.endRange): delete or modify that one")
            }
        default:
            guard existing != nil else {
                throw HTTPError(.notFound, "no card range \(start)-\(end): GET /admin/ds/card-ranges lists them by their exact bounds")
            }
        }
        let serial = cardRanges.record(range)
        logger.info("card range changed", metadata: ["actionInd": "\(action)", "range": "\(start)-\(end)", "serialNum": "\(serial)", "team": "\(team ?? "")"])
        return .emv(.object([("serialNum", .string(serial)), ("cardRangeData", range.json(version: .v2_2_0))]), status: .created)
    }

    /// A configured range as PRes card ranges, each with the harness ACS's 3DS Method URL
    /// (`methodURL`; none for an ACS elsewhere). A scenario whose card has its own 3DS Method
    /// gets a range of its own, cut out of the scheme's so that no two ranges overlap: its
    /// page's behaviour, or no method URL at all.
    func cardRangeData(_ range: CardRange, methodURL: String?) -> [CardRangeData] {
        let versions = MessageVersion.v2_1_0...MessageVersion.latest
        let bounds = range.panBounds
        func data(_ start: UInt64, _ end: UInt64, methodURL: String?) -> CardRangeData {
            var data = CardRangeData(startRange: Self.digits(start, bounds.start.count), endRange: Self.digits(end, bounds.start.count), versions: versions)
            data.threeDSMethodURL = methodURL
            return data
        }
        guard let low = UInt64(bounds.start), let high = UInt64(bounds.end) else { return [] }
        guard let methodURL else { return [data(low, high, methodURL: nil)] }
        // The card numbers as the range's bounds compare them (cut or padded to their length).
        let scripted: [(card: UInt64, scenario: Scenario)] = (scenarios?.catalog.scenarios ?? []).compactMap { scenario in
            guard scenario.threeDSMethod != .standard, let pan = scenario.pan, range.contains(pan: pan) else { return nil }
            return UInt64(CardNumber.aligned(pan, toLength: bounds.start.count)).map { ($0, scenario) }
        }.sorted { $0.card < $1.card }
        var ranges: [CardRangeData] = []
        var next = low
        for (card, scenario) in scripted where card >= next {
            if card > next { ranges.append(data(next, card - 1, methodURL: methodURL)) }
            let own = scenario.threeDSMethod.hasURL ? methodURL + "?scenario=" + FormEncoding.encode(scenario.name) : nil
            ranges.append(data(card, card, methodURL: own))
            next = card + 1
        }
        if next <= high { ranges.append(data(next, high, methodURL: methodURL)) }
        return ranges
    }

    static func digits(_ number: UInt64, _ count: Int) -> String {
        let text = String(number)
        return String(repeating: "0", count: max(0, count - text.count)) + text
    }

    /// Drops `team`'s card-range changes (its reset): its PReqs get the configured ranges again. How many there were.
    public func dropCardRangeChanges(team: String) -> Int { cardRanges.drop(team) }
}
