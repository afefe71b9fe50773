public import EMV3DS
public import Foundation
public import JSON
import Messaging
public import Store

extension ThreeDSServer {
    /// A transaction as the 3DS Server sees it: its state, outcome and message trail.
    public struct Transaction: ArchivableRecord {
        public enum Direction: String, Sendable { case sent, received }

        public let threeDSServerTransID: String
        public let messageVersion: MessageVersion
        public let createdAt: Date
        public let maskedPAN: String
        /// The card number, masked wherever it appears in the trail when the record is written; nil in a record taken up
        /// from the store, whose trail is masked already.
        private let pan: String?
        public let channel: DeviceChannel?
        public var ids: TransactionIDs
        public var state = State.error
        /// What the ARes decided, then what the RReq did: all the record keeps of those messages
        /// besides the trail (a message struct is hundreds of bytes, most of them empty fields).
        public private(set) var aresOutcome: Outcome?
        public private(set) var rreqOutcome: Outcome?
        private var acsReferenceNumber: String?
        /// The ARes members the RReq's rules read (`acsDecConInd`).
        private(set) var aresReadByResults: JSONValue?
        public var error: String?
        /// The Erro received instead of an answer.
        public var erro: ErroMessage? {
            get { erroStorage.first }
            set { erroStorage = newValue.map { [$0] } ?? [] }
        }
        /// Erro messages received later (from the DS, about an RRes it could not relay).
        public var erroReceived: [ErroMessage] = []
        /// The Erro this 3DS Server sent (about an invalid ARes or RReq): what a 3DS Server is judged on.
        public var erroSent: ErroMessage? {
            get { erroSentStorage.first }
            set { erroSentStorage = newValue.map { [$0] } ?? [] }
        }
        // Rare, so kept out of line: an empty array is one pointer, an absent Erro inline 136 bytes.
        private var erroStorage: [ErroMessage] = []
        private var erroSentStorage: [ErroMessage] = []
        public var violations: [String] = []
        /// Members of received messages that their tables do not define for this version or channel.
        public var warnings: [String] = []
        /// Each message as the bytes that went or came (JSON the strict reader accepted, or the writer's): a parsed tree
        /// costs several times its text, and the trail is read only when someone looks at the transaction. Only ever
        /// appended to: ``signedContentSpan`` points into it.
        public private(set) var messages: [(direction: Direction, at: Date, message: [UInt8])] = []
        /// The browser channel's own options; nil on the app channel.
        var browserOptions: BrowserOptions?
        /// After an ARes S: the threeDSServerTransID of the second AReq that brought SPC's result.
        var spcFollowedBy: String?
        /// Decoupled Authentication Fallback: the 3RI authentication that follows this one's RReq D, and in that one, this one.
        var fallbackFollowedBy: String?
        var fallbackOf: String?
        /// The result the fallback's 3RI authentication brought (its RReq, or its ARes when that was final).
        private var fallbackOutcome: Outcome?
        /// The run case and the team the requestor named, passed on with a follow-up's AReq.
        var tags = HarnessTags()
        /// What the ARes, then the RReq, said beside the outcome (2.3.1): device binding and trust list statuses, information for the parties.
        private var outcomeFields: JSONValue?
        /// The ARes's `cardholderInfo` text.
        private var cardholderInfo: String?
        /// Where the app ARes's `acsSignedContent` lies in the trail (which message, which bytes): what the app's challenge
        /// starts from, read from there instead of parsing the ARes again, and not kept twice (it is kilobytes).
        private var signedContentSpan: (message: Int, bytes: Range<Int>)?

        init(areq: AReq) {
            threeDSServerTransID = areq.threeDSServerTransID
            messageVersion = areq.version
            createdAt = Date()
            maskedPAN = CardNumber.masked(areq.acctNumber)
            pan = areq.acctNumber
            channel = DeviceChannel(rawValue: areq.deviceChannel)
            ids = areq.ids
        }

