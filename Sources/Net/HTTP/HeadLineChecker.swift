/// Checks the line structure of request heads that http_parser lets through in its lenient
/// build: RFC 9112 ends lines with CRLF (a bare LF is refused), forbids whitespace between a
/// field name and its colon (5.1: "MUST reject"), and obsoletes line folding (5.2: reject or
/// replace; this server rejects). One instance per connection, fed the head's bytes in
/// order; it finds the end of a head itself (the empty line) and waits for
/// ``startHead()`` before checking the next.
struct HeadLineChecker {
    private(set) var inHead = true
    private var line = 0
    private var atLineStart = true
    private var beforeColon = true
    private var afterCR = false

    mutating func startHead() {
        self = HeadLineChecker()
    }

    /// Checks `bytes` up to the end of the head; returns how many belong to the head (all of
    /// them while it goes on) or the reason the head is malformed.
    mutating func scan(_ bytes: UnsafeRawBufferPointer) -> Result<Int, ParseFailure> {
        for (offset, byte) in bytes.enumerated() {
            if afterCR {
                guard byte == lf else { return .failure(.malformed("CR not followed by LF")) }
                afterCR = false
                if atLineStart {
                    // Empty lines before the request line are skipped (RFC 9112 2.2); after it, one ends the head.
                    if line > 0 {
                        inHead = false
                        return .success(offset + 1)
                    }
                } else {
                    line += 1
                    atLineStart = true
                    beforeColon = true
                }
                continue
            }
            if byte == cr {
                afterCR = true
                continue
            }
            if byte == lf { return .failure(.malformed("bare LF as a line ending (use CRLF)")) }
            if line > 0 && (byte == space || byte == tab) {
                if atLineStart { return .failure(.malformed("obsolete line folding in a header field")) }
                if beforeColon { return .failure(.malformed("whitespace between a header field name and its colon")) }
            }
            if byte == colon { beforeColon = false }
            atLineStart = false
        }
        return .success(bytes.count)
    }
}

private let cr = UInt8(ascii: "\r")
private let lf = UInt8(ascii: "\n")
private let space = UInt8(ascii: " ")
private let tab = UInt8(ascii: "\t")
private let colon = UInt8(ascii: ":")
