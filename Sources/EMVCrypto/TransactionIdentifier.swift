import Glibc
import JOSE
import JSON

/// Fresh transaction ids and authentication values from OpenSSL's generator: Foundation's
/// `UUID()` and `UInt8.random` each cost a system call, a cost the AReq path pays several times.
public enum TransactionIdentifier {
    /// A time-based (version 1) UUID in the canonical lower-case form EMV ids use ("as defined in
    /// RFC 4122; any of the specified versions"), with a random node and clock sequence: 61 random
    /// bits, so ids made in the same 100 ns on two loops still differ.
    ///
    /// Why version 1 and not random: its first field is the low 32 bits of the time (it wraps every
    /// 7 minutes), so ids made one after the other are neighbours in the store's unique index on
    /// (role, id), and a new record lands on the index page of the one before. Random ids put each
    /// new record on a random page of an index that outgrows the cache: a 4 KiB page written
    /// (twice, with the WAL) for a record of 300 bytes, more as the store grows
    /// (docs/benchmarks.md).
    public static func make() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)   // the vDSO's clock: no system call
        // 100 ns intervals since 1582-10-15, the RFC's epoch, which is 0x01B21DD213814000 before 1970's.
        return make(time: UInt64(now.tv_sec) &* 10_000_000 &+ UInt64(now.tv_nsec / 100) &+ 0x01B2_1DD2_1381_4000)
    }

    /// The version 1 UUID of `time` (100 ns intervals since 1582-10-15).
    static func make(time: UInt64) -> String {
        var bytes = randomPublicBytes(16)
        for index in 0..<4 { bytes[index] = UInt8(truncatingIfNeeded: time >> (24 - 8 * index)) }   // time_low
        bytes[4] = UInt8(truncatingIfNeeded: time >> 40)   // time_mid
        bytes[5] = UInt8(truncatingIfNeeded: time >> 32)
        bytes[6] = UInt8(truncatingIfNeeded: time >> 56) & 0x0F | 0x10   // time_hi and version 1
        bytes[7] = UInt8(truncatingIfNeeded: time >> 48)
        bytes[8] = bytes[8] & 0x3F | 0x80   // clock_seq_hi and the RFC 4122 variant
        bytes[10] |= 0x01   // a random node, not a MAC address, has the multicast bit set (RFC 4122 4.5)
        // Written digit by digit into the 36 bytes: hex text, five groups and a join cost ten allocations.
        return String(unsafeUninitializedCapacity: 36) { out in
            var position = 0
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    out[position] = UInt8(ascii: "-")
                    position += 1
                }
                out[position] = hexDigits[Int(byte >> 4)]
                out[position + 1] = hexDigits[Int(byte & 0x0F)]
                position += 2
            }
            return position
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A CAVV-like authentication value: 20 random bytes in standard base64, 28 characters.
    public static func authenticationValue() -> String {
        Base64URL.encode(randomPublicBytes(20)).standardBase64Padded
    }
}

private extension String {
    /// Base64url without padding turned into standard base64 with padding.
    var standardBase64Padded: String {
        let standard = String(decoding: utf8.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "+") : $0 == UInt8(ascii: "_") ? UInt8(ascii: "/") : $0 },
                              as: UTF8.self)
        return standard + String(repeating: "=", count: (4 - utf8.count % 4) % 4)
    }
}
