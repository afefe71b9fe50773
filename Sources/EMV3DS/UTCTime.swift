public import Foundation

/// UTC timestamps from the C library: Foundation's Calendar and ISO8601DateFormatter go
/// through ICU and cost more than an ECDH per transaction record.
public enum UTCTime {
    private static func fields(_ date: Date) -> (tm: tm, milliseconds: Int) {
        let seconds = date.timeIntervalSince1970
        var time = time_t(seconds.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        return (parts, Int((seconds - seconds.rounded(.down)) * 1000))
    }

    /// "YYYYMMDDHHMMSS", the AReq's `purchaseDate`.
    public static func purchaseDate(_ date: Date) -> String {
        let (t, _) = fields(date)
        return String(format: "%04d%02d%02d%02d%02d%02d", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)
    }

    /// ISO 8601 with milliseconds, "2026-11-21T12:00:00.123Z".
    public static func iso8601(_ date: Date) -> String {
        let (t, milliseconds) = fields(date)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, milliseconds)
    }
}
