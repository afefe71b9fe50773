public import JSON

extension FieldFormat {
    /// A value of this format, for a message that must carry an element whose value is not what is at fault (a lenient
    /// reader's stand-in, an element added where it must not be): the shortest the format allows. Nil for the formats made
    /// of other tables (`fields`, an EC public JWK), whose members each have rules of their own.
    public var example: JSONValue? {
        switch self {
        case .string(let length): .string(String(repeating: "A", count: max(1, length.lowerBound)))
        case .numeric(let length): .string(String(repeating: "0", count: max(1, length.lowerBound)))
        case .numericAtLeast(let length, let minimum):
            .string(String(repeating: "0", count: max(0, length.lowerBound - String(minimum).count)) + String(minimum))
        case .currencyCode: .string("978")
        case .countryCode: .string("250")
        case .oneOf(let values): values.first.map(JSONValue.string)
        case .uuid: .string("00000000-0000-4000-8000-000000000000")
        case .url, .httpsURL: .string("https://example.com")
        case .dateTime14: .string("20260101120000")
        case .expiryYYMM: .string("3012")
        case .object: .object([])
        case .base64url: .string("AAAA")
        case .array: .array([])
        case .arrayOf(let element, let count): element.example.map { .array(Array(repeating: $0, count: max(1, count.lowerBound))) }
        case .boolean: .bool(true)
        case .keyLabelList: .array([.object([("1", .string("A"))])])
        case .fields, .ecPublicJWK: nil
        }
    }
}
