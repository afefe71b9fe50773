import Foundation
import Testing
import EMV3DS

@Suite("UTC timestamps")
struct UTCTimeTests {
    // 2026-03-04T05:06:07.062Z: every field below ten, so each must be zero-padded (.0625 is exact in binary).
    private let early = Date(timeIntervalSince1970: 1_772_600_767.0625)
    // 2026-12-31T23:59:59.999Z: every field at its widest.
    private let late = Date(timeIntervalSince1970: 1_798_761_599.9995)

    @Test func iso8601IsZeroPaddedWithMillisecondsInUTC() {
        #expect(UTCTime.iso8601(early) == "2026-03-04T05:06:07.062Z")
        #expect(UTCTime.iso8601(late) == "2026-12-31T23:59:59.999Z")
        #expect(UTCTime.iso8601(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
    }

    /// A record's timestamps read back (another instance of a cluster taking a transaction up): to the millisecond.
    @Test func iso8601ReadsBackWhatItWrote() {
        for date in [early, Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_798_761_599.999)] {
            let read = UTCTime.date(iso8601: UTCTime.iso8601(date))
            #expect(read.map { abs($0.timeIntervalSince(date)) < 0.001 } == true, "\(String(describing: read)) for \(date)")
        }
        // Read back and written again, every millisecond is the same text (a journal entry taken up by another instance is
        // written again from what it read).
        let rewritten = (0..<1000).map { String(format: "2026-11-26T04:31:31.%03dZ", $0) }.filter { text in
            UTCTime.date(iso8601: text).map(UTCTime.iso8601) != text
        }
        #expect(rewritten.isEmpty, "\(rewritten.prefix(5))")
        for text in ["", "2026-03-04T05:06:07Z", "2026-03-04 05:06:07.062Z", "2026-13-04T05:06:07.06xZ", "2026-03-04T05:06:07.062+"] {
            #expect(UTCTime.date(iso8601: text) == nil, "\(text)")
        }
    }

    @Test func purchaseDateIsFourteenDigits() {
        #expect(UTCTime.purchaseDate(early) == "20260304050607")
        #expect(UTCTime.purchaseDate(late) == "20261231235959")
    }

    @Test func bothAgreeWithFoundationsFormatter() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for seconds in stride(from: 0.0, to: 2_000_000_000, by: 86_400 * 37.3) {
            let date = Date(timeIntervalSince1970: seconds.rounded(.down))
            #expect(UTCTime.iso8601(date) == formatter.string(from: date))
        }
    }
}
