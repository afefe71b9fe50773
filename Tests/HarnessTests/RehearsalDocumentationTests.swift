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
}
