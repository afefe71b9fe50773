import JSON

/// Card number (PAN) checks.
public enum CardNumber {
    /// True when `pan` is all digits and passes the Luhn (mod 10) check.
    public static func isLuhnValid(_ pan: String) -> Bool {
        let digits = pan.utf8.map { Int($0) - 0x30 }
        guard !digits.isEmpty, digits.allSatisfy({ (0...9).contains($0) }) else { return false }
        return luhnSum(digits, doublingFirst: false) % 10 == 0
    }

    /// The digit that makes `digits` followed by it pass the Luhn check (`digits` are all 0-9).
    public static func luhnCheckDigit(for digits: String) -> Int {
        (10 - luhnSum(digits.utf8.map { Int($0) - 0x30 }, doublingFirst: true) % 10) % 10
    }

    /// The Luhn sum, from the last digit: every second one doubled, the last one when `doublingFirst`.
    private static func luhnSum(_ digits: [Int], doublingFirst: Bool) -> Int {
        digits.reversed().enumerated().reduce(0) { sum, element in
            let (offset, digit) = element
            guard (offset % 2 == 1) != doublingFirst else { return sum + digit }
            return sum + (digit * 2 > 9 ? digit * 2 - 9 : digit * 2)
        }
    }

    /// Whether `pan` lies between the bounds of a card range (two card numbers of one length), compared at that length.
    public static func isIn(_ pan: String, from start: String, to end: String) -> Bool {
        let card = aligned(pan, toLength: start.count)
        return start <= card && card <= end
    }

    /// The card number as a PRes range's bounds of `length` digits compare it: cut to them, or
    /// padded with zeros (bounds are PAN-length numbers, 16 digits for most schemes).
    public static func aligned(_ pan: String, toLength length: Int) -> String {
        pan.count >= length ? String(pan.prefix(length)) : pan + String(repeating: "0", count: length - pan.count)
    }

    /// `pan` with all but the first six and last four digits masked, for logs.
    public static func masked(_ pan: String) -> String {
        guard pan.count > 10 else { return String(repeating: "*", count: pan.count) }
        return String(pan.prefix(6)) + String(repeating: "*", count: pan.count - 10) + String(pan.suffix(4))
    }

    /// One card number masked in JSON text as a record writes it: wherever it lies inside a string, in what was appended
    /// from an offset on (the trail's messages, kept as the bytes that went or came).
    public struct Masking: Sendable {
        private let pan: [UInt8]
        private let masked: [UInt8]

        /// Nil without a card number (a record taken up from the store has its trail masked already).
        public init?(_ pan: String?) {
            guard let pan else { return nil }
            self.pan = Array(pan.utf8)
            masked = Array(CardNumber.masked(pan).utf8)
        }

        /// Masks the number in `out` from `start` on.
        public func apply(to out: inout [UInt8], from start: Int) {
            ByteSearch.replaceAllInStrings(pan, with: masked, in: &out, from: start)
        }
    }
}
