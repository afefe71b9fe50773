import Configuration
import EMV3DS
import Runs
import Testing
import TestSupport

/// `only` in a negative suite selects by a part of the generated names: a message, a mutation, an element
/// (docs/negative.md), as a CI job running a subset does; a part that names no case of the suite is refused.
@Suite("Subsets of the negative suites")
struct NegativeSuiteTests {
    static let catalog = try! ScenarioFile.load(path: repositoryRoot + "/config/scenarios.yaml")

    func scenarios(_ party: ConformanceCheck.Party, only: [String], negative: Bool = true) throws -> Set<String> {
        Set(try Suite(name: "subset", party: party, only: only, negative: negative).cases(from: Self.catalog).map(\.scenario))
    }

    @Test func onlySelectsByMessageMutationOrElement() throws {
        let outside = try scenarios(.threeDSServer, only: ["outside"])
        #expect(!outside.isEmpty && outside.allSatisfy { $0.contains("-outside-") })
        #expect(try scenarios(.threeDSServer, only: ["rreq"]).allSatisfy { $0.hasPrefix("negative-rreq-") })
        let transStatus = try scenarios(.sdk, only: ["transStatus"])
        #expect(transStatus.contains("negative-cres-01-final-missing-transStatus") && transStatus.allSatisfy { $0.contains("-transStatus") })
        // Parts in order: final-missing is the final CRes's missing elements, not every missing one.
        #expect(try scenarios(.sdk, only: ["final-missing"]).allSatisfy { $0.contains("-final-missing-") })
        // Entries are a union.
        // The CRes's critical and non-critical extension, and acsSignedContent's critical header parameter.
        #expect(try scenarios(.sdk, only: ["critical", "noncritical"]).count == 3)
    }

    @Test func aPartThatNamesNoCaseOfTheSuiteIsRefused() throws {
        #expect(throws: SuiteError.self) { try scenarios(.sdk, only: ["ares"]) }
        // The file's scenarios are not matched by parts: a name or a case id only.
        #expect(throws: SuiteError.self) { try scenarios(.sdk, only: ["challenge"], negative: false) }
    }
}
