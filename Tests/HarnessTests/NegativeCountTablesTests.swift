import Configuration
import EMV3DS
import Foundation
import Scenarios
import Testing
import TestSupport

/// docs/negative.md's tables of how many cases each mutation class makes, per message, version and channel, are the
/// generated catalog's: a row added to a field table changes the cases, and this test then shows the table the page must
/// have. Each table is rendered from the catalog as the page writes it and must be in the page as it is.
@Suite("docs/negative.md counts the generated cases")
struct NegativeCountTablesTests {
    /// A generated case's message (`cres`, `cres-final`, `signed-content`, `ares`, `ares-challenge`, `ares-declined`, ..., `rreq`,
    /// `rreq-challenge`, `pres`) and mutation class, read from its name.
    struct Case {
        let message: String
        let mutation: String
        let scenario: Scenario

        init?(_ scenario: Scenario) {
            var parts = scenario.name.split(separator: "-").map(String.init)
            guard parts.count > 3, parts[0] == "negative" else { return nil }
            var message = parts[1]
            parts.removeFirst(2)
            if message == "cres" { parts.removeFirst() }  // the screen type
            if message == "signed", parts.first == "content" {
                message = "signed-content"
                parts.removeFirst()
                if let part = parts.first, ["header", "key"].contains(part) {
                    message = "signed-content-" + part
                    parts.removeFirst()
                }
            }
            if let group = parts.first, ["final", "challenge", "declined", "rejected", "unavailable", "decoupled", "erro"].contains(group) {
                message += "-" + group
                parts.removeFirst()
            }
            guard let mutation = parts.first else { return nil }
            (self.message, self.mutation, self.scenario) = (message, mutation, scenario)
        }

        func plays(in version: MessageVersion, on channel: DeviceChannel? = nil) -> Bool {
            (scenario.versions?.contains(version) ?? true) && (channel.map(scenario.channels.contains) ?? true)
        }
    }

    /// The Erro each class calls for, as the tables' first column says it.
    static let answers = ["missing": "201", "empty": "203", "outside": "203", "type": "203", "length": "203", "format": "203",
                          "duplicate": "204", "critical": "202", "version": "102 or 203", "messagetype": "101 or 203"]

    /// A row: its label and the cases it counts.
    typealias Row = (label: String, counts: (Case) -> Bool)

    static func row(_ mutation: String, prefix: String = "", message: String) -> Row {
        ("`\(prefix)\(mutation)` (\(answers[mutation] ?? "no Erro"))", { $0.message == message && $0.mutation == mutation })
    }

    /// A table as the page writes it: a column a version (or a version's app and browser counts), then the row's
    /// scenarios; a last row of all. `dash`: what a version that has none of a row's cases shows, where that is "–".
    /// With the names of the scenarios its row of all counts.
    static func table(_ rows: [Row], of cases: [Case], versions: [MessageVersion] = MessageVersion.allCases, byChannel: Bool = false,
                      all: ((Case) -> Bool)? = nil, dash: (Row, MessageVersion) -> Bool = { _, _ in false }) -> (text: String, counted: Set<String>) {
        let all: Row = ("all", all ?? { candidate in rows.contains { $0.counts(candidate) } })
        let header = "| class | " + versions.map { byChannel ? "\($0.rawValue) app, browser" : $0.rawValue }.joined(separator: " | ") + " | scenarios |"
        var lines = [header, "| --- | " + versions.map { _ in "---" }.joined(separator: " | ") + " | --- |"]
        for row in rows + [all] {
            let counted = cases.filter(row.counts)
            let cells = versions.map { version -> String in
                if byChannel {
                    return "\(counted.count { $0.plays(in: version, on: .app) }), \(counted.count { $0.plays(in: version, on: .browser) })"
                }
                let count = counted.count { $0.plays(in: version) }
                return count == 0 && dash(row, version) ? "–" : "\(count)"
            }
            lines.append("| \(row.label) | " + cells.joined(separator: " | ") + " | \(counted.count) |")
        }
        return (lines.joined(separator: "\n"), Set(cases.filter(all.counts).map(\.scenario.name)))
    }

    static let classes = ["missing", "empty", "outside", "type", "length", "format", "duplicate", "version", "messagetype"]

