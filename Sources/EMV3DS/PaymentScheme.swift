/// A range of card numbers by leading digits: "4" is every PAN starting with 4, "2221-2720"
/// every PAN whose first four digits are in 2221...2720.
public struct CardRange: Sendable, Equatable, CustomStringConvertible {
    public let low: String
    public let high: String

    /// Parses "4", "51-55" or "2221-2720"; both bounds have the same number of digits.
    public init?(_ text: String) {
        let bounds = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(bounds.count), let low = bounds.first, let high = bounds.last,
              low.count == high.count, (1...19).contains(low.count),
              low.allSatisfy(\.isASCIIDigit), high.allSatisfy(\.isASCIIDigit), low <= high else { return nil }
        self.low = low
        self.high = high
    }

    public var description: String { low == high ? low : "\(low)-\(high)" }

    /// True when the PAN's leading digits fall in the range.
    public func contains(pan: String) -> Bool {
        // Bounds are ASCII digits of one length: byte order is their order (no String comparison, no grapheme walk).
        let prefix = pan.utf8.prefix(low.utf8.count)
        return prefix.count == low.utf8.count && !prefix.lexicographicallyPrecedes(low.utf8) && !high.utf8.lexicographicallyPrecedes(prefix)
    }

    /// The range as PRes `startRange`/`endRange` for 16-digit PANs.
    public var panBounds: (start: String, end: String) {
        let pad = max(0, 16 - low.count)
        return (low + String(repeating: "0", count: pad), high + String(repeating: "9", count: pad))
    }
}

/// A card scheme as the DS and ACS see it: its Directory Server id, the card ranges routed
/// to it, and the ECI values it gives to authenticated and attempted transactions.
public struct PaymentScheme: Sendable, Equatable {
    public var rid: String
    public var name: String
    public var cardRanges: [CardRange]
    /// `eci` for transStatus Y and A (Visa-like "05"/"06", Mastercard-like "02"/"01").
    public var authenticatedECI: String
    public var attemptedECI: String
    /// The ACS that answers for this scheme's ranges; nil means the harness's own.
    public var acsURL: String?

    public init(rid: String, name: String, cardRanges: [CardRange], authenticatedECI: String = "05",
                attemptedECI: String = "06", acsURL: String? = nil) {
        self.rid = rid
        self.name = name
        self.cardRanges = cardRanges
        self.authenticatedECI = authenticatedECI
        self.attemptedECI = attemptedECI
        self.acsURL = acsURL
    }

    public func contains(pan: String) -> Bool { cardRanges.contains { $0.contains(pan: pan) } }

    /// The ECI for an outcome, nil for outcomes that carry none.
    public func eci(for status: TransStatus) -> String? {
        switch status {
        case .authenticated: authenticatedECI
        case .attempted: attemptedECI
        default: nil
        }
    }
}

extension Array where Element == PaymentScheme {
    /// The scheme whose ranges hold `pan`; the longest matching prefix wins, as in BIN tables.
    public func scheme(for pan: String) -> PaymentScheme? {
        // Read in place, by position: copying each scheme and range (strings and arrays) cost a
        // retain and release of each part, on ~70 ranges for every AReq, at the DS and the ACS.
        var best: (scheme: Int, length: Int)?
        withUnsafeBufferPointer { schemes in
            for index in schemes.indices {
                schemes[index].cardRanges.withUnsafeBufferPointer { ranges in
                    for range in ranges.indices where ranges[range].low.utf8.count > (best?.length ?? 0) && ranges[range].contains(pan: pan) {
                        best = (index, ranges[range].low.utf8.count)
                    }
                }
            }
        }
        return best.map { self[$0.scheme] }
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
