import EMV3DS
import Foundation
import TestSupport
import Testing

/// docs/rehearsal.md is the list of what a run grades: every check the harness makes has its row
/// there, with the test that makes it fail, and no row names a check that does not exist.
@Suite("Rehearsal documentation")
struct RehearsalDocumentationTests {
    @Test func everyCheckHasItsRowAndEveryRowItsCheck() throws {
        let text = try String(contentsOfFile: repositoryRoot + "/docs/rehearsal.md", encoding: .utf8)
        let rows = text.split(separator: "\n").filter { $0.hasPrefix("| `") }
        let documented = Set(rows.compactMap { $0.dropFirst(3).split(separator: "`").first.map(String.init) })
        let checks = Set(ConformanceCheck.allCases.map(\.rawValue))
        #expect(checks.subtracting(documented).isEmpty, "checks without a row: \(checks.subtracting(documented).sorted())")
        #expect(documented.subtracting(checks).isEmpty, "rows of no check: \(documented.subtracting(checks).sorted())")
        // Each row names the test that makes its check fail (its last column).
        for row in rows {
            let columns = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            #expect(columns.count == 5 && columns[4].contains("`"), "\(row.prefix(60))")
        }
    }

    /// A check's row is in the section of the party it judges: a reader rehearsing a 3DS Server reads that table alone.
    @Test func eachCheckIsListedUnderThePartyItJudges() throws {
        let text = try String(contentsOfFile: repositoryRoot + "/docs/rehearsal.md", encoding: .utf8)
        var section = ""
        for line in text.split(separator: "\n") {
            if line.hasPrefix("## ") { section = String(line.dropFirst(3)) }
            guard line.hasPrefix("| `"), let id = line.dropFirst(3).split(separator: "`").first,
                  let check = ConformanceCheck(rawValue: String(id)) else { continue }
            switch section {
            case "Checks of a 3DS Server", "Card ranges by serial number": #expect(check.party == .threeDSServer, "\(id) under \(section)")
            case "Checks of an SDK": #expect(check.party == .sdk, "\(id) under \(section)")
            default: #expect(section == "Warnings", "\(id) under \(section)")
            }
        }
    }
}