    /// Every table of the page, rendered from `cases`.
    static func tables(_ cases: [Case]) -> [(name: String, table: (text: String, counted: Set<String>))] {
        let present = { (message: String) in classes.filter { mutation in cases.contains { $0.message == message && $0.mutation == mutation } } }
        let cresRows = present("cres").map { row($0, message: "cres") } + present("cres-final").map { row($0, prefix: "final-", message: "cres-final") }
            + [row("critical", message: "cres"),
               ("`unknown`, `final-unknown`, `noncritical` (no Erro)", { ($0.message == "cres" || $0.message == "cres-final") && ["unknown", "noncritical"].contains($0.mutation) }),
               row("undefined", message: "cres"), row("misplaced", message: "cres")]
        let aresRows = present("ares").map { row($0, message: "ares") } + [row("critical", message: "ares"), row("unknown", message: "ares"), row("undefined", message: "ares")]
        let finalRows: [Row] = present("ares-declined").map { mutation in
            ("N, R, U each: `\(mutation)` (\(answers[mutation] ?? ""))", { $0.message == "ares-declined" && $0.mutation == mutation })
        } + present("ares-decoupled").map { mutation in
            ("D: `\(mutation)` (\(answers[mutation] ?? ""))", { $0.message == "ares-decoupled" && $0.mutation == mutation })
        }
        // "N, R, U each" counts N's; the row of all counts R's and U's too. 2.1.0 has no decoupled authentication: "–".
        let finalTable = table(finalRows, of: cases, all: { ["ares-declined", "ares-rejected", "ares-unavailable", "ares-decoupled"].contains($0.message) },
                               dash: { row, version in row.label.hasPrefix("D:") && version < .v2_2_0 })
        let rreqRows = present("rreq").map { row($0, message: "rreq") } + [row("critical", message: "rreq"), row("unknown", message: "rreq"), row("undefined", message: "rreq")]
        let challengeRReqRows = present("rreq-challenge").map { row($0, message: "rreq-challenge") }
            + [row("critical", message: "rreq-challenge"), row("unknown", message: "rreq-challenge"), row("undefined", message: "rreq-challenge")]
        let payloadRows: [Row] = present("signed-content").map { (mutation: String) -> Row in
            ("`\(mutation)` (runtime error, no CReq)", { (candidate: Case) in candidate.message == "signed-content" && candidate.mutation == mutation })
        } + [("`unknown` (taken)", { (candidate: Case) in candidate.message == "signed-content" && candidate.mutation == "unknown" })]
        let headerRows: [Row] = (present("signed-content-header") + ["critical"]).map { (mutation: String) -> Row in
            ("`\(mutation)` (runtime error, no CReq)", { (candidate: Case) in candidate.message == "signed-content-header" && candidate.mutation == mutation })
        } + [("`unknown` (taken)", { (candidate: Case) in candidate.message == "signed-content-header" && candidate.mutation == "unknown" })]
        let keyRows: [Row] = present("signed-content-key").map { (mutation: String) -> Row in
            ("`\(mutation)` (runtime error, no CReq)", { (candidate: Case) in candidate.message == "signed-content-key" && candidate.mutation == mutation })
        } + [("`unknown` (taken)", { (candidate: Case) in candidate.message == "signed-content-key" && candidate.mutation == "unknown" })]
        // No row names an Erro: none is due about an Erro, in error or not (EMVCo FAQ Q52).
        func erroRows(_ message: String) -> [Row] {
            (present(message) + ["unknown"]).map { (mutation: String) -> Row in
                ("`\(mutation)`", { (candidate: Case) in candidate.message == message && candidate.mutation == mutation })
            }
        }
        return [
            ("CRes", table(cresRows, of: cases)),
            ("ARes", table(aresRows, of: cases)),
            ("challenge ARes", table(present("ares-challenge").map { row($0, message: "ares-challenge") }, of: cases, byChannel: true)),
            ("final and decoupled ARes", finalTable),
            ("RReq", table(rreqRows, of: cases, versions: [.v2_2_0, .v2_3_1])),
            ("challenge RReq", table(challengeRReqRows, of: cases, byChannel: true)),
            ("acsSignedContent's payload", table(payloadRows, of: cases)),
            ("acsSignedContent's header", table(headerRows, of: cases)),
            ("acsSignedContent's key", table(keyRows, of: cases)),
            ("Erro", table(erroRows("erro"), of: cases)),
            ("Erro in place of the CRes", table(erroRows("cres-erro"), of: cases)),
            ("Erro in place of the PRes", table(erroRows("pres-erro"), of: cases)),
            ("PRes", table(present("pres").map { row($0, message: "pres") } + [row("critical", message: "pres"), row("unknown", message: "pres"),
                                                                                 row("undefined", message: "pres")], of: cases)),
        ]
    }

    @Test func eachTableOfThePageIsTheCatalogs() throws {
        let catalog = try ScenarioFile.load(path: repositoryRoot + "/config/scenarios.yaml")
        let cases = catalog.negative.compactMap(Case.init)
        #expect(cases.count == catalog.negative.count, "a negative case whose name does not say its message and class")
        // N, R and U make the same cases: one row says each.
        for mutation in Self.classes {
            let counts = ["ares-declined", "ares-rejected", "ares-unavailable"].map { message in cases.count { $0.message == message && $0.mutation == mutation } }
            #expect(Set(counts).count == 1, "\(mutation): N, R, U make \(counts)")
        }
        let tables = Self.tables(cases)
        let counted = tables.reduce(into: Set<String>()) { $0.formUnion($1.table.counted) }
        let uncounted = cases.map(\.scenario.name).filter { !counted.contains($0) }
        #expect(uncounted.isEmpty, "cases no table of the page counts: \(uncounted.prefix(5))")
        let page = (try? String(contentsOfFile: repositoryRoot + "/docs/negative.md", encoding: .utf8)) ?? ""
        for (name, table) in tables {
            let text = table.text
            let written = page.contains(text)
            #expect(written, "docs/negative.md: the \(name) table is now\n\(text)")
        }
        // Two messages' tables may read alike (the Erro in place of the ARes and of the CRes): the page has each.
        for text in Set(tables.map(\.table.text)) {
            let tablesWithIt = tables.count { $0.table.text == text }
            #expect(page.components(separatedBy: text).count - 1 >= tablesWithIt, "docs/negative.md has \(tablesWithIt) tables reading\n\(text)")
        }
    }
}
