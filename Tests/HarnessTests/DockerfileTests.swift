import Foundation
import Testing
import TestSupport

/// docker/Dockerfile's build stage builds from the files it copies, not from the repository: a stage
/// that copies Package.swift and Sources only, while the manifest declares targets under Tests/,
/// builds no image. Here exactly what the stage copies, less what
/// .dockerignore keeps out of the build context, goes into an empty folder, and SwiftPM loads the
/// package there: it checks the folder of every declared target, as `swift build` does first in
/// the image. docker/verify goes further (a release build of that folder, the runtime stage).
@Suite("docker/Dockerfile")
struct DockerfileTests {
    static let swift: String? = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        .map { "\($0)/swift" }.first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: swift != nil, "no swift on PATH to load the package with"))
    func theBuildStageCopiesEveryFolderThePackageDeclares() throws {
        let dockerfile = try Dockerfile(contentsOf: repositoryRoot + "/docker/Dockerfile")
        let stage = try #require(dockerfile.buildStage, "docker/Dockerfile: no stage that the last one copies from (COPY --from=NAME)")
        let ignore = DockerIgnore(text: (try? String(contentsOfFile: repositoryRoot + "/.dockerignore", encoding: .utf8)) ?? "")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dockerfile-build-stage-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for copy in stage.copies {
            try copy.apply(from: repositoryRoot, into: folder, workdir: stage.workdir, ignoring: ignore)
        }
        // Manifest only: no dependency is fetched, nothing is built. About a second.
        let run = try ChildProcess.run(try #require(Self.swift), ["package", "--package-path", folder, "describe", "--type", "json"],
                                       directory: folder, timeout: 120)
        let copied = stage.copies.flatMap(\.sources).joined(separator: ", ")
        #expect(run.status == 0, "docker/Dockerfile's build stage copies \(copied); SwiftPM cannot load Package.swift from that: \(run.output.suffix(2000))")
        #expect(run.output.contains("\"targets\""), "\(run.output.suffix(2000))")
    }

    @Test func everyFileTheImageCopiesIsInTheBuildContext() throws {
        let dockerfile = try Dockerfile(contentsOf: repositoryRoot + "/docker/Dockerfile")
        let ignore = DockerIgnore(text: (try? String(contentsOfFile: repositoryRoot + "/.dockerignore", encoding: .utf8)) ?? "")
        let sources = dockerfile.stages.flatMap(\.copies).filter { $0.fromStage == nil }.flatMap(\.sources)
        #expect(sources.contains("Package.swift") && sources.contains("certs"), "\(sources)")
        for source in sources {
            #expect(FileManager.default.fileExists(atPath: repositoryRoot + "/" + source), "COPY \(source): not in the repository")
            #expect(!ignore.excludes(source), "COPY \(source): .dockerignore keeps it out of the build context")
        }
        // What .dockerignore is for: build output, version control and a local store stay out of the context.
        for path in [".build/release/threeds-harness", ".git/HEAD", ".build-docker/base/x.tar", "data/harness.sqlite"] {
            #expect(ignore.excludes(path), "\(path) is sent with the build context")
        }
    }

    @Test func instructionsAreReadAsDockerReadsThem() throws {
        let dockerfile = try Dockerfile(text: """
            # comment
            FROM swift:6 AS build
            WORKDIR /src
            COPY Package.swift ./
            COPY --chown=1:1 Sources \\
                 # a comment inside a continued instruction
                 Sources
            RUN swift build \\
             && strip x

            FROM debian:bookworm-slim
            COPY --from=build /src/.build/release/x /usr/local/bin/
            COPY a b c/
            """)
        #expect(dockerfile.stages.map(\.name) == ["build", nil])
        let stage = try #require(dockerfile.buildStage)
        #expect(stage.workdir == "/src")
        #expect(stage.copies.map(\.sources) == [["Package.swift"], ["Sources"]])
        #expect(stage.copies.map(\.destination) == ["./", "Sources"])
        #expect(stage.instructions.last?.arguments == "swift build  && strip x")
        #expect(dockerfile.stages[1].copies.map(\.fromStage) == ["build", nil])
        #expect(dockerfile.stages[1].copies[1].sources == ["a", "b"])
    }

    @Test func dockerIgnorePatternsMatchAsDockerMatchesThem() {
        let ignore = DockerIgnore(text: "# comment\n.git\n**/.build\n.build-*\n*.o\nFuzz\ndocs/*.md\n!docs/keep.md\n")
        #expect(ignore.excludes(".git/config"))
        #expect(ignore.excludes(".build/debug/x") && ignore.excludes("Sources/A/.build/x"))
        #expect(ignore.excludes(".build-docker/base/x.tar"))
        #expect(ignore.excludes("main.o") && !ignore.excludes("Sources/main.o"))
        #expect(ignore.excludes("Fuzz/Corpus/json/1") && !ignore.excludes("Sources/Fuzz/main.swift"))
        #expect(ignore.excludes("docs/a.md") && !ignore.excludes("docs/keep.md"))
        #expect(!ignore.excludes("Sources") && !ignore.excludes("Tests/TestSupport/ChildProcess.swift"))
    }
}