        /// Why `rreq` cannot be this transaction's result: a transaction awaits one only after an
        /// ARes C or D (or S, whose second AReq did not come: N), once, and every id the RReq carries for it must be the transaction's.
        func refusal(of rreq: RReq) -> InvalidMessage? {
            func refuse(_ field: String, _ code: ErrorCode, _ reason: String) -> InvalidMessage {
                InvalidMessage(Violation(field: field, code: code, reason: reason), about: rreq.json)
            }
            guard rreq.messageVersion == messageVersion else {
                return refuse("messageVersion", .formatInvalid, "\(rreq.messageVersion.rawValue) differs from the transaction's \(messageVersion.rawValue)")
            }
            // sdkTransID is compared only where the version's RReq carries it (not 2.1.0).
            let expected = TransactionIDs(acsTransID: ids.acsTransID, dsTransID: ids.dsTransID,
                                          sdkTransID: ResultsRules.rReq.defines("sdkTransID", in: messageVersion) ? ids.sdkTransID : nil)
            if let field = expected.mismatches(in: rreq.ids).first {
                return refuse(field, .transactionIDNotRecognised, "is not the transaction's \(field)")
            }
            // An RReq D only after a challenge (Req 462) whose AReq allowed the fallback (Table A.17 footnote 11): Erro 203.
            if rreq.transStatus == .decoupled, state == .challenge {
                guard aresOutcome?.transStatus == .challenge else {
                    return refuse("transStatus", .formatInvalid, "D in an RReq only ends a challenge (ARes C) that falls back to decoupled authentication")
                }
                guard DecoupledFallback.isAllowed(version: messageVersion, indicator: sentAReq?["threeDSRequestorDecReqInd"]?.stringValue) else {
                    return refuse("transStatus", .formatInvalid, "D in an RReq only when the AReq's threeDSRequestorDecReqInd was F or B (decoupled fallback)")
                }
            }
            // After an ARes S the ACS sends an RReq only when the second AReq does not come in time: N, reason 14.
            if state == .spc, spcFollowedBy == nil, rreq.transStatus != .notAuthenticated {
                return refuse("transStatus", ErrorCode.unexpectedResults(in: messageVersion),
                              "\(rreq.transStatus.rawValue) after an ARes S: only the ACS's time limit ends it by RReq, with N (reason 14)")
            }
            guard state == .challenge || (state == .spc && spcFollowedBy == nil) else {
                if state == .completed || state == .decoupledFallback || (state == .error && rreqOutcome != nil) {
                    return refuse("threeDSServerTransID", ErrorCode.duplicate(in: messageVersion), "awaits no RReq: its result has already been received")
                }
                let why = state == .spc ? "its SPC result went in the second AReq of \(spcFollowedBy ?? "")"
                    : aresOutcome.map { "its ARes was \($0.transStatus.rawValue), not C or D" } ?? "it has no ARes"
                return refuse("threeDSServerTransID", ErrorCode.unexpectedResults(in: messageVersion), "awaits no RReq: \(why)")
            }
            return nil
        }

        mutating func record(_ direction: Direction, _ message: JSONValue) {
            record(direction, bytes: JSONWriter.write(message))
        }

        /// Records a message as the bytes that went or came, in storage of their exact size (a
        /// writer's buffer has room to spare, up to as much again).
        mutating func record(_ direction: Direction, bytes: [UInt8]) {
            // A record taken up from the store has no card number to mask its trail with when it is written: what it
            // records from then on is masked as it is recorded (the trail it came with is masked already).
            let bytes = pan == nil ? Self.maskingAcctNumber(in: bytes) : bytes
            // A fresh buffer of the exact size: the writer's grew by doubling, and Array(bytes[...])
            // would keep that very buffer.
            let exact = [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
                count = buffer.initialize(fromContentsOf: bytes)
            }
            messages.append((direction, Date(), exact))
        }

        mutating func apply(_ ares: ARes) {
            aresOutcome = Outcome(transStatus: ares.transStatus, transStatusReason: ares.transStatusReason,
                                  authenticationValue: ares.authenticationValue, eci: ares.eci)
            acsReferenceNumber = ares.acsReferenceNumber
            outcomeFields = ares.outcomeFields
            cardholderInfo = ares.cardholderInfo
            locateSignedContent(ares.acsSignedContent)
            aresReadByResults = ResultsRules.aresContext(ares.json)
            ids.acsTransID = ares.acsTransID
            ids.dsTransID = ares.dsTransID
            state = ares.transStatus.awaitsResult ? .challenge : ares.transStatus == .securePaymentConfirmation ? .spc : .frictionless
        }

        mutating func apply(_ rreq: RReq) {
            rreqOutcome = Outcome(transStatus: rreq.transStatus, transStatusReason: rreq.transStatusReason,
                                  authenticationValue: rreq.authenticationValue, eci: rreq.eci,
                                  challengeCancel: rreq.challengeCancel, whiteListStatus: rreq.whiteListStatus)
            state = rreq.transStatus == .decoupled ? .decoupledFallback : .completed
            // What the RReq says beside the outcome (2.3.1) is the last word, as its status is.
            if let fields = rreq.outcomeFields?.objectMembers {
                var merged = outcomeFields ?? .object([])
                for member in fields { merged.set(member.key, member.value) }
                outcomeFields = merged
            }
            if let info = rreq.cardholderInfo { cardholderInfo = info }
        }

