public import JSON

/// A graded test run as one self-contained HTML5 page: inline CSS (`style`, from the page
/// templates folder's `report.css`), no script, no external resource (fonts, images, style sheets). Each case expands (`<details>`) to its expectation,
/// answers, problems, checks and transactions. Every text is escaped: it all comes from outside.
///
/// Reads the run's JSON (what `GET /admin/runs/{id}` answers) leniently: any member may be
/// missing or of another type, and is then left out.
public enum HTMLReport {
    public static func render(_ run: JSONValue, style: String) -> String {
        var out = ""
        out.reserveCapacity(16_384)
        let runName = text(run["name"]) ?? text(run["id"]) ?? "Test run"
        out += """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="generator" content="EMV 3DS test harness">
        <title>\(escape(runName)) · 3DS test run</title>
        <style>\(style)</style>
        </head>
        <body>

        """
        let summary = Summary(run)
        header(run, name: runName, summary: summary, into: &out)
        // Absolute in a report (an archived file opens the harness's inspector); relative in a run's JSON without it.
        let inspector = text(run["inspectorURL"]) ?? "/inspector"
        cases(run["cases"]?.arrayValue ?? [], inspector: inspector, into: &out)
        refusedOutsideCases(run["refusedOutsideCases"]?.arrayValue ?? [], inspector: inspector, into: &out)
        let runID = text(run["id"])
        let state = text(run["state"])
        out += "<footer><p><strong>EMV 3DS test harness</strong> · test run report</p><p>"
        out += "Generated from run \(runID.map { "<code>\(escape($0))</code>" } ?? "(no id)")"
        if state == "finished" {
            out += "; the run is finished, so these results are final."
        } else {
            out += "; the run was still open when this page was generated, so its results may change."
        }
        out += " This page is self-contained: it loads nothing. Transaction links open the harness's inspector.</p></footer>\n"
        out += "</body>\n</html>\n"
        return out
    }

    // MARK: - Header and summary

    private struct Summary {
        var cases = 0, passed = 0, failed = 0, running = 0, pending = 0

        init(_ run: JSONValue) {
            let list = run["cases"]?.arrayValue ?? []
            var counted = Summary(cases: list.count)
            for item in list {
                switch text(item["status"]) {
                case "passed": counted.passed += 1
                case "failed": counted.failed += 1
                case "running": counted.running += 1
                default: counted.pending += 1
                }
            }
            let given = run["summary"]
            cases = integer(given?["cases"]) ?? counted.cases
            passed = integer(given?["passed"]) ?? counted.passed
            failed = integer(given?["failed"]) ?? counted.failed
            running = integer(given?["running"]) ?? counted.running
            pending = integer(given?["pending"]) ?? counted.pending
        }

        private init(cases: Int) { self.cases = cases }
    }

