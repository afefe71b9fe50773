import Foundation
import FuzzTargets
import Testing
import TestSupport

/// The fuzz seeds and every input a fuzzer once crashed on, through the same targets: each
/// must end in a value or a typed error. A crash here stops the test run, as it would the server.
@Suite("Fuzz corpus and regressions")
struct FuzzCorpusTests {
    @Test(arguments: FuzzTarget.allCases)
    func everyKeptInputEndsWithoutACrash(_ target: FuzzTarget) throws {
        var replayed = 0
        for folder in ["Fuzz/Corpus", "Fuzz/Regressions"] {
            let directory = repositoryRoot + "/\(folder)/\(target.rawValue)"
            for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where !name.hasPrefix(".") {
                let data = try #require(FileManager.default.contents(atPath: directory + "/" + name))
                target.run(Array(data))
                replayed += 1
            }
        }
        #expect(replayed > 0, "no seeds for \(target.rawValue)")
    }
}
