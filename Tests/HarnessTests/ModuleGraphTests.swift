import Foundation
import Testing
import TestSupport

/// The module graph three ways: as Package.swift declares it, as the sources import it, and as ARCHITECTURE.md's table
/// draws it. They agree, and the table's order is a layering: each module depends only on modules in rows above it.
@Suite("The module graph")
struct ModuleGraphTests {
    /// Modules every target may import without declaring them.
    static let toolchain: Set<String> = ["Foundation", "Synchronization", "Glibc", "Musl", "Darwin", "Dispatch", "Testing", "XCTest"]

    @Test func everyImportIsDeclaredInPackageSwiftAndEveryDeclaredDependencyIsImported() throws {
        let package = try PackageTargets(manifest: String(contentsOfFile: repositoryRoot + "/Package.swift", encoding: .utf8))
        #expect(package.targets.count > 20, "Package.swift read as \(package.targets.map(\.name))")
        for target in package.targets where target.kind != "systemLibrary" {
            let imported = try Self.imports(under: repositoryRoot + "/" + target.folder).subtracting(Self.toolchain)
            #expect(imported.subtracting(target.dependencies).isEmpty,
                    "\(target.name) imports \(imported.subtracting(target.dependencies).sorted()) without declaring it in Package.swift")
            #expect(target.dependencies.subtracting(imported).isEmpty,
                    "\(target.name) declares \(target.dependencies.subtracting(imported).sorted()) in Package.swift and imports none of it")
        }
    }

    @Test func architectureTableListsEachModuleWithItsDependenciesBelowThem() throws {
        let package = try PackageTargets(manifest: String(contentsOfFile: repositoryRoot + "/Package.swift", encoding: .utf8))
        let rows = try Self.tableRows(String(contentsOfFile: repositoryRoot + "/ARCHITECTURE.md", encoding: .utf8))
        let modules = package.targets.filter { $0.kind != "testTarget" && !$0.folder.hasPrefix("Tests/") }
        #expect(rows.map(\.module).sorted() == modules.map(\.name).sorted(), "ARCHITECTURE.md's table and Package.swift's modules differ")
        var above: Set<String> = []
        for row in rows {
            if let target = modules.first(where: { $0.name == row.module }) {
                #expect(row.dependencies == target.dependencies,
                        "ARCHITECTURE.md: \(row.module) depends on \(row.dependencies.sorted()); Package.swift says \(target.dependencies.sorted())")
            }
            let below = row.dependencies.filter { dependency in rows.contains { $0.module == dependency } && !above.contains(dependency) }
            #expect(below.isEmpty, "ARCHITECTURE.md: \(row.module) depends on \(below.sorted()), which are not in rows above it")
            above.insert(row.module)
        }
    }

    @Test func theStoreAndThePureModulesSpeakNoHTTPAndLinkNoPostgreSQL() throws {
        let package = try PackageTargets(manifest: String(contentsOfFile: repositoryRoot + "/Package.swift", encoding: .utf8))
        func closure(_ name: String) -> Set<String> {
            var seen: Set<String> = [], next = [name]
            while let module = next.popLast() {
                for dependency in package.targets.first(where: { $0.name == module })?.dependencies ?? [] where seen.insert(dependency).inserted {
                    next.append(dependency)
                }
            }
            return seen
        }
        #expect(!closure("Store").contains("Net"), "Store reaches Net: \(closure("Store").sorted())")
        for pure in ["EMV3DS", "Faults", "Scenarios"] {
            #expect(closure(pure).isDisjoint(with: ["Net", "EventLoops", "CLibUV", "CLibPQ", "Store"]), "\(pure) reaches I/O: \(closure(pure).sorted())")
        }
        let linkingLibPQ = package.targets.filter { $0.dependencies.contains("CLibPQ") }.map(\.name)
        #expect(linkingLibPQ == ["Postgres"], "libpq is linked by \(linkingLibPQ)")
    }

    /// The modules the Swift files under `folder` import.
    static func imports(under folder: String) throws -> Set<String> {
        var found: Set<String> = []
        let files = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
        for file in files {
            for line in try String(contentsOfFile: folder + "/" + file, encoding: .utf8).split(separator: "\n") {
                // At the start of a line, as Swift's imports are here (an indented one is in a string: a Python peer's).
                if line.first != " ", line.contains("import "), let match = line.wholeMatch(of: #/(?:(?:public|package|internal|@testable) )?import (\w+)/#) {
                    found.insert(String(match.output.1))
                }
            }
        }
        return found
    }

    /// The rows of the table under "## Modules and who imports whom": a module and the backticked names it depends on.
    static func tableRows(_ markdown: String) throws -> [(module: String, dependencies: Set<String>)] {
        let section = try #require(markdown.components(separatedBy: "## Modules and who imports whom").dropFirst().first)
        return section.split(separator: "\n").prefix { !$0.hasPrefix("## ") }.compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 5, cells[1].hasPrefix("`") else { return nil }
            return (cells[1].trimmingCharacters(in: ["`"]), Set(Self.backticked(cells[3])))
        }
    }

    static func backticked(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }
}

/// The targets of Package.swift as its text declares them: each `.target(name:…)` (and its kinds) with the target and
/// product names of its `dependencies: [...]`.
struct PackageTargets {
    struct Target {
        let kind: String
        let name: String
        let dependencies: Set<String>
        let folder: String
    }

    let targets: [Target]

    init(manifest: String) throws {
        var targets: [Target] = []
        let pattern = try Regex(#"\.(target|executableTarget|testTarget|systemLibrary)\(\s*name: "(\w+)""#)
        for match in manifest.matches(of: pattern) {
            guard let kind = match.output[1].substring, let name = match.output[2].substring else { continue }
            let call = Self.balanced(manifest[match.range.upperBound...], open: "(", close: ")")
            var dependencies: Set<String> = []
            if let list = call.range(of: "dependencies: [") {
                let items = Self.balanced(call[list.upperBound...], open: "[", close: "]")
                for product in items.matches(of: #/\.product\(name: "(\w+)"/#) { dependencies.insert(String(product.output.1)) }
                let withoutProducts = items.replacing(#/\.product\([^)]*\)/#, with: "")
                for dependency in withoutProducts.matches(of: #/"(\w+)"/#) { dependencies.insert(String(dependency.output.1)) }
            }
            let path = call.firstMatch(of: #/path: "([^"]+)"/#).map { String($0.output.1) }
            let folder = path ?? ((kind == "testTarget" ? "Tests/" : "Sources/") + name)
            targets.append(Target(kind: String(kind), name: String(name), dependencies: dependencies, folder: folder))
        }
        self.targets = targets
    }

    /// The text up to the bracket that closes the one open before `text` starts.
    static func balanced(_ text: Substring, open: Character, close: Character) -> Substring {
        var depth = 1
        for index in text.indices {
            if text[index] == open { depth += 1 }
            if text[index] == close { depth -= 1 }
            if depth == 0 { return text[..<index] }
        }
        return text
    }
}