    private static func header(_ run: JSONValue, name: String, summary: Summary, into out: inout String) {
        let suite = run["suite"]
        let state = text(run["state"])
        out += "<header class=\"page\">\n<div class=\"title\">\n<p class=\"kicker\">EMV 3DS test run</p>\n"
        out += "<h1>\(escape(name))</h1>\n"
        if let state {
            let kind = state == "finished" ? "finished" : state == "open" ? "open" : "other"
            out += "<span class=\"state state-\(kind)\">\(escape(state))</span>\n"
        }
        out += "</div>\n<dl class=\"facts\">\n"
        fact("Suite", text(suite?["name"]), into: &out)
        fact("Party under test", text(suite?["party"]), into: &out)
        fact("Versions", list(suite?["versions"]), into: &out)
        fact("Channels", list(suite?["channels"]), into: &out)
        fact("Created", text(run["createdAt"]).map(time), into: &out, raw: true)
        fact("Finished", text(run["finishedAt"]).map(time) ?? (state == "open" ? "<span class=\"muted\">not yet</span>" : nil), into: &out, raw: true)
        fact("Run id", text(run["id"]).map { "<code>\(escape($0))</code>" }, into: &out, raw: true)
        out += "</dl>\n</header>\n"

        out += "<section class=\"summary\" aria-label=\"Summary\">\n<div class=\"counts\">\n"
        count(summary.cases, "cases", "total", into: &out)
        count(summary.passed, "passed", "passed", into: &out)
        count(summary.failed, "failed", "failed", into: &out)
        count(summary.running, "running", "running", into: &out)
        count(summary.pending, "pending", "pending", into: &out)
        out += "</div>\n"
        let parts = [(summary.passed, "passed"), (summary.failed, "failed"), (summary.running, "running"), (summary.pending, "pending")]
        let total = parts.reduce(0) { $0 + max($1.0, 0) }
        out += "<div class=\"bar\" role=\"img\" aria-label=\"\(summary.passed) passed, \(summary.failed) failed, \(summary.running) running, \(summary.pending) pending\">"
        if total > 0 {
            for (value, kind) in parts where value > 0 {
                let percent = Double(value) * 100 / Double(total)
                out += "<span class=\"seg seg-\(kind)\" style=\"width:\(percentText(percent))%\" title=\"\(value) \(kind)\"></span>"
            }
        }
        out += "</div>\n"
        if total > 0 {
            let done = summary.passed + summary.failed
            out += "<p class=\"progress\">\(done) of \(total) graded"
            if done > 0 { out += " · pass rate \(percentText(Double(summary.passed) * 100 / Double(done)))%" }
            out += "</p>\n"
        }
        out += "</section>\n"
    }

    private static func fact(_ label: String, _ value: String?, into out: inout String, raw: Bool = false) {
        guard let value, !value.isEmpty else { return }
        out += "<div><dt>\(escape(label))</dt><dd>\(raw ? value : escape(value))</dd></div>\n"
    }

    private static func count(_ value: Int, _ label: String, _ kind: String, into out: inout String) {
        out += "<div class=\"count count-\(kind)\"><span class=\"n\">\(value)</span><span class=\"l\">\(label)</span></div>\n"
    }

    // MARK: - Cases

    private static let columns = "<span>Status</span><span>Scenario</span><span>Version</span><span>Channel</span><span>Card</span><span>Flow → transStatus</span><span class=\"num\">Txns</span>"

    private static func cases(_ items: [JSONValue], inspector: String, into out: inout String) {
        out += "<main>\n<h2>Cases <span class=\"muted\">(\(items.count))</span></h2>\n"
        let failed = items.enumerated().filter { text($0.element["status"]) == "failed" }
        if !failed.isEmpty {
            out += "<nav class=\"jump\" aria-label=\"Failed cases\"><span>Failed:</span> "
            out += failed.map { index, item in
                "<a href=\"#case-\(index + 1)\">\(escape(text(item["id"]) ?? caseLabel(item)))</a>"
            }.joined(separator: " ")
            out += "</nav>\n"
        }
        if items.isEmpty {
            out += "<p class=\"empty\">This run has no cases.</p>\n</main>\n"
            return
        }
        out += "<div class=\"cases\" role=\"table\" aria-label=\"Cases\">\n<div class=\"row head\" role=\"row\">\(columns)</div>\n"
        for (index, item) in items.enumerated() {
            caseRow(item, number: index + 1, inspector: inspector, into: &out)
        }
        out += "</div>\n</main>\n"
    }

    private static func caseLabel(_ item: JSONValue) -> String {
        [text(item["scenario"]), text(item["messageVersion"]), text(item["channel"])].compactMap { $0 }.joined(separator: "/")
    }

