import EMV3DS
import EMVCrypto
import Foundation
import JSON
import Net
import SDKSimulator
import Testing
import TestSupport

/// The counts the docs give of `simulate --all` are the catalog's, as the simulator builds its matrix from
/// `GET /admin/scenarios`: a scenario added or removed changes them here first.
@Suite("Counts in the docs")
struct DocumentedCountsTests {
    @Test func theSimulateAllCountsOfTheDocsAreTheCatalogs() async throws {
        try await withHarness { harness in
            let cases = try await harness.simulator.scenarios().compactMap { SimulationCase(scenario: $0) }
            let versions = MessageVersion.allCases.count, styles = DeviceDataStyle.allCases.count
            let matrix = SimulationMatrix(cases: cases, versions: MessageVersion.allCases, styles: DeviceDataStyle.allCases,
                                          coverage: .everyCombination, channels: [.app, .browser])
            let app = matrix.entries.count { $0.channel == .app }, browser = matrix.entries.count { $0.channel == .browser }
            let browserCases = cases.count { $0.channels.contains(.browser) }
            func read(_ path: String) -> String { (try? String(contentsOfFile: repositoryRoot + "/" + path, encoding: .utf8)) ?? "" }
            #expect(read("README.md").contains("(\(matrix.entries.count) transactions)"))
            let simulator = read("docs/simulator.md").replacingOccurrences(of: "\n", with: " ")
            #expect(simulator.contains("\(cases.count) scenarios with a PAN x \(versions) versions x \(styles) styles = \(app) app transactions, and the "
                                       + "\(browserCases) scenarios that play in the browser x \(versions) versions = \(browser) browser ones, "
                                       + "\(matrix.entries.count) in all"), "docs/simulator.md")
            // The cluster tests run the latest version's, in one device data style.
            let latest = SimulationMatrix(cases: cases, versions: [.v2_3_1], styles: [.android], coverage: .everyCombination,
                                          channels: [.app, .browser]).entries.count
            #expect(read("docs/scale.md").replacingOccurrences(of: "\n", with: " ")
                .contains("`simulate --all --version 2.3.1 --style android` (\(latest) transactions"), "docs/scale.md")
        }
    }

    /// docs/negative.md's totals of the generated cases are the catalog's: a table row added makes new cases, and the docs say so.
    @Test func theNegativeCaseTotalsOfTheDocsAreTheCatalogs() async throws {
        try await withHarness { harness in
            let listed = try JSONReader.parse(try await harness.get("/admin/scenarios/negative").body).value
            let names = (listed["scenarios"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
            // The CRes's cases, not those of the Erro in its place (a table of their own).
            let cres = names.count { $0.hasPrefix("negative-cres-") && !$0.contains("-erro-") }
            let text = ((try? String(contentsOfFile: repositoryRoot + "/docs/negative.md", encoding: .utf8)) ?? "").replacingOccurrences(of: "\n", with: " ")
            #expect(cres > 0 && text.contains("A CRes (`sdk-negative`), \(cres) scenarios; \(names.count) in all"), "\(cres) CRes cases, \(names.count) in all")
        }
    }
}