        /// Ends a transaction that fell back with the result of its 3RI authentication `followUp`, or with its failure.
        mutating func endFallback(with followUp: Self) {
            guard state == .decoupledFallback else { return }
            guard let outcome = followUp.rreqOutcome ?? followUp.aresOutcome, followUp.state != .error else {
                return fail("the 3RI authentication of the decoupled fallback (\(followUp.threeDSServerTransID)) failed: \(followUp.error ?? "no outcome")")
            }
            fallbackOutcome = outcome
            state = .completed
        }

        mutating func fail(_ erro: ErroMessage) {
            self.erro = erro
            fail("Erro \(erro.errorCode.rawValue) from component \(erro.errorComponent.rawValue): \(erro.errorDescription)")
        }

        mutating func fail(_ reason: String) {
            state = .error
            error = reason
        }

        /// The final outcome: the decoupled fallback's when there is one, else the RReq's, else the ARes's.
        public var finalOutcome: Outcome? { fallbackOutcome ?? rreqOutcome ?? aresOutcome }
        var transStatus: String? { finalOutcome?.transStatus.rawValue }

        /// The ARes as it came, from the trail.
        var receivedARes: JSONValue? { received(.aRes) }

        /// `message` with its `acctNumber` masked, when it has one.
        private static func maskingAcctNumber(in message: [UInt8]) -> [UInt8] {
            guard ByteSearch.contains(message, "\"acctNumber\""), var json = try? JSONReader.parse(message).value,
                  let number = json["acctNumber"]?.stringValue else { return message }
            json.set("acctNumber", .string(CardNumber.masked(number)))
            return JSONWriter.write(json)
        }

        /// Finds `content` (the ARes's acsSignedContent) in the messages received: a compact JWS is written as it is in
        /// JSON, with nothing to escape. Not found (a fault wrote it otherwise), the record reads it from the parsed ARes.
        private mutating func locateSignedContent(_ content: String?) {
            guard let content, !content.isEmpty else { return }
            let pattern = Array(content.utf8)
            for index in messages.indices.reversed() where messages[index].direction == .received {
                if let start = messages[index].message.withUnsafeBytes({ ByteSearch.firstIndex(of: pattern, in: $0) }) {
                    signedContentSpan = (index, start..<start + pattern.count)
                    return
                }
            }
        }

        /// The ARes's acsSignedContent, from where it lies in the trail, else from the ARes parsed.
        private var acsSignedContent: String? {
            if let (message, bytes) = signedContentSpan, messages.indices.contains(message), bytes.upperBound <= messages[message].message.count {
                return String(decoding: messages[message].message[bytes], as: UTF8.self)
            }
            return receivedARes?["acsSignedContent"]?.stringValue
        }

        /// The AReq as it went, from the trail.
        var sentAReq: JSONValue? { first(.aReq, .sent) }

        /// What the requestor's page passes to the browser's SPC after an ARes S, and the second AReq once sent.
        private var spc: JSONValue? {
            guard state == .spc, let ares = receivedARes else { return nil }
            return .object(omittingAbsent: [("spcTransData", ares["spcTransData"]), ("webAuthnCredList", ares["webAuthnCredList"]),
                                            ("resultURL", .string(ThreeDSServer.spcResultPath.replacingOccurrences(of: "{id}", with: threeDSServerTransID))),
                                            ("followedBy", .string(spcFollowedBy))])
        }

        /// The first message of `type` received, from the trail.
        func received(_ type: MessageType) -> JSONValue? { first(type, .received) }

        /// The first message of `type` that went `direction`, from the trail.
        private func first(_ type: MessageType, _ direction: Direction) -> JSONValue? {
            for entry in messages where entry.direction == direction {
                if let json = try? JSONReader.parse(entry.message).value, json["messageType"]?.stringValue == type.rawValue { return json }
            }
            return nil
        }

