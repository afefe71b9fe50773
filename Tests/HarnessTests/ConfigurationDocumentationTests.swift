import Configuration
import Foundation
import Harness
import TestSupport
import Testing
import Yams

/// The configuration keys, the committed file and the documentation cannot drift apart: every
/// key the decoder accepts is in `config/harness.yaml` and in `docs/configuration.md` (once), both
/// in one order; and every relative link of the documentation leads to a file and a heading
/// that exist.
///
/// The keys are not listed here a second time: the decoder names the keys it knows when it
/// refuses an unknown one (`server.notAConfigurationKey: unknown key (known: host, httpPort, ...)`),
/// so each section is asked for its keys with a key it cannot know.
@Suite("Configuration documentation")
struct ConfigurationDocumentationTests {
    // MARK: The keys, as the decoder knows them

    /// One step into the configuration: a key of a mapping, or any entry of a list.
    enum Step: Hashable, Sendable {
        case key(String)
        case entry
    }

    /// A path as the documentation writes it: `server.host`, `directoryServers[].rid`.
    static func name(_ path: [Step]) -> String {
        path.reduce(into: "") { name, step in
            switch step {
            case .key(let key): name += (name.isEmpty ? "" : ".") + key
            case .entry: name += "[]"
            }
        }
    }

    static let unknownKey = "notAConfigurationKey"

    /// The keys the decoder accepts in the mapping at `path`, read from its refusal of a key it
    /// cannot know there; nil when `path` is not a mapping (a value, or a list).
    static func acceptedKeys(at path: [Step]) -> [String]? {
        // YAML is a superset of JSON: {"server": {"notAConfigurationKey": 1}}, {"directoryServers": [{...}]}.
        let yaml = path.reversed().reduce("{\"\(unknownKey)\": 1}") { inner, step in
            switch step {
            case .key(let key): "{\"\(key)\": \(inner)}"
            case .entry: "[\(inner)]"
            }
        }
        do {
            _ = try HarnessConfiguration.parse(yaml)
            return nil
        } catch {
            let message = error.description
            let marker = "\(unknownKey): unknown key (known: "
            guard let start = message.range(of: marker), message.hasSuffix(")") else { return nil }
            return message[start.upperBound..<message.index(before: message.endIndex)].components(separatedBy: ", ")
        }
    }

    /// Every key the decoder accepts: each value and each list of entries, with the keys of
    /// the entries (`directoryServers`, `directoryServers[].rid`, ...). Sections (`server`) are
    /// not keys of their own: their keys are.
    static let decoderKeys: [String] = {
        var keys: [String] = []
        func walk(_ path: [Step]) {
            for key in acceptedKeys(at: path) ?? [] {
                let child = path + [.key(key)]
                if acceptedKeys(at: child) != nil {
                    walk(child)
                } else if acceptedKeys(at: child + [.entry]) != nil {
                    keys.append(name(child))
                    walk(child + [.entry])
                } else {
                    keys.append(name(child))
                }
            }
        }
        walk([])
        return keys
    }()

    @Test func theDecoderNamesTheKeysItAccepts() {
        // Should the refusal stop naming the known keys, the tests below would check nothing.
        #expect(Self.acceptedKeys(at: []) != nil, "HarnessConfiguration no longer names its keys when it refuses an unknown one: read them another way")
        #expect(Self.decoderKeys.contains("server.host"))
        #expect(Self.decoderKeys.contains("directoryServers[].rid"))
    }

    // MARK: config/harness.yaml

    /// `config/harness.yaml` with every commented-out key (`  # clientCA: certs/...`) in force.
    static func committedFileWithEveryKeyInForce() throws -> String {
        let text = try String(contentsOfFile: repositoryRoot + "/config/harness.yaml", encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let indent = line.prefix { $0 == " " }
            let rest = line.dropFirst(indent.count)
            guard rest.hasPrefix("# ") else { return String(line) }
            let entry = rest.dropFirst(2)
            let key = entry.prefix { $0.isLetter || $0.isNumber }
            let after = entry.dropFirst(key.count)
            guard !key.isEmpty, after == ":" || after.hasPrefix(": ") else { return String(line) }
            return String(indent + entry)
        }.joined(separator: "\n")
    }

    /// The key paths of a YAML document in the order they first appear (sections left out, as
    /// in `decoderKeys`).
    static func keyPaths(of node: Node, at path: [Step] = []) -> [String] {
        switch node {
        case .mapping(let mapping):
            mapping.flatMap { member -> [String] in
                let (key, value) = member
                let child = path + [.key(key.string ?? "")]
                if case .mapping = value { return keyPaths(of: value, at: child) }
                return [name(child)] + keyPaths(of: value, at: child)
            }
        case .sequence(let sequence):
            sequence.flatMap { keyPaths(of: $0, at: path + [.entry]) }
        default:
            []
        }
    }

    static func committedFileKeys() throws -> [String] {
        let node = try #require(try Yams.compose(yaml: committedFileWithEveryKeyInForce()))
        var seen = Set<String>()
        return keyPaths(of: node).filter { seen.insert($0).inserted }
    }

    @Test func theCommittedFileListsEveryKey() throws {
        let listed = Set(try Self.committedFileKeys())
        let missing = Self.decoderKeys.filter { !listed.contains($0) }
        #expect(missing.isEmpty, "config/harness.yaml lists neither \"key: default\" nor \"# key: example\" for \(missing)")
        // The commented-out keys are valid as written, and no comment reads as a key that is not one.
        _ = try HarnessConfiguration.parse(try Self.committedFileWithEveryKeyInForce(),
                                           source: "config/harness.yaml, its commented keys in force")
    }

