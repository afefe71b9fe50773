public import EMV3DS

/// What the DS answers for a PAN outside every card range.
public enum OutOfRangeAnswer: Sendable, Equatable {
    /// An ARes of its own with this status and reason (N/13 "cardholder not enrolled" by default).
    case ares(TransStatus, reason: String)
    /// An Erro 305 (transaction data not valid) naming `acctNumber`.
    case erro
}
