import EMV3DS
import EMVCrypto
import JSON
import Logging
import Messaging
import Net
import Synchronization

extension ThreeDSServer {
    /// `POST /3ds-server/versions` with `{"acctNumber": "…"}` (or `pan`): what a backend asks
    /// before the SDK makes its transaction, like a 3DS Server's pre-authentication call. The
    /// 3DS Server asks the DS for its card ranges (PReq/PRes, 2.2.0, whose ranges are flat)
    /// and answers the DS id, the versions the card's range supports, and its 3DS Method URL.
    func versions(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
        let (pan, range) = try await enrolledRange(request)
        return .emv(.object(omittingAbsent: [
            ("acctNumber", .string(CardNumber.masked(pan))),
            ("dsId", .string(directoryServerID(pan))),
            ("startRange", .string(range.start)), ("endRange", .string(range.end)),
            ("messageVersions", .array(range.versions.map { .string($0.rawValue) })),
            ("highestMessageVersion", .string(range.versions.last?.rawValue)),
            ("threeDSMethodURL", .string(range.threeDSMethodURL)),
        ]))
    }

    /// The card of a backend's `{"acctNumber": "…"}` (or `pan`) and the DS's card range that
    /// holds it: 400 without a card, 404 when no range holds it (the card is not enrolled).
    func enrolledRange(_ request: HTTPRequest) async throws(HTTPError) -> (pan: String, range: PreparedRange) {
        let json = try request.jsonBody()
        guard let pan = (json["acctNumber"] ?? json["pan"])?.stringValue else {
            throw HTTPError(.badRequest, "acctNumber (or pan) is required: the card number, 13-19 digits")
        }
        guard let range = try await preparedRange(of: pan) else {
            throw HTTPError(.notFound, "no card range of the DS holds \(CardNumber.masked(pan)): the card is not enrolled")
        }
        return (pan, range)
    }

    /// The DS's card range that holds `pan`, nil when none does (the card is not enrolled).
    /// Throws 400 for a card number that is not 13-19 digits, 502 when the DS gives no PRes.
    func preparedRange(of pan: String) async throws(HTTPError) -> PreparedRange? {
        guard (13...19).contains(pan.count), pan.allSatisfy({ ("0"..."9").contains($0) }) else {
            throw HTTPError(.badRequest, "acctNumber must be 13-19 digits")
        }
        return try await cardRanges().first { $0.contains(pan: pan) }
    }

    /// A card range as a 2.2.0 PRes gives it: bounds of equal length, the versions both the ACS and the DS speak.
    struct PreparedRange {
        let start, end: String
        let lowest, highest: MessageVersion
        let threeDSMethodURL: String?

        /// Every version from the lowest to the highest, oldest first.
        var versions: [MessageVersion] { MessageVersion.allCases.filter { $0 >= lowest && $0 <= highest } }

        func contains(pan: String) -> Bool { CardNumber.isIn(pan, from: start, to: end) }

        /// A PRes's `cardRangeData` entry: `actionInd` A adds the range, M replaces it, D removes it (by its bounds).
        struct Change {
            let action: String
            let range: PreparedRange

            func apply(to ranges: inout [PreparedRange]) {
                let same = { (other: PreparedRange) in other.start == range.start && other.end == range.end }
                switch action {
                case "D": ranges.removeAll(where: same)
                default:
                    ranges.removeAll(where: same)
                    ranges.append(range)
                }
            }
        }
    }

    /// The card ranges as the last PRes left them.
    struct CardRangeCache {
        let ranges: [PreparedRange]
        let serialNum: String?
        let fetchedAt: ContinuousClock.Instant
    }