    private static func caseRow(_ item: JSONValue, number: Int, inspector: String, into out: inout String) {
        let status = text(item["status"]) ?? "pending"
        let kind = ["passed", "failed", "running", "pending"].contains(status) ? status : "pending"
        let transactions = item["transactions"]?.arrayValue ?? []
        out += "<details class=\"case case-\(kind)\" id=\"case-\(number)\">\n<summary class=\"row\" role=\"row\">"
        out += "<span><span class=\"badge badge-\(kind)\">\(escape(status))</span></span>"
        out += "<span class=\"scenario\">\(escape(text(item["scenario"]) ?? "—"))</span>"
        out += "<span>\(escape(text(item["messageVersion"]) ?? "—"))</span>"
        out += "<span>\(escape(text(item["channel"]) ?? "—"))</span>"
        var flow: String
        if item["preparation"] == .bool(true) {
            // A PRes case is a PReq's, armed by its name: no card, and the Erro due about the PRes (or none).
            out += "<span class=\"muted\">armed by name</span>"
            let codes = (item["preparationErro"]?.arrayValue ?? []).compactMap(text)
            flow = "PRes → " + (codes.isEmpty ? "taken" : "<strong class=\"mono\">Erro \(escape(codes.joined(separator: " or ")))</strong>")
        } else {
            out += "<span class=\"mono\">\(escape(text(item["card"]) ?? text(item["pan"]) ?? "—"))</span>"
            flow = escape(text(item["flow"]) ?? "—")
            if let transStatus = text(item["transStatus"]) { flow += " → <strong class=\"mono\">\(escape(transStatus))</strong>" }
        }
        if let sdkErro = text(item["sdkErro"]) { flow += " <span class=\"muted\">(SDK Erro \(escape(sdkErro)))</span>" }
        // The SDK stops: the challenge does not end as the flow's transStatus says.
        if text(item["sdkReport"]) == "runtimeError" { flow += " <span class=\"muted\">(SDK runtime error)</span>" }
        out += "<span>\(flow)</span>"
        out += "<span class=\"num\">\(transactions.count)</span>"
        out += "</summary>\n<div class=\"body\">\n"

        out += "<dl class=\"facts compact\">\n"
        fact("Case", text(item["id"]), into: &out)
        fact("Expectation", text(item["expectation"]), into: &out)
        if let answers = item["answers"]?.arrayValue, !answers.isEmpty {
            fact("Answers", answers.map { "<code>\(escape(text($0) ?? ""))</code>" }.joined(separator: " "), into: &out, raw: true)
        }
        fact("Expected SDK Erro", text(item["sdkErro"]), into: &out)
        out += "</dl>\n"

        let problems = (item["problems"]?.arrayValue ?? []).compactMap(text)
        if !problems.isEmpty {
            out += "<div class=\"problems\"><h3>Problems</h3><ul>\n"
            for problem in problems { out += "<li>\(escape(problem))</li>\n" }
            out += "</ul></div>\n"
        }

        checks(item["checks"]?.arrayValue ?? [], inspector: inspector, into: &out)
        transactionTable(transactions, inspector: inspector, into: &out)
        out += "</div>\n</details>\n"
    }

    private static func checks(_ checks: [JSONValue], inspector: String, into out: inout String) {
        guard !checks.isEmpty else {
            out += "<h3>Checks</h3><p class=\"muted\">No checks recorded.</p>\n"
            return
        }
        let failed = checks.count { text($0["verdict"]) == "fail" }
        let warned = checks.count { text($0["verdict"]) == "warning" }
        out += "<h3>Checks <span class=\"muted\">(\(checks.count): \(failed) failed, \(warned) \(warned == 1 ? "warning" : "warnings"))</span></h3>\n"
        out += "<table class=\"checks\">\n<thead><tr><th>Verdict</th><th>Check</th><th>What</th><th>Reference</th><th>Detail</th><th>Transaction</th></tr></thead>\n<tbody>\n"
        for check in checks {
            let verdict = text(check["verdict"]) ?? "—"
            let kind = ["pass", "fail", "warning"].contains(verdict) ? verdict : "unknown"
            out += "<tr class=\"v-\(kind)\">"
            out += "<td><span class=\"badge badge-\(kind)\">\(escape(verdict))</span></td>"
            out += "<td class=\"mono\">\(escape(text(check["id"]) ?? "—"))</td>"
            out += "<td>\(escape(text(check["text"]) ?? ""))"
            if let party = text(check["party"]) { out += " <span class=\"party\">\(escape(party))</span>" }
            out += "</td>"
            out += "<td class=\"ref\">\(escape(text(check["reference"]) ?? ""))</td>"
            out += "<td class=\"detail\">\(escape(text(check["detail"]) ?? ""))</td>"
            if let id = text(check["dsTransID"]) {
                // Short: a case's checks mostly share one transaction; the whole id is the tooltip.
                let short = id.count > 13 ? String(id.prefix(8)) + "…" : id
                out += "<td class=\"mono id\"><a href=\"\(inspectorLink(id, inspector))\" title=\"\(escape(id))\">\(escape(short))</a></td>"
            } else {
                out += "<td></td>"
            }
            out += "</tr>\n"
            // How to fix it, under the check across the table: a sentence too long for a column.
            if let fix = text(check["fix"]) {
                out += "<tr class=\"fix-row v-\(kind)\"><td></td><td colspan=\"5\"><b>How to fix:</b> \(escape(fix))</td></tr>\n"
            }
        }
        out += "</tbody>\n</table>\n"
    }

