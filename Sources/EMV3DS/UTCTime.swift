public import Foundation

/// UTC timestamps from the C library, written digit by digit: Foundation's Calendar and
/// ISO8601DateFormatter go through ICU, and `String(format:)` through CFString and C varargs,
/// each costing more than an ECDH per transaction record.
public enum UTCTime {
    private static func fields(_ date: Date) -> (tm: tm, milliseconds: Int) {
        // Whole milliseconds, with a microsecond's allowance: a time read back from its text (.123 is not exact in binary,
        // and may be a hair below) writes the same text.
        let milliseconds = (date.timeIntervalSince1970 * 1000 + 0.001).rounded(.down)
        let seconds = (milliseconds / 1000).rounded(.down)
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return (parts, Int(milliseconds - seconds * 1000))
    }

    /// "YYYYMMDDHHMMSS", the AReq's `purchaseDate`.
    public static func purchaseDate(_ date: Date) -> String {
        let (t, _) = fields(date)
        var text = [UInt8]()
        text.reserveCapacity(14)
        for (value, width) in [(Int(t.tm_year) + 1900, 4), (Int(t.tm_mon) + 1, 2), (Int(t.tm_mday), 2),
                               (Int(t.tm_hour), 2), (Int(t.tm_min), 2), (Int(t.tm_sec), 2)] {
            appendDigits(value, width: width, to: &text)
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The date a "YYYYMMDDHHMMSS" in UTC names; nil when it is not one.
    public static func date(purchaseDate text: String) -> Date? {
        let digits = Array(text.utf8)
        guard digits.count == 14, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        func number(_ range: Range<Int>) -> Int32 { digits[range].reduce(0) { $0 * 10 + Int32($1 - UInt8(ascii: "0")) } }
        var parts = tm()
        parts.tm_year = number(0..<4) - 1900
        parts.tm_mon = number(4..<6) - 1
        parts.tm_mday = number(6..<8)
        parts.tm_hour = number(8..<10)
        parts.tm_min = number(10..<12)
        parts.tm_sec = number(12..<14)
        let seconds = timegm(&parts)
        return seconds == -1 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The date an ``iso8601(_:)`` text names, "2026-11-21T12:00:00.123Z"; nil when it is not one.
    public static func date(iso8601 text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 24, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."), bytes[23] == UInt8(ascii: "Z"),
              let milliseconds = Int(String(decoding: bytes[20..<23], as: UTF8.self)),
              let seconds = date(purchaseDate: String(decoding: [0..<4, 5..<7, 8..<10, 11..<13, 14..<16, 17..<19].flatMap { bytes[$0] }, as: UTF8.self))
        else { return nil }
        return seconds.addingTimeInterval(Double(milliseconds) / 1000)
    }

    /// ISO 8601 with milliseconds, "2026-11-21T12:00:00.123Z".
    public static func iso8601(_ date: Date) -> String {
        let (t, milliseconds) = fields(date)
        var text = [UInt8]()
        text.reserveCapacity(24)
        appendDigits(Int(t.tm_year) + 1900, width: 4, to: &text)
        for (separator, value) in [(UInt8(ascii: "-"), Int(t.tm_mon) + 1), (UInt8(ascii: "-"), Int(t.tm_mday)),
                                   (UInt8(ascii: "T"), Int(t.tm_hour)), (UInt8(ascii: ":"), Int(t.tm_min)),
                                   (UInt8(ascii: ":"), Int(t.tm_sec))] {
            text.append(separator)
            appendDigits(value, width: 2, to: &text)
        }
        text.append(UInt8(ascii: "."))
        appendDigits(milliseconds, width: 3, to: &text)
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    /// `value` in decimal, zero-padded on the left to `width` digits (values here are never negative).
    private static func appendDigits(_ value: Int, width: Int, to text: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = max(value, 0)
        while divisor > 0 {
            text.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }
}
