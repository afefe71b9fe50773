import EMV3DS
import JSON

/// A graded run as JUnit XML, the format CI servers read: one `testcase` per scenario x version
/// x channel, a `failure` naming each failed check, `skipped` for a case not attempted yet.
public enum JUnitReport {
    public static func render(_ graded: GradedRun) -> String {
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
        for verdict in graded.cases {
            let runCase = verdict.runCase
            xml += #"    <testcase classname="\#(escape(run.suite.name)).\#(escape(runCase.scenario))" name="\#(escape("\(runCase.scenario) \(runCase.version) \(runCase.channel.rawValue)"))" time="0">"#
            switch verdict.status {
            case .failed:
                let failures = verdict.failures
                xml += "\n" + #"      <failure message="\#(escape(failures.first ?? "failed"))" type="\#(escape(firstFailedCheck(verdict) ?? "case"))">"#
                xml += escape(failures.joined(separator: "\n")) + "</failure>\n    "
            case .pending:
                xml += "\n" + #"      <skipped message="not attempted yet"/>"# + "\n    "
            case .running:
                xml += "\n" + #"      <skipped message="under way: a transaction has not ended"/>"# + "\n    "
            case .passed:
                break
            }
            let out = (["PAN \(runCase.pan)", "transactions: " + (runCase.transactions.isEmpty ? "none" : runCase.transactions.joined(separator: ", "))]
                       + verdict.warnings.map { "warning " + $0 }).joined(separator: "\n")
            xml += "\n      <system-out>" + escape(out) + "</system-out>\n    </testcase>\n"
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }

    private static func firstFailedCheck(_ verdict: CaseVerdict) -> String? {
        verdict.checks.first { $0.result.verdict == .fail }?.result.check.rawValue ?? (verdict.problems.isEmpty ? nil : "not-attempted")
    }

    static func escape(_ text: String) -> String { Markup.escape(text) }
}
