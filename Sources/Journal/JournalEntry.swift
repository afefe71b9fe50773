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
    public let version: String?
    /// `deviceChannel`: 01 app, 02 browser, 03 3RI.
    public let channel: String?
    public var scenario: String?
    public var runCase: RunCase?
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

    /// Records `result`, keeping the worst verdict of a check made several times (each CReq's counter).
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
    /// card number masked in its bytes), not parsed and written again.
    public var archivedJSON: [UInt8] {
        var out = JSONWriter.write(.object(omittingAbsent: summaryMembers + [("checks", .array(checks.map(\.json)))]))
        out.removeLast()  // the closing brace: the messages follow
        out += Array(#","messages":["#.utf8)
        let masking = pan.map { (Array($0.utf8), Array(CardNumber.masked($0).utf8)) }
        for (index, message) in messages.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            var head = JSONWriter.write(.object(omittingAbsent: [
                ("from", .string(message.from.rawValue)), ("to", .string(message.to.rawValue)), ("type", .string(message.type)),
                ("at", .string(UTCTime.iso8601(message.at))),
                ("offsetMs", .number(String(Int((message.at.timeIntervalSince(startedAt) * 1000).rounded())))),
                ("note", .string(message.note)),
            ]))
            head.removeLast()
            out += head
            out += Array(#","message":"#.utf8)
            var body = message.isJSON ? message.body : JSONWriter.write(.string(String(decoding: message.body, as: UTF8.self)))
            if let (pan, masked) = masking { Self.replace(pan, with: masked, in: &body) }
            out += body
            out.append(UInt8(ascii: "}"))
        }
        out += Array("]}".utf8)
        return out
    }

    /// Replaces each occurrence of `pattern` in `bytes` with `replacement` (of the same length).
    private static func replace(_ pattern: [UInt8], with replacement: [UInt8], in bytes: inout [UInt8]) {
        guard let first = pattern.first, pattern.count == replacement.count, bytes.count >= pattern.count else { return }
        var index = 0
        while index <= bytes.count - pattern.count {
            if bytes[index] == first, bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                bytes.replaceSubrange(index..<(index + pattern.count), with: replacement)
                index += pattern.count
            } else {
                index += 1
            }
        }
    }

    /// The transaction as the inspector and the reports show it.
    public var json: JSONValue { (try? JSONReader.parse(archivedJSON).value) ?? summary }

    /// The line of the inspector's list.
    public var summary: JSONValue { .object(omittingAbsent: summaryMembers) }

    private var summaryMembers: [(String, JSONValue?)] {
        [
            ("dsTransID", .string(dsTransID)), ("threeDSServerTransID", .string(ids.threeDSServerTransID)),
            ("acsTransID", .string(ids.acsTransID)), ("sdkTransID", .string(ids.sdkTransID)),
            ("startedAt", .string(UTCTime.iso8601(startedAt))), ("acctNumber", .string(maskedPAN)),
            ("messageVersion", .string(version)), ("deviceChannel", .string(channel)), ("scenario", .string(scenario)),
            ("run", .string(runCase?.run)), ("case", .string(runCase?.caseID)),
            ("state", .string(state.rawValue)), ("endedBecause", .string(endedBecause)), ("transStatus", .string(transStatus)),
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
