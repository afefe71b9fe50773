public import Configuration
import Foundation
public import Logging
import Synchronization

/// The harness's log lines on standard error, one per event: text, laid out as swift-log's
/// stream handler does (`time level label: key=value [source] message`) with every control
/// character of the message, keys and values escaped, so that a value from outside (a JWE
/// header, a JSON member name) cannot start a line of its own; or one JSON object per line
/// (`{"ts","level","label","msg",...metadata}`).
public struct HarnessLogHandler: LogHandler {

    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let format: LogFormat
    /// One writer at a time, so lines from different loops never interleave.
    private static let lock = Mutex(())

    public init(label: String, format: LogFormat) {
        self.label = label
        self.format = format
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        guard let line = render(event, at: Date()) else { return }
        Self.lock.withLock { _ in FileHandle.standardError.write(line) }
    }

    /// The line for `event`, ending in a newline.
    func render(_ event: LogEvent, at date: Date) -> Data? {
        let merged = metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 })
        switch format {
        case .json:
            var object: [String: Any] = ["ts": date.timeIntervalSince1970, "level": event.level.rawValue, "label": label, "msg": "\(event.message)"]
            for (key, value) in merged { object[key] = "\(value)" }
            guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return nil }
            line.append(0x0A)
            return line
        case .text:
            let pairs = merged.sorted { $0.key < $1.key }.map { "\(Self.escaped($0.key))=\(Self.escaped("\($0.value)"))" }
            let fields = pairs.isEmpty ? "" : " " + pairs.joined(separator: " ")
            return Data("\(Self.timestamp(date)) \(event.level) \(label):\(fields) [\(Self.escaped(event.source))] \(Self.escaped("\(event.message)"))\n".utf8)
        }
    }

    /// `text` with control characters (C0, DEL, C1, and the Unicode line and paragraph
    /// separators) written as `\n`, `\r`, `\t` or `\u{XX}`, and backslashes doubled.
    public static func escaped(_ text: String) -> String {
        func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029 || scalar == "\\"
        }
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\\": result += "\\\\"
            case _ where needsEscape(scalar): result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func timestamp(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [Int8](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Sets up swift-log once for the process: text (the default) or JSON lines, at `level`.
public func bootstrapLogging(format: LogFormat, level: Logger.Level) {
    LoggingSystem.bootstrap { label in
        var handler = HarnessLogHandler(label: label, format: format)
        handler.logLevel = level
        return handler
    }
}
