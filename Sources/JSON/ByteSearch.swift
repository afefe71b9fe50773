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

    /// Replaces each `pattern` in `bytes` at or after `start` that lies inside a JSON string with `replacement`, of the
    /// same length: a card number with its masked form, in the JSON text of one or more values that begins at `start`.
    /// An occurrence outside a string (a number's digits) is left, as masking it would make the text no longer JSON;
    /// nothing is replaced when the lengths differ or `replacement` holds a quote or a backslash.
    public static func replaceAllInStrings(_ pattern: [UInt8], with replacement: [UInt8], in bytes: inout [UInt8], from start: Int = 0) {
        guard !pattern.isEmpty, pattern.count == replacement.count, bytes.count - start >= pattern.count,
              !replacement.contains(UInt8(ascii: "\"")), !replacement.contains(UInt8(ascii: "\\")) else { return }
        bytes.withUnsafeMutableBytes { buffer in
            // Whether the text is inside a string, read from `start` up to each occurrence: a quote not escaped toggles it.
            var inString = false, escaped = false, scanned = start
            var offset = start
            while let found = firstIndex(of: pattern, in: UnsafeRawBufferPointer(buffer), from: offset) {
                for byte in buffer[scanned..<found] {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = inString
                    } else if byte == UInt8(ascii: "\"") {
                        inString.toggle()
                    }
                }
                scanned = found
                if inString, !escaped {
                    for (index, byte) in replacement.enumerated() { buffer[found + index] = byte }
                }
                offset = found + pattern.count
            }
        }
    }

    /// True when `bytes` hold `text`.
    public static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        bytes.withUnsafeBytes { firstIndex(of: Array(text.utf8), in: $0) != nil }
    }
}
