import Foundation
import Logging

/// Names of log levels accepted in the configuration and on the command line.
public enum LogLevelName {
    public static let all = Logger.Level.allCases.map(\.rawValue)
    public static func parse(_ name: String) -> Logger.Level? { Logger.Level(rawValue: name.lowercased()) }
}

/// One JSON object per line on standard error: `{"ts","level","label","msg",...metadata}`.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private static let lock = NSLock()

    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: Any] = [
            "ts": Date().timeIntervalSince1970, "level": event.level.rawValue, "label": label, "msg": "\(event.message)",
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { object[key] = "\(value)" }
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        Self.lock.withLock { FileHandle.standardError.write(line) }
    }
}

/// Sets up swift-log once for the process: text (the default) or JSON lines, at `level`.
public func bootstrapLogging(format: String, level: Logger.Level) {
    LoggingSystem.bootstrap { label in
        var handler: LogHandler = format == "json" ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
}
