import Configuration
import Foundation
@testable import Harness
import Logging
import Testing

@Suite("Text log: one event, one line")
struct LoggingTests {
    /// A newline in a JWE `alg` or a JSON member name must not forge whole lines in the text log.
    @Test func controlCharactersFromOutsideCannotForgeALine() {
        let handler = HarnessLogHandler(label: "harness", format: .text)
        let forged = "RSA\n2026-11-22T00:00:00+0000 error harness: [DS] all keys leaked\r\u{1B}[31m\u{2028}"
        let event = LogEvent(level: .info, message: "AReq refused: alg \(forged)", metadata: ["reason\nkey": "\(forged)"],
                             source: "DirectoryServer", file: #fileID, function: #function, line: #line)
        let line = String(decoding: handler.render(event, at: Date(timeIntervalSince1970: 0)) ?? Data(), as: UTF8.self)
        #expect(line.hasPrefix("1970-01-01T00:00:00+0000 info harness: reason\\nkey=RSA\\n2026"))
        #expect(line.filter { $0 == "\n" }.count == 1 && line.hasSuffix("\n"))
        #expect(line.contains("\\r\\u{1B}[31m\\u{2028}") && !line.contains("\u{1B}"))
        #expect(HarnessLogHandler.escaped("plain text, no change") == "plain text, no change")
        #expect(HarnessLogHandler.escaped(#"a\b"#) == #"a\\b"#)
    }
}