        /// The record as the requestor API shows it, written in one pass: the trail's messages go in as the bytes kept
        /// (the card number masked in them), not parsed and written again.
        public var archivedJSON: [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(1024 + messages.reduce(0) { $0 + $1.message.count + 80 })
            JSONWriter.appendObject(summaryMembers, continuingWith: "messages", to: &out)
            out.append(UInt8(ascii: "["))
            let masking = CardNumber.Masking(pan)
            for (index, entry) in messages.enumerated() {
                out += (index > 0 ? #",{"direction":""# : #"{"direction":""#).utf8
                out += entry.direction.rawValue.utf8
                out += #"","at":"#.utf8
                JSONWriter.append(string: UTCTime.iso8601(entry.at), to: &out)
                out += #","message":"#.utf8
                let start = out.count
                out += entry.message
                masking?.apply(to: &out, from: start)
                out.append(UInt8(ascii: "}"))
            }
            out += "]}".utf8
            return out
        }

        /// What the ARes said beside the outcome, as members of the record.
        private var outcomeMembers: [(String, JSONValue?)] {
            (outcomeFields?.objectMembers ?? []).map { member -> (String, JSONValue?) in (member.key, member.value) }
        }

        /// Ended without a challenge, or with its result, or failed: no message is due.
        public var isSettled: Bool { state != .challenge && state != .decoupledFallback && !(state == .spc && spcFollowedBy == nil) }

        /// The record as a value: ``archivedJSON`` read back (for tests and the few readers that need one).
        public var json: JSONValue {
            // The record holds each message three levels down (the record, its trail, the trail's entry).
            (try? JSONReader.parse(archivedJSON, maxDepth: JSONReader.defaultMaxDepth + 3).value) ?? .null
        }

        /// The record's members but its trail.
        private var summaryMembers: [(String, JSONValue?)] {
            let outcome = finalOutcome
            let challenged = aresOutcome.map { ares in
                (state == .challenge || rreqOutcome != nil) && ares.transStatus.awaitsResult
            } ?? false
            // What starting the challenge needs: the app's from where the signed content lies in the trail, the browser's
            // (the ACS URL) from the ARes read once.
            let ares = challenged && browserOptions != nil ? receivedARes : nil
            let challenge: JSONValue? = challenged ? .object(omittingAbsent: [
                ("threeDSServerTransID", .string(threeDSServerTransID)), ("acsTransID", .string(ids.acsTransID)),
                ("acsRefNumber", .string(acsReferenceNumber)),
                ("acsSignedContent", .string(browserOptions == nil ? acsSignedContent : ares?["acsSignedContent"]?.stringValue)),
            ]) : nil
            return [
                ("threeDSServerTransID", .string(threeDSServerTransID)),
                ("state", .string(state.rawValue)),
                ("messageVersion", .string(messageVersion.rawValue)),
                ("acctNumber", .string(maskedPAN)),
                ("transStatus", .string(transStatus)),
                ("transStatusReason", .string(outcome?.transStatusReason)),
                ("authenticationValue", .string(outcome?.authenticationValue)),
                ("eci", .string(outcome?.eci)),
                ("dsTransID", .string(ids.dsTransID)),
                ("acsTransID", .string(ids.acsTransID)),
                ("sdkTransID", .string(ids.sdkTransID)),
                ("challengeCancel", .string(rreqOutcome?.challengeCancel)),
                ("whiteListStatus", .string(rreqOutcome?.whiteListStatus)),
                ("cardholderInfo", .string(cardholderInfo)),
                ("challenge", challenge),
                ("browserChallenge", ares.flatMap(browserChallenge(answering:))),
                ("spc", spc),
                ("decoupledFallback", rreqOutcome?.transStatus == .decoupled ? .object(omittingAbsent: [
                    ("transStatusReason", .string(rreqOutcome?.transStatusReason)), ("followedBy", .string(fallbackFollowedBy))]) : nil),
                ("fallbackOf", .string(fallbackOf)),
            ] + outcomeMembers + [
                ("error", .string(error)),
                ("erro", erro?.json),
                ("erroSent", erroSent?.json),
                ("erroReceived", erroReceived.isEmpty ? nil : .array(erroReceived.map(\.json))),
                ("violations", violations.isEmpty ? nil : .array(violations.map(JSONValue.string))),
                ("warnings", warnings.isEmpty ? nil : .array(warnings.map(JSONValue.string))),
                ("createdAt", .string(UTCTime.iso8601(createdAt))),
                ("resume", resume),
            ]
        }
    }
}

/// What another instance of a cluster needs to go on with a transaction whose instance died (docs/scale.md): the
/// record as the requestor API shows it, and under `resume`, while a message is due (the RReq, a browser challenge's
/// final CRes), what the record does not show.
extension ThreeDSServer.Transaction {
    var resume: JSONValue? {
        guard state == .challenge || state == .decoupledFallback || awaitsFinalCRes else { return nil }
        return .object(omittingAbsent: [
            ("fallbackOf", .string(fallbackOf)), ("fallbackFollowedBy", .string(fallbackFollowedBy)),
            // The RReq D of a fallback that ended: the record's outcome is the 3RI's.
            ("fallbackReason", fallbackOutcome != nil && rreqOutcome?.transStatus == .decoupled ? .string(rreqOutcome?.transStatusReason ?? "") : nil),
            ("deviceChannel", .string(channel?.rawValue)), ("aresContext", aresReadByResults),
            ("challengeWindowSize", .string(browserOptions?.challengeWindowSize)),
            ("returnURL", .string(browserOptions?.returnTo?.returnURL)), ("returnIdParameter", .string(browserOptions?.returnTo?.idParameter)),
        ])
    }

