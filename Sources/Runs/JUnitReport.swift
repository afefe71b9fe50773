import EMV3DS
import Foundation
public import JSON

/// A graded run as JUnit XML, the format CI servers read: one `testcase` per scenario x version
/// x channel, a `failure` naming each failed check, `skipped` for a case not attempted yet.
public enum JUnitReport {
    /// `report`: the run as ``GradedRun/report(messages:inspector:)`` made it, whose failed cases' messages and
    /// inspector links go into their `system-out`.
    public static func render(_ graded: GradedRun, report: JSONValue? = nil) -> String {
        let reported = report?["cases"]?.arrayValue ?? []
        let run = graded.run
        let failures = graded.count(.failed)
        let skipped = graded.count(.pending) + graded.count(.running)
        var xml = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"
        xml += #"<testsuites name="\#(escape(run.name))" tests="\#(graded.cases.count)" failures="\#(failures)" errors="0" skipped="\#(skipped)">"# + "\n"
        xml += #"  <testsuite name="\#(escape(run.suite.name))" tests="\#(graded.cases.count)" failures="\#(failures)" errors="0" skipped="\#(skipped)" timestamp="\#(escape(String(run.json["createdAt"]?.stringValue?.prefix(19) ?? "")))" id="\#(escape(run.id))">"# + "\n"
        xml += "    <properties>\n"
        xml += #"      <property name="party" value="\#(escape(run.suite.party.rawValue))"/>"# + "\n"
        xml += #"      <property name="run" value="\#(escape(run.id))"/>"# + "\n"
        xml += #"      <property name="state" value="\#(run.state.rawValue)"/>"# + "\n"
        xml += "    </properties>\n"
        for (index, verdict) in graded.cases.enumerated() {
            let runCase = verdict.runCase
            xml += #"    <testcase classname="\#(escape(run.suite.name)).\#(escape(runCase.scenario))" name="\#(escape("\(runCase.scenario) \(runCase.version) \(runCase.channel.rawValue)"))" time="\#(seconds(verdict))">"#
            switch verdict.status {
            case .failed:
                let failures = verdict.failures
                xml += "\n" + #"      <failure message="\#(escape(failures.first ?? "failed"))" type="\#(escape(firstFailedCheck(verdict) ?? "case"))">"#
                xml += escape(explained(verdict).joined(separator: "\n")) + "</failure>\n    "
            case .pending:
                xml += "\n" + #"      <skipped message="not attempted yet"/>"# + "\n    "
            case .running:
                xml += "\n" + #"      <skipped message="under way: a transaction has not ended"/>"# + "\n    "
            case .passed:
                break
            }
            let transactions = reported.indices.contains(index) ? reported[index]["transactions"]?.arrayValue ?? [] : []
            let out = (["card \(runCase.card ?? runCase.pan)", "transactions: " + (runCase.transactions.isEmpty ? "none" : runCase.transactions.joined(separator: ", "))]
                       + verdict.warnings.map { "warning " + $0 } + transactions.flatMap(evidence)).joined(separator: "\n")
            xml += "\n      <system-out>" + escape(out) + "</system-out>\n    </testcase>\n"
        }
        if !graded.refusedOutsideCases.isEmpty {
            let refused = graded.refusedOutsideCases.map { item in
                "\(item["message"]?.stringValue ?? "message") refused (entry \(item["dsTransID"]?.stringValue ?? "?"), \(item["endedBecause"]?.stringValue ?? "")): "
                    + (item["failures"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: "; ")
            }
            xml += "    <system-err>" + escape("refused outside the cases:\n" + refused.joined(separator: "\n")) + "</system-err>\n"
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    /// A transaction's inspector link and messages, a line each: "AReq 3DS Server → DS at …: {…}".
    private static func evidence(_ transaction: JSONValue) -> [String] {
        guard let messages = transaction["messages"]?.arrayValue else { return [] }
        let link = transaction["inspectorURL"]?.stringValue.map { ["transaction \(transaction["dsTransID"]?.stringValue ?? ""): \($0)"] } ?? []
        return link + messages.map { message in
            let body = message["message"].map { $0.stringValue ?? JSONWriter.string($0) } ?? ""
            return "\(message["type"]?.stringValue ?? "message") \(message["from"]?.stringValue ?? "?") → \(message["to"]?.stringValue ?? "?")"
                + (message["at"]?.stringValue.map { " at \($0)" } ?? "") + ": " + body
        }
    }

    /// Each problem, then each failed check with what was seen, the reference and how to fix it.
    private static func explained(_ verdict: CaseVerdict) -> [String] {
        CaseVerdict.once(verdict.problems) + verdict.failedChecks.map { result in
            "\(result.check.rawValue): \(result.detail ?? result.check.text)\n  reference: \(result.check.reference)\n  fix: \(result.check.fix)"
        }
    }

    /// The case's transactions' time from the AReq to their last message, in seconds.
    private static func seconds(_ verdict: CaseVerdict) -> String {
        let milliseconds = verdict.transactions.reduce(0) { $0 + ($1["durationMs"]?.numberText.flatMap { Int($0) } ?? 0) }
        return String(format: "%.3f", Double(milliseconds) / 1000)
    }

    private static func firstFailedCheck(_ verdict: CaseVerdict) -> String? {
        verdict.checks.first { $0.result.verdict == .fail }?.result.check.rawValue ?? (verdict.problems.isEmpty ? nil : "not-attempted")
    }

    static func escape(_ text: String) -> String { Markup.escape(text) }
}
