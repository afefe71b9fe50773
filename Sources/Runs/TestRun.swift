import EMV3DS
public import Foundation
public import JSON
public import Store

/// A run of a suite: its cases, open until finished. Every transaction that begins while it
/// is open and matches a case (its scenario, version and channel) is attached to that case.
public struct TestRun: ArchivableRecord {
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

    public init(id: String, name: String, suite: Suite, createdAt: Date = Date(), cases: [RunCase]) {
        self.id = id
        self.name = name
        self.suite = suite
        self.createdAt = createdAt
        self.cases = cases
    }

    public var archivedJSON: [UInt8] { JSONWriter.write(json) }

    public var json: JSONValue {
        .object(omittingAbsent: [
            ("id", .string(id)), ("name", .string(name)), ("suite", suite.json), ("state", .string(state.rawValue)),
            ("createdAt", .string(UTCTime.iso8601(createdAt))), ("finishedAt", .string(finishedAt.map(UTCTime.iso8601))),
            ("createdAtMs", .number(String(Int64(createdAt.timeIntervalSince1970 * 1000)))),
            ("finishedAtMs", finishedAt.map { .number(String(Int64($0.timeIntervalSince1970 * 1000))) }),
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
        self.init(id: id, name: name, suite: suite, createdAt: Date(timeIntervalSince1970: created / 1000), cases: cases)
        self.state = state
        finishedAt = json["finishedAtMs"]?.numberText.flatMap(Double.init).map { Date(timeIntervalSince1970: $0 / 1000) }
    }
}
