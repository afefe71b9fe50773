/// An ISO 4217 currency: the AReq's `purchaseCurrency` is its numeric code, SPC's `spcTransData.currency`
/// (2.3.1.1) and the token style's `amount.currency` its alphabetic one.
public struct Currency: Sendable, Equatable {
    public let numeric: String
    public let exponent: Int
    /// Nil for a numeric code the table does not know.
    public let alphabetic: String?

    /// The codes a client is likely to send.
    public static let known: [String: (numeric: String, exponent: Int)] = [
        "EUR": ("978", 2), "USD": ("840", 2), "GBP": ("826", 2), "CHF": ("756", 2), "SEK": ("752", 2), "NOK": ("578", 2),
        "DKK": ("208", 2), "PLN": ("985", 2), "CZK": ("203", 2), "JPY": ("392", 0), "AUD": ("036", 2), "CAD": ("124", 2),
        "BRL": ("986", 2), "CNY": ("156", 2), "INR": ("356", 2), "SGD": ("702", 2), "HKD": ("344", 2), "KRW": ("410", 0),
    ]

    /// By alphabetic or numeric code; another numeric code is taken as it is, with exponent 2.
    public init?(_ code: String) {
        if let (alphabetic, known) = Self.known.first(where: { $0.key == code.uppercased() || $0.value.numeric == code }) {
            (numeric, exponent, self.alphabetic) = (known.numeric, known.exponent, alphabetic)
        } else if code.count == 3, code.allSatisfy({ ("0"..."9").contains($0) }) {
            (numeric, exponent, alphabetic) = (code, 2, nil)
        } else {
            return nil
        }
    }

    /// Minor units written as digits (the AReq's `purchaseAmount`, up to 48 of them) as a decimal amount: "1234" with
    /// exponent 2 (the AReq's `purchaseExponent`) is "12.34"; leading zeros go. Nil for anything but digits.
    public static func decimal(digits: String, exponent: Int) -> String? {
        guard !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }) else { return nil }
        let significant = String(digits.drop { $0 == "0" })
        let padded = String(repeating: "0", count: max(0, exponent + 1 - significant.count)) + significant
        return exponent > 0 ? "\(padded.dropLast(exponent)).\(padded.suffix(exponent))" : padded
    }
}
