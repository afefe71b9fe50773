import EMV3DS
public import Foundation
public import JSON
public import Store

/// A run of a suite: its cases, open until finished. A transaction is attached to a case
/// explicitly (the `X-Harness-Case` header of its AReq or authentication request names the
/// run and case), or else to the first case of its scenario, version and channel that has no
/// transaction yet. A run finishes when asked, or by itself after ``Timing/idle`` without one.
public struct TestRun: ArchivableRecord {
    /// How long a run and its cases wait.
    public struct Timing: Sendable, Equatable {
        /// A run with no transaction attached for this long finishes itself.
        public var idle: TimeInterval
        /// A case's transaction still under way this long after it was attached is graded as it stands
        /// (what is due and has not come fails): a decoupled authentication whose RReq never comes ends.
        public var caseDeadline: TimeInterval

        public static let `default` = Timing(idle: 600, caseDeadline: 120)
        /// The bounds a request may choose within.
        public static let limits: ClosedRange<TimeInterval> = 1...86_400

        public init(idle: TimeInterval, caseDeadline: TimeInterval) {
            self.idle = idle
            self.caseDeadline = caseDeadline
        }
    }

    public enum State: String, Sendable {
        case open, finished
    }

    public let id: String
    public let name: String
    public let suite: Suite
    public let createdAt: Date
    public var finishedAt: Date?
    public var state = State.open
    public var cases: [RunCase]
    public var timing: Timing
    /// When the run began or last took a transaction or a retry: its idle time runs from it.
    public var lastActivityAt: Date
    /// Why it finished: "finished", or that it was idle.
    public var finishedBecause: String?
    /// The journal entries of the party's messages a role refused while the run was open and no case took
    /// (a PReq the DS refused, say): the newest ``maxRefusedOutsideCases``.
    public var refusedOutsideCases: [String] = []
    public static let maxRefusedOutsideCases = 20

    public init(id: String, name: String, suite: Suite, createdAt: Date = Date(), cases: [RunCase], timing: Timing = .default) {
        self.id = id
        self.name = name
        self.suite = suite
        self.createdAt = createdAt
        self.cases = cases
        self.timing = timing
        lastActivityAt = createdAt
    }

    /// Keeps `dsTransID` among the refused messages no case took.
    mutating func noteRefusedOutsideCases(_ dsTransID: String) {
        guard !refusedOutsideCases.contains(dsTransID) else { return }
        refusedOutsideCases = Array((refusedOutsideCases + [dsTransID]).suffix(Self.maxRefusedOutsideCases))
    }

    /// When it finishes itself, if nothing is attached before.
    public var idleUntil: Date { lastActivityAt.addingTimeInterval(timing.idle) }

    /// Finishes the run (once).
    mutating func finish(at now: Date, because reason: String) {
        guard state == .open else { return }
        state = .finished
        finishedAt = now
        finishedBecause = reason
    }

    public var archivedJSON: [UInt8] { JSONWriter.write(json) }

    private var refusedJSON: JSONValue? { refusedOutsideCases.isEmpty ? nil : .array(refusedOutsideCases.map(JSONValue.string)) }

    public var json: JSONValue {
        .object(omittingAbsent: [
            ("id", .string(id)), ("name", .string(name)), ("suite", suite.json), ("state", .string(state.rawValue)),
            ("createdAt", .string(UTCTime.iso8601(createdAt))), ("finishedAt", .string(finishedAt.map(UTCTime.iso8601))),
            ("createdAtMs", .number(String(Int64(createdAt.timeIntervalSince1970 * 1000)))),
            ("finishedAtMs", finishedAt.map { .number(String(Int64($0.timeIntervalSince1970 * 1000))) }),
            ("finishedBecause", .string(finishedBecause)),
            ("idleSeconds", .number(String(Int(timing.idle)))), ("caseDeadlineSeconds", .number(String(Int(timing.caseDeadline)))),
            ("lastActivityAtMs", .number(String(Int64(lastActivityAt.timeIntervalSince1970 * 1000)))),
            ("refusedOutsideCases", refusedJSON),
            ("cases", .array(cases.map(\.json))),
        ])
    }

    /// A run as the archive kept it.
    public init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let name = json["name"]?.stringValue, let suiteJSON = json["suite"],
              let suite = try? Suite(json: suiteJSON), let state = json["state"]?.stringValue.flatMap(State.init(rawValue:)),
              let created = json["createdAtMs"]?.numberText.flatMap(Double.init), case .array(let items)? = json["cases"] else { return nil }
        let cases = items.compactMap(RunCase.init(json:))
        guard cases.count == items.count else { return nil }
        func seconds(_ key: String) -> TimeInterval? { json[key]?.numberText.flatMap(Double.init) }
        let timing = Timing(idle: seconds("idleSeconds") ?? Timing.default.idle, caseDeadline: seconds("caseDeadlineSeconds") ?? Timing.default.caseDeadline)
        self.init(id: id, name: name, suite: suite, createdAt: Date(timeIntervalSince1970: created / 1000), cases: cases, timing: timing)
        self.state = state
        finishedAt = seconds("finishedAtMs").map { Date(timeIntervalSince1970: $0 / 1000) }
        finishedBecause = json["finishedBecause"]?.stringValue
        refusedOutsideCases = (json["refusedOutsideCases"]?.arrayValue ?? []).compactMap(\.stringValue)
        if let last = seconds("lastActivityAtMs") { lastActivityAt = Date(timeIntervalSince1970: last / 1000) }
    }
}
