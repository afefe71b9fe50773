#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finding a run of bytes in a message without decoding it: `memchr` to each candidate first byte, `memcmp`
/// for the rest (Glibc's `memmem` is not imported; Foundation's generic `firstRange(of:)` cost a cluster instance
/// 300 µs of CPU per AReq, `bench/run cluster`).
public enum ByteSearch {
    /// The offset of the first `pattern` in `buffer` at or after `start`, or nil.
    public static func firstIndex(of pattern: [UInt8], in buffer: UnsafeRawBufferPointer, from start: Int = 0) -> Int? {
        guard let first = pattern.first, let base = buffer.baseAddress, start >= 0, buffer.count - start >= pattern.count else { return nil }
        let last = buffer.count - pattern.count
        var offset = start
        while offset <= last, let found = memchr(base + offset, Int32(first), last - offset + 1) {
            offset = base.distance(to: UnsafeRawPointer(found))
            if memcmp(found, pattern, pattern.count) == 0 { return offset }
            offset += 1
        }
        return nil
    }

    /// Replaces each `pattern` in `bytes` at or after `start` with `replacement`, of the same length (a card number
    /// with its masked form); nothing when the lengths differ.
    public static func replaceAll(_ pattern: [UInt8], with replacement: [UInt8], in bytes: inout [UInt8], from start: Int = 0) {
        guard !pattern.isEmpty, pattern.count == replacement.count, bytes.count - start >= pattern.count else { return }
        bytes.withUnsafeMutableBytes { buffer in
            var offset = start
            while let found = firstIndex(of: pattern, in: UnsafeRawBufferPointer(buffer), from: offset) {
                for (index, byte) in replacement.enumerated() { buffer[found + index] = byte }
                offset = found + pattern.count
            }
        }
    }

    /// True when `bytes` hold `text`.
    public static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        bytes.withUnsafeBytes { firstIndex(of: Array(text.utf8), in: $0) != nil }
    }
}
