import EMV3DS
import EMVCrypto
import Foundation
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
            // The cluster tests run the latest version's.
            let latest = SimulationMatrix(cases: cases, versions: [.v2_3_1], styles: DeviceDataStyle.allCases, coverage: .everyCombination,
                                          channels: [.app, .browser]).entries.count
            #expect(read("docs/scale.md").replacingOccurrences(of: "\n", with: " ").contains("`simulate --all --version 2.3.1` (\(latest) transactions"),
                    "docs/scale.md")
        }
    }
}