    /// The cached card ranges, refreshed by a PReq when older than `cardRangeRefreshSeconds`. One refresh at a time:
    /// requests that find the cache stale while a PReq is under way wait for its PRes, since a second PReq sent meanwhile
    /// would lack the serialNum that PRes gives (and the DS's `preq.serial-number` check would rightly fail it).
    /// The PReq goes from the first request's own context (its loop's client); the others' continuations are resumed with
    /// its outcome.
    private func cardRanges() async throws(HTTPError) -> [PreparedRange] {
        while true {
            if let fresh = freshCachedRanges() { return fresh }
            let leads = cardRangeWaiters.withLock { waiters in
                guard waiters == nil else { return false }
                waiters = []
                return true
            }
            if leads {
                let outcome: Result<[PreparedRange], HTTPError>
                do { outcome = .success(try await refreshCardRanges()) } catch { outcome = .failure(error) }
                let waiters = cardRangeWaiters.withLock { waiters in
                    defer { waiters = nil }
                    return waiters ?? []
                }
                for waiter in waiters { waiter.resume(returning: outcome) }
                return try outcome.get()
            }
            let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<[PreparedRange], HTTPError>?, Never>) in
                let joined = cardRangeWaiters.withLock { waiters in
                    guard waiters != nil else { return false }
                    waiters?.append(continuation)
                    return true
                }
                // The refresh ended before this request could wait for it: the cache is read again.
                if !joined { continuation.resume(returning: nil) }
            }
            if let outcome { return try outcome.get() }
        }
    }

    /// The cached ranges while younger than `cardRangeRefreshSeconds`; nil when none are, or they are older.
    private func freshCachedRanges() -> [PreparedRange]? {
        guard let cached = cardRangeCache.withLock({ $0 }), ContinuousClock.now - cached.fetchedAt < .seconds(settings.cardRangeRefreshSeconds) else {
            return nil
        }
        return cached.ranges
    }

    /// One PReq (two after Erro 307), the cache replaced by what its PRes gives: with the last serialNum, what changed,
    /// applied in order; after Erro 307 every range asked for again.
    private func refreshCardRanges() async throws(HTTPError) -> [PreparedRange] {
        // A refresh that finished between this request's look at the cache and its lead left the cache fresh.
        if let fresh = freshCachedRanges() { return fresh }
        let now = ContinuousClock.now
        let cached = cardRangeCache.withLock { $0 }
        var ranges = cached?.serialNum != nil ? cached?.ranges ?? [] : []
        var answer = try await prepare(serialNum: cached?.serialNum)
        if answer == nil {  // Erro 307: the DS does not know the serial (it restarted), so every range is asked for again
            ranges = []
            answer = try await prepare(serialNum: nil)
        }
        guard let (serialNum, changes) = answer else { throw HTTPError(.badGateway, "the DS refused the PReq without serialNum: Erro 307") }
        for change in changes { change.apply(to: &ranges) }
        cardRangeCache.withLock { $0 = CardRangeCache(ranges: ranges, serialNum: serialNum, fetchedAt: now) }
        return ranges
    }

    /// One PReq/PRes: the PRes's serial and card ranges, or nil for an Erro 307 (serial not valid).
    private func prepare(serialNum: String?) async throws(HTTPError) -> (serialNum: String?, changes: [PreparedRange.Change])? {
        let version = MessageVersion.v2_2_0
        let preq = PreparationRules.pReq.build([
            ("messageType", .string(MessageType.pReq.rawValue)), ("messageVersion", .string(version.rawValue)),
            ("threeDSServerRefNumber", .string(settings.referenceNumber)), ("threeDSServerOperatorID", .string(settings.operatorID)),
            ("threeDSServerTransID", .string(TransactionIdentifier.make())), ("serialNum", .string(serialNum)),
        ], version: version)
        let answer: PeerAnswer<JSONValue>
        do {
            answer = try await peer.exchange(preq, url: preparationURL) { body throws(InvalidMessage) in
                let envelope = try MessageEnvelope.read(body.bytes, written: body.written, rules: PreparationRules.pRes, request: preq)
                try envelope.answers(.pReq, in: version)
                return envelope.json
            }
        } catch {
            // A PRes that fails validation is answered with an Erro to the DS; the cached ranges stay as they were.
            if case .invalid(_, let invalid) = error {
                let erro = invalid.erro(from: .threeDSServer, answering: preq)
                if let failure = await peer.notify(erro, url: preparationURL) {
                    logger.warning("the Erro about an invalid PRes did not reach the DS", metadata: ["reason": "\(failure)"])
                }
            }
            throw HTTPError(.badGateway, "no usable PRes from the DS at \(preparationURL): \(error.summary)")
        }
        guard case .message(let pres) = answer else {
            guard case .erro(let erro) = answer else { return (nil, []) }
            if erro.errorCode == .serialNumberNotValid, serialNum != nil { return nil }
            throw HTTPError(.badGateway, "the DS answered the PReq with an Erro: \(erro.errorCode.rawValue) \(erro.errorDescription)")
        }
        let changes: [PreparedRange.Change] = (pres["cardRangeData"]?.arrayValue ?? []).compactMap { element in
            guard let start = element["startRange"]?.stringValue, let end = element["endRange"]?.stringValue, start.count == end.count,
                  let acsLow = element["acsStartProtocolVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)),
                  let acsHigh = element["acsEndProtocolVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)) else { return nil }
            let dsLow = element["dsStartProtocolVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)) ?? acsLow
            let dsHigh = element["dsEndProtocolVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)) ?? acsHigh
            let range = PreparedRange(start: start, end: end, lowest: max(acsLow, dsLow), highest: min(acsHigh, dsHigh),
                                      threeDSMethodURL: element["threeDSMethodURL"]?.stringValue)
            return PreparedRange.Change(action: element["actionInd"]?.stringValue ?? "A", range: range)
        }
        return (pres["serialNum"]?.stringValue, changes)
    }

    /// The DS's PReq URL: the harness's own at this instance (in a cluster each instance's 3DS Server keeps a card-range cache
    /// of its own, which the DS of its instance judges its PReqs by), or the configured DS URL with its last path
    /// segment `areq` replaced by `preq` (the harness's DS layout, `/ds/areq` and `/ds/preq`).
    private var preparationURL: String {
        guard let url = settings.directoryServerURL else { return endpoints.ownURL("/ds/preq") }
        return url.hasSuffix("/areq") ? String(url.dropLast(4)) + "preq" : url
    }
}