    /// The party's messages a role refused that no case took: often why the cases were not attempted.
    private static func refusedOutsideCases(_ items: [JSONValue], inspector: String, into out: inout String) {
        guard !items.isEmpty else { return }
        out += "<section class=\"refused\" aria-label=\"Refused outside the cases\">\n"
        out += "<h2>Refused outside the cases <span class=\"muted\">(\(items.count))</span></h2>\n"
        out += "<p class=\"muted\">Messages of the party under test that the harness refused while the run was open and that no case took.</p>\n"
        out += "<table class=\"transactions\">\n<thead><tr><th>Entry</th><th>Received</th><th>Message</th><th>Answer</th><th>Failed checks</th></tr></thead>\n<tbody>\n"
        for item in items {
            let id = text(item["dsTransID"])
            out += "<tr>"
            out += id.map { "<td class=\"mono tid\"><a href=\"\(inspectorLink($0, inspector))\" title=\"Open in the inspector\">\(escape($0))</a></td>" } ?? "<td class=\"muted\">(no id)</td>"
            out += "<td>\(text(item["startedAt"]).map(time) ?? "")</td>"
            out += "<td class=\"mono\">\(escape(text(item["message"]) ?? ""))</td>"
            out += "<td>\(escape(text(item["endedBecause"]) ?? ""))</td>"
            out += "<td>\((item["failures"]?.arrayValue ?? []).compactMap(text).map(escape).joined(separator: "<br>"))</td>"
            out += "</tr>\n"
        }
        out += "</tbody>\n</table>\n</section>\n"
    }

    private static func transactionTable(_ transactions: [JSONValue], inspector: String, into out: inout String) {
        guard !transactions.isEmpty else {
            out += "<h3>Transactions</h3><p class=\"muted\">No transaction was attached to this case.</p>\n"
            return
        }
        out += "<h3>Transactions <span class=\"muted\">(\(transactions.count))</span></h3>\n"
        out += "<table class=\"transactions\">\n<thead><tr><th>dsTransID</th><th>Started</th><th>PAN</th><th>State</th><th>transStatus</th><th>Verdict</th><th class=\"num\">Failed checks</th></tr></thead>\n<tbody>\n"
        for transaction in transactions {
            // A transaction is its summary object, or only its dsTransID.
            let id = text(transaction["dsTransID"]) ?? text(transaction)
            out += "<tr>"
            if let id {
                out += "<td class=\"mono tid\"><a href=\"\(inspectorLink(id, inspector))\" title=\"Open in the inspector\">\(escape(id))</a></td>"
            } else {
                out += "<td class=\"muted\">(no id)</td>"
            }
            out += "<td>\(text(transaction["startedAt"]).map(time) ?? "")</td>"
            out += "<td class=\"mono\">\(escape(text(transaction["acctNumber"]) ?? ""))</td>"
            var state = escape(text(transaction["state"]) ?? "")
            if let because = text(transaction["endedBecause"]) { state += " <span class=\"muted\">(\(escape(because)))</span>" }
            out += "<td>\(state)</td>"
            out += "<td class=\"mono\">\(escape(text(transaction["transStatus"]) ?? ""))</td>"
            if let verdict = text(transaction["verdict"]) {
                let kind = ["pass", "fail", "warning"].contains(verdict) ? verdict : "unknown"
                out += "<td><span class=\"badge badge-\(kind)\">\(escape(verdict))</span></td>"
            } else {
                out += "<td></td>"
            }
            out += "<td class=\"num\">\(escape(text(transaction["failedChecks"]) ?? ""))</td>"
            out += "</tr>\n"
            if let messages = transaction["messages"]?.arrayValue, !messages.isEmpty {
                out += "<tr class=\"messages\"><td colspan=\"7\">"
                messageList(messages, into: &out)
                out += "</td></tr>\n"
            } else if transaction["messagesOmitted"] == .bool(true) {
                out += "<tr class=\"messages\"><td colspan=\"7\" class=\"muted\">Messages left out: the report carries at most \(GradedRun.evidenceBudgetBytes / 1_048_576) MiB of them; the link opens them in the inspector.</td></tr>\n"
            }
        }
        out += "</tbody>\n</table>\n"
    }

