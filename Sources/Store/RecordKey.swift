/// A record's id as the key of a ``TransactionStore``'s table. An id in the form the harness makes and the EMV messages
/// carry, a UUID in lowercase hex, is kept as its 128 bits: finding, inserting and removing a record then hash two words
/// and compare two, where a 36-byte `String` is hashed and compared through a pointer to its heap storage, and a removal
/// in Swift's table hashes again every key after it in its run (a profile of the EC AReq put 2.6 % of its CPU in the
/// stores' eviction alone, most of it reaching those keys' storage). Any other id is kept as it is.
enum RecordKey: Hashable, Sendable {
    case uuid(UInt64, UInt64)
    case other(String)

    init(_ id: String) {
        var id = id
        self = id.withUTF8 { Self.uuid($0) } ?? .other(id)
    }

    /// The id the key was made from.
    var id: String {
        switch self {
        case .other(let id): return id
        case .uuid(let high, let low):
            return String(unsafeUninitializedCapacity: 36) { output in
                var index = 0
                func hex(_ word: UInt64, digits: ClosedRange<Int>) {
                    for digit in digits {
                        if Self.isDash(at: index) { output[index] = UInt8(ascii: "-"); index += 1 }
                        output[index] = Self.hexDigits[Int(truncatingIfNeeded: word >> UInt64(60 - 4 * digit)) & 0xF]
                        index += 1
                    }
                }
                hex(high, digits: 0...15)
                hex(low, digits: 0...15)
                return 36
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Where `8-4-4-4-12` has its dashes.
    private static func isDash(at index: Int) -> Bool { index == 8 || index == 13 || index == 18 || index == 23 }

    /// The 128 bits of `8-4-4-4-12` lowercase hex digits; nil for anything else (uppercase too, so that the id read back
    /// is the one stored, byte for byte).
    private static func uuid(_ bytes: UnsafeBufferPointer<UInt8>) -> RecordKey? {
        guard bytes.count == 36 else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0, digits = 0
        for (index, byte) in bytes.enumerated() {
            if isDash(at: index) {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte &- UInt8(ascii: "a") &+ 10
            default: return nil
            }
            if digits < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
            digits += 1
        }
        return .uuid(high, low)
    }
}
