/// `messageCategory`: a payment or a non-payment authentication.
public enum MessageCategory: String, Sendable, CaseIterable, Codable {
    case payment = "01"
    case nonPayment = "02"
}