/// The instructions of a Dockerfile that these tests need: stages, WORKDIR, COPY (shell form).
struct Dockerfile {
    struct Instruction {
        let keyword: String
        let arguments: String
    }

    struct Copy {
        let sources: [String]
        let destination: String
        let fromStage: String?

        init(_ arguments: String) throws {
            let words = arguments.split(whereSeparator: \.isWhitespace).map(String.init)
            guard words.first?.hasPrefix("[") != true else { throw DockerfileError("COPY \(arguments): only the shell form is read") }
            fromStage = words.first { $0.hasPrefix("--from=") }.map { String($0.dropFirst("--from=".count)) }
            let paths = words.filter { !$0.hasPrefix("--") }
            guard paths.count >= 2 else { throw DockerfileError("COPY \(arguments): a source and a destination") }
            sources = Array(paths.dropLast())
            destination = paths[paths.count - 1]
        }

        /// Copies the sources as the builder would into `folder`, which stands for `workdir`.
        func apply(from context: String, into folder: String, workdir: String, ignoring ignore: DockerIgnore) throws {
            let absolute = destination.hasPrefix("/") ? destination : workdir + "/" + destination
            let base = workdir.hasSuffix("/") ? workdir : workdir + "/"
            guard (absolute + "/").hasPrefix(base) else { throw DockerfileError("COPY to \(destination): outside WORKDIR \(workdir)") }
            let target = folder + "/" + absolute.dropFirst(base.count)
            let intoFolder = destination.hasSuffix("/") || destination == "." || sources.count > 1
            let files = FileManager.default
            for source in sources {
                var isDirectory: ObjCBool = false
                guard files.fileExists(atPath: context + "/" + source, isDirectory: &isDirectory) else {
                    throw DockerfileError("COPY \(source): not in the build context")
                }
                guard !ignore.excludes(source) else { continue }
                if isDirectory.boolValue {
                    // The folder's contents, less what .dockerignore keeps out.
                    let enumerator = files.enumerator(atPath: context + "/" + source)
                    while let relative = enumerator?.nextObject() as? String {
                        let path = context + "/" + source + "/" + relative
                        var inner: ObjCBool = false
                        guard files.fileExists(atPath: path, isDirectory: &inner), !inner.boolValue,
                              !ignore.excludes(source + "/" + relative) else { continue }
                        try place(path, at: target + "/" + relative)
                    }
                } else {
                    try place(context + "/" + source, at: intoFolder ? target + "/" + (source as NSString).lastPathComponent : target)
                }
            }
        }

