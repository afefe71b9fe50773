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