    // MARK: docs/configuration.md

    /// The keys of the table of `docs/configuration.md`: the first cell of each row, one key in backticks.
    static func documentedKeys() throws -> [String] {
        let text = try String(contentsOfFile: repositoryRoot + "/docs/configuration.md", encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("| `") else { return nil }
            let key = line.dropFirst(3).prefix { $0 != "`" }
            return line.dropFirst(3 + key.count).hasPrefix("` |") ? String(key) : nil
        }
    }

    @Test func theDocumentationListsEveryKeyOnceAndNoOther() throws {
        let documented = try Self.documentedKeys()
        let missing = Self.decoderKeys.filter { !documented.contains($0) }
        #expect(missing.isEmpty, "docs/configuration.md has no row for \(missing)")
        let twice = Set(documented.filter { key in documented.filter { $0 == key }.count > 1 })
        #expect(twice.isEmpty, "docs/configuration.md has more than one row for \(twice.sorted())")
        let unknown = documented.filter { !Self.decoderKeys.contains($0) }
        #expect(unknown.isEmpty, "docs/configuration.md documents keys the configuration does not accept: \(unknown)")
    }

    @Test func theFileAndTheDocumentationListTheKeysInOneOrder() throws {
        let file = try Self.committedFileKeys()
        let documentation = try Self.documentedKeys()
        if let index = (0..<min(file.count, documentation.count)).first(where: { file[$0] != documentation[$0] }) {
            Issue.record("key \(index + 1): config/harness.yaml has \(file[index]), docs/configuration.md \(documentation[index])")
        }
        #expect(file.count == documentation.count, "config/harness.yaml lists \(file.count) keys, docs/configuration.md \(documentation.count)")
    }

    // MARK: Links

    /// Pages other work adds; a link to one is checked once it exists.
    static let pagesToCome: Set<String> = ["docs/container.md", "docs/ci.md", "docs/devices.md"]

    static func documentationFiles() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot + "/docs")
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return ["README.md", "ARCHITECTURE.md", "CONTRIBUTING.md"] + docs
    }

    static func read(_ file: String) throws -> String {
        try String(contentsOfFile: repositoryRoot + "/" + file, encoding: .utf8)
    }

    /// The lines of a Markdown text outside fenced code blocks.
    static func proseLines(_ text: String) -> [Substring] {
        var inFence = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                return false
            }
            return !inFence
        }
    }

    /// The targets of the inline links of a Markdown text (`[text](target)`), code left out.
    static func linkTargets(_ text: String) -> [String] {
        proseLines(text).flatMap { line -> [String] in
            // Drop code spans: the even pieces between backticks are prose.
            let prose = line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 0 }.map(\.element).joined()
            return prose.components(separatedBy: "](").dropFirst().map { rest in
                String(rest.prefix { $0 != ")" && $0 != " " })
            }
        }
    }

    /// GitHub's anchor for a heading: lowercase, spaces to '-', punctuation other than '-' and
    /// '_' dropped, and a repeated anchor numbered (`-1`, `-2`).
    static func anchors(_ text: String) -> Set<String> {
        var anchors = Set<String>()
        var seen: [String: Int] = [:]
        for line in proseLines(text) {
            let hashes = line.prefix { $0 == "#" }
            guard (1...6).contains(hashes.count), line.dropFirst(hashes.count).hasPrefix(" ") else { continue }
            var slug = ""
            for character in line.dropFirst(hashes.count).trimmingCharacters(in: .whitespaces).lowercased() {
                if character == " " { slug.append("-") }
                else if character.isLetter || character.isNumber || character == "-" || character == "_" { slug.append(character) }
            }
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    /// `base/../x` and `./x` resolved, relative to the repository.
    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == "..", !parts.isEmpty { parts.removeLast() } else { parts.append(part) }
        }
        return parts.joined(separator: "/")
    }

    @Test func everyRelativeLinkLeadsToAFileAndAHeadingThatExist() throws {
        var broken: [String] = []
        for file in try Self.documentationFiles() {
            for link in Self.linkTargets(try Self.read(file)) where !link.contains("://") && !link.hasPrefix("mailto:") {
                let pieces = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let path = String(pieces[0])
                let anchor = pieces.count > 1 ? String(pieces[1]) : nil
                let directory = (file as NSString).deletingLastPathComponent
                let target = path.isEmpty ? file : Self.normalized(directory.isEmpty ? path : directory + "/" + path)
                let exists = FileManager.default.fileExists(atPath: repositoryRoot + "/" + target)
                if !exists && Self.pagesToCome.contains(target) { continue }
                guard exists else {
                    broken.append("\(file): (\(link)): no file \(target)")
                    continue
                }
                if let anchor, target.hasSuffix(".md"), !Self.anchors(try Self.read(target)).contains(anchor) {
                    broken.append("\(file): (\(link)): no heading with anchor #\(anchor) in \(target)")
                }
            }
        }
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }

    @Test func theFrontPageLinksEveryDocument() throws {
        let linked = Set(Self.linkTargets(try Self.read("README.md")).map { String($0.prefix { $0 != "#" }) })
        let documents = try Self.documentationFiles().filter { $0.hasPrefix("docs/") } + Self.pagesToCome.sorted()
        let unlinked = documents.filter { !linked.contains($0) }
        #expect(unlinked.isEmpty, "README.md links to no \(unlinked)")
    }
}
