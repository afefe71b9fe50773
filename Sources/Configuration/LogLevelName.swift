public import Logging

/// Names of log levels accepted in the configuration and on the command line.
public enum LogLevelName {
    public static let all = Logger.Level.allCases.map(\.rawValue)
    public static func parse(_ name: String) -> Logger.Level? { Logger.Level(rawValue: name.lowercased()) }
}