        private func place(_ path: String, at target: String) throws {
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: path, toPath: target)
        }
    }

    struct Stage {
        let image: String
        let name: String?
        var instructions: [Instruction] = []
        var copies: [Copy] = []
        var workdir: String { instructions.last { $0.keyword == "WORKDIR" }?.arguments ?? "/" }
    }

    let stages: [Stage]

    init(contentsOf path: String) throws {
        try self.init(text: try String(contentsOfFile: path, encoding: .utf8))
    }

    /// Comment lines are dropped (inside a continued instruction too), a trailing backslash joins lines.
    init(text: String) throws {
        var instructions: [Instruction] = []
        var pending = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#") || trimmed.isEmpty { continue }
            if trimmed.hasSuffix("\\") {
                pending += String(line.trimmingCharacters(in: .whitespaces).dropLast()) + " "
                continue
            }
            let whole = (pending + trimmed).trimmingCharacters(in: .whitespaces)
            pending = ""
            let keyword = whole.prefix { !$0.isWhitespace }
            instructions.append(Instruction(keyword: keyword.uppercased(),
                                            arguments: whole.dropFirst(keyword.count).trimmingCharacters(in: .whitespaces)))
        }
        var stages: [Stage] = []
        for instruction in instructions {
            if instruction.keyword == "FROM" {
                let words = instruction.arguments.split(whereSeparator: \.isWhitespace).map(String.init)
                let name = words.count >= 3 && words[words.count - 2].uppercased() == "AS" ? words.last : nil
                stages.append(Stage(image: words.first { !$0.hasPrefix("--") } ?? "", name: name))
            } else if !stages.isEmpty {
                stages[stages.count - 1].instructions.append(instruction)
                if instruction.keyword == "COPY" { stages[stages.count - 1].copies.append(try Copy(instruction.arguments)) }
            } else if instruction.keyword != "ARG" {
                throw DockerfileError("\(instruction.keyword) before the first FROM")
            }
        }
        self.stages = stages
    }

    /// The stage the last stage copies its build output from.
    var buildStage: Stage? {
        guard let name = stages.last?.copies.compactMap(\.fromStage).first else { return nil }
        return stages.first { $0.name == name }
    }
}

struct DockerfileError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// .dockerignore as Docker reads it: one pattern a line, `#` comments, `*` and `?` within one path
/// segment, `**` across segments, `!` to take an earlier exclusion back (the last match wins); a
/// path is excluded when it or a folder above it matches.
struct DockerIgnore {
    private let rules: [(pattern: Regex<AnyRegexOutput>, excludes: Bool)]

    init(text: String) {
        rules = text.split(separator: "\n").compactMap { raw -> (Regex<AnyRegexOutput>, Bool)? in
            var line = raw.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("#") else { return nil }
            let excludes = !line.hasPrefix("!")
            if !excludes { line.removeFirst() }
            while line.hasPrefix("/") { line.removeFirst() }
            while line.hasSuffix("/") { line.removeLast() }
            var expression = "^"
            var characters = Substring(line)
            while let character = characters.first {
                if characters.hasPrefix("**/") {
                    expression += "(.*/)?"
                    characters = characters.dropFirst(3)
                    continue
                } else if characters.hasPrefix("**") {
                    expression += ".*"
                    characters = characters.dropFirst(2)
                    continue
                }
                switch character {
                case "*": expression += "[^/]*"
                case "?": expression += "[^/]"
                case ".", "+", "(", ")", "|", "^", "$", "{", "}", "\\": expression += "\\" + String(character)
                default: expression += String(character)
                }
                characters = characters.dropFirst()
            }
            guard let regex = try? Regex(expression + "$") else { return nil }
            return (regex, excludes)
        }
    }

    func excludes(_ path: String) -> Bool {
        let segments = path.split(separator: "/")
        var excluded = false
        for (pattern, excludes) in rules {
            // The path or any folder above it.
            let matches = (1...max(segments.count, 1)).contains { count in
                (try? pattern.wholeMatch(in: segments.prefix(count).joined(separator: "/"))) != nil
            }
            if matches { excluded = excludes }
        }
        return excluded
    }
}
