public import JSON

/// One check made of one transaction: the check's id, its verdict and what was seen.
public struct CheckResult: Sendable, Equatable {
    public enum Verdict: String, Sendable, CaseIterable {
        case pass, fail, warning
    }

    public let check: ConformanceCheck
    public let verdict: Verdict
    /// What was seen: the violation, the counter received, the Erro that came or did not.
    public let detail: String?

    public init(_ check: ConformanceCheck, _ verdict: Verdict, _ detail: String? = nil) {
        self.check = check
        self.verdict = verdict
        self.detail = detail
    }

    public static func pass(_ check: ConformanceCheck, _ detail: String? = nil) -> CheckResult { CheckResult(check, .pass, detail) }
    public static func fail(_ check: ConformanceCheck, _ detail: String) -> CheckResult { CheckResult(check, .fail, detail) }

    /// With the check's text, reference and party, as reports and the inspector show it.
    public var json: JSONValue {
        .object(omittingAbsent: [("id", .string(check.rawValue)), ("verdict", .string(verdict.rawValue)), ("text", .string(check.text)),
                                 ("reference", .string(check.reference)), ("party", .string(check.party.rawValue)), ("detail", .string(detail)),
                                 ("fix", verdict == .pass ? nil : .string(check.fix))])
    }

    /// What is stored: id, verdict and detail; the text, reference and party are the check's own,
    /// read from the catalogue again (``json``), not written with each transaction.
    public var storedJSON: JSONValue {
        .object(omittingAbsent: [("id", .string(check.rawValue)), ("verdict", .string(verdict.rawValue)), ("detail", .string(detail))])
    }

    /// ``storedJSON`` written to `out`, byte for byte, without the value made first: a record has a dozen checks, written
    /// at every save.
    public func appendStored(to out: inout [UInt8]) {
        out += #"{"id":"#.utf8
        JSONWriter.append(string: check.rawValue, to: &out)
        out += #","verdict":"#.utf8
        JSONWriter.append(string: verdict.rawValue, to: &out)
        if let detail {
            out += #","detail":"#.utf8
            JSONWriter.append(string: detail, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Reads ``json`` or ``storedJSON``.
    public init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue.flatMap(ConformanceCheck.init(rawValue:)),
              let verdict = json["verdict"]?.stringValue.flatMap(Verdict.init(rawValue:)) else { return nil }
        self.init(id, verdict, json["detail"]?.stringValue)
    }
}