    /// A browser challenge whose result came and whose final CRes has not (the ACS's last page posts it after the RReq).
    private var awaitsFinalCRes: Bool {
        [.completed, .decoupledFallback].contains(state) && channel == .browser && aresOutcome?.transStatus == .challenge && received(.cRes) == nil
    }

    /// The transaction as its stored record left it; nil when the record has no `resume` (no message is due), or is not one.
    init?(stored record: JSONValue) {
        guard let resume = record["resume"], let id = record["threeDSServerTransID"]?.stringValue,
              let version = record["messageVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)),
              let state = record["state"]?.stringValue.flatMap(State.init(rawValue:)) else { return nil }
        threeDSServerTransID = id
        messageVersion = version
        createdAt = record["createdAt"]?.stringValue.flatMap(UTCTime.date(iso8601:)) ?? Date()
        maskedPAN = record["acctNumber"]?.stringValue ?? ""
        pan = nil
        channel = resume["deviceChannel"]?.stringValue.flatMap(DeviceChannel.init(rawValue:))
        ids = TransactionIDs(threeDSServerTransID: id, acsTransID: record["acsTransID"]?.stringValue,
                             dsTransID: record["dsTransID"]?.stringValue, sdkTransID: record["sdkTransID"]?.stringValue)
        self.state = state
        // The trail as the record shows it (the card number masked); the ARes's outcome from it.
        messages = (record["messages"]?.arrayValue ?? []).compactMap { entry in
            guard let direction = entry["direction"]?.stringValue.flatMap(Direction.init(rawValue:)), let message = entry["message"] else { return nil }
            return (direction, entry["at"]?.stringValue.flatMap(UTCTime.date(iso8601:)) ?? createdAt, JSONWriter.write(message))
        }
        guard let ares = received(.aRes), let status = ares["transStatus"]?.stringValue.flatMap(TransStatus.init(rawValue:)) else { return nil }
        aresOutcome = Outcome(transStatus: status, transStatusReason: ares["transStatusReason"]?.stringValue,
                              authenticationValue: ares["authenticationValue"]?.stringValue, eci: ares["eci"]?.stringValue)
        if state == .completed || state == .decoupledFallback, let result = record["transStatus"]?.stringValue.flatMap(TransStatus.init(rawValue:)) {
            rreqOutcome = Outcome(transStatus: result, transStatusReason: record["transStatusReason"]?.stringValue,
                                  authenticationValue: record["authenticationValue"]?.stringValue, eci: record["eci"]?.stringValue,
                                  challengeCancel: record["challengeCancel"]?.stringValue, whiteListStatus: record["whiteListStatus"]?.stringValue)
        }
        acsReferenceNumber = ares["acsReferenceNumber"]?.stringValue
        locateSignedContent(ares["acsSignedContent"]?.stringValue)
        aresReadByResults = resume["aresContext"]
        if let reason = resume["fallbackReason"]?.stringValue, let final = rreqOutcome {
            fallbackOutcome = final
            rreqOutcome = Outcome(transStatus: .decoupled, transStatusReason: reason.isEmpty ? nil : reason)
        }
        fallbackOf = resume["fallbackOf"]?.stringValue
        fallbackFollowedBy = resume["fallbackFollowedBy"]?.stringValue
        erroReceived = (record["erroReceived"]?.arrayValue ?? []).compactMap { try? ErroMessage(json: $0) }
        violations = record["violations"]?.arrayValue?.compactMap(\.stringValue) ?? []
        warnings = record["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
        if let size = resume["challengeWindowSize"]?.stringValue {
            browserOptions = BrowserOptions(challengeWindowSize: size, returnTo: resume["returnURL"]?.stringValue.map {
                ReturnRedirect(returnURL: $0, idParameter: resume["returnIdParameter"]?.stringValue)
            })
        }
    }
}