    /// A transaction's messages as they went, each expandable to its body: the evidence of a failed case.
    private static func messageList(_ messages: [JSONValue], into out: inout String) {
        out += "<details class=\"messages\"><summary>Messages (\(messages.count))</summary>\n<ol>\n"
        for message in messages {
            let route = "\(text(message["from"]) ?? "?") → \(text(message["to"]) ?? "?")"
            let body = message["message"].map { $0.stringValue ?? JSONWriter.string($0) } ?? ""
            out += "<li><details><summary><strong class=\"mono\">\(escape(text(message["type"]) ?? "message"))</strong> \(escape(route))"
            if let at = text(message["at"]) { out += " <span class=\"muted\">\(time(at))</span>" }
            if let note = text(message["note"]) { out += " <span class=\"muted\">(\(escape(note)))</span>" }
            out += "</summary><pre class=\"message\">\(escape(body))</pre></details></li>\n"
        }
        out += "</ol></details>\n"
    }

    // MARK: - Text

    /// `text` safe in HTML content and in quoted attribute values.
    static func escape(_ text: String) -> String { Markup.escape(text) }

    /// The inspector's view of a transaction, escaped for the attribute.
    private static func inspectorLink(_ dsTransID: String, _ inspector: String) -> String {
        escape(GradedRun.inspectorLink(dsTransID, at: inspector))
    }

    /// A string, number or boolean as text; nil for anything else.
    private static func text(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let string)?: string
        case .number(let number)?: number
        case .bool(let bool)?: bool ? "true" : "false"
        default: nil
        }
    }

    private static func integer(_ value: JSONValue?) -> Int? {
        text(value).flatMap { Int($0) ?? Double($0).flatMap { $0.isFinite ? Int(exactly: $0.rounded()) : nil } }
    }

    /// Strings of an array, comma separated.
    private static func list(_ value: JSONValue?) -> String? {
        guard let items = value?.arrayValue, !items.isEmpty else { return nil }
        return items.compactMap(text).joined(separator: ", ")
    }

    /// An ISO 8601 time shown as "2026-11-22 10:00:00 UTC" (escaped, with the original as a tooltip).
    private static func time(_ iso: String) -> String {
        var shown = iso
        let scalars = Array(iso.unicodeScalars)
        if scalars.count >= 20, scalars[10] == "T", scalars.last == "Z" {
            var readable = String(String.UnicodeScalarView(scalars[0 ..< 10])) + " " + String(String.UnicodeScalarView(scalars[11 ..< 19]))
            if scalars.count > 20, scalars[19] == "." {
                readable += String(String.UnicodeScalarView(scalars[19 ..< scalars.count - 1]))
            }
            shown = readable + " UTC"
        }
        return "<time datetime=\"\(escape(iso))\" title=\"\(escape(iso))\">\(escape(shown))</time>"
    }

    private static func percentText(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    // MARK: - Style

}
