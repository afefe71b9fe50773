public import Foundation

/// Which configuration file a command reads, and the folder its relative paths are taken from.
///
/// A `--config` given on the command line is read as given, relative to the working
/// directory. Without one, `config/harness.yaml` is looked for in the working directory, then
/// in the folders above the executable (a binary under `.build/release` finds its checkout's),
/// so that `simulate` and `pki` work from any directory. Without a file: the defaults.
public struct ConfigurationLocation: Sendable {
    public static let defaultPath = "config/harness.yaml"

    public let configuration: HarnessConfiguration
    /// The file read, if any.
    public let path: String?
    /// Relative paths of the configuration (PKI, scenarios, TLS files) are resolved against it.
    public let baseDirectory: String

    public init(configuration: HarnessConfiguration, path: String?, baseDirectory: String) {
        self.configuration = configuration
        self.path = path
        self.baseDirectory = baseDirectory
    }

    /// Finds and reads the configuration; `explicit` is the `--config` option, if given.
    public static func find(explicit: String?, workingDirectory: String = FileManager.default.currentDirectoryPath,
                            executable: String = CommandLine.arguments.first ?? "") throws(ConfigurationError) -> ConfigurationLocation {
        if let explicit {
            return ConfigurationLocation(configuration: try HarnessConfiguration.load(path: explicit), path: explicit, baseDirectory: workingDirectory)
        }
        for base in [workingDirectory] + ancestors(of: executable, relativeTo: workingDirectory) {
            let candidate = base + "/" + defaultPath
            if FileManager.default.fileExists(atPath: candidate) {
                return ConfigurationLocation(configuration: try HarnessConfiguration.load(path: candidate), path: candidate, baseDirectory: base)
            }
        }
        return ConfigurationLocation(configuration: HarnessConfiguration(), path: nil, baseDirectory: workingDirectory)
    }

    /// `path` as the configuration means it: absolute as it is, else under ``baseDirectory``.
    public func resolve(_ path: String) -> String {
        path.hasPrefix("/") ? path : baseDirectory + "/" + path
    }

    /// The folders holding the executable, innermost first (at most six: `.build/<arch>/release` and up).
    private static func ancestors(of executable: String, relativeTo workingDirectory: String) -> [String] {
        guard executable.contains("/") else { return [] }
        var url = URL(fileURLWithPath: executable, relativeTo: URL(fileURLWithPath: workingDirectory, isDirectory: true))
            .standardizedFileURL.resolvingSymlinksInPath().deletingLastPathComponent()
        var folders: [String] = []
        for _ in 0..<6 where url.path != "/" {
            folders.append(url.path)
            url = url.deletingLastPathComponent()
        }
        return folders
    }
}
