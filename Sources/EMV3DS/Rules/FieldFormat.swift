import JSON

/// The format a field's value must have (Core specification, Annex A "Format" and "Length").
public enum FieldFormat: Sendable {
    /// A string of `length` characters.
    case string(ClosedRange<Int>)
    /// A string of digits of `length`.
    case numeric(ClosedRange<Int>)
    /// A string of digits of `length` whose value is at least `minimum` (`sdkMaxTimeout` ≥ 05).
    case numericAtLeast(ClosedRange<Int>, minimum: Int)
    /// An ISO 4217 numeric currency code, less the excluded values (304 otherwise).
    case currencyCode
    /// An ISO 3166-1 numeric country code, less the excluded values (304 otherwise).
    case countryCode
    /// One of the listed values.
    case oneOf([String])
    /// A UUID in canonical 8-4-4-4-12 form (RFC 4122), 36 characters.
    case uuid
    /// A fully qualified http(s) URL of at most the given length.
    case url(maxLength: Int)
    /// A fully qualified https URL: 2.3.1 defines a Fully Qualified URL as an absolute URL with scheme https
    /// (EMVCo SB 279 p.16). The harness holds to it where the URL is a web site's, not one of the endpoints it runs
    /// itself on loopback without TLS (docs/field-rules.md).
    case httpsURL(maxLength: Int)
    /// "YYYYMMDDHHMMSS" (purchaseDate).
    case dateTime14
    /// "YYMM" (cardExpiryDate).
    case expiryYYMM
    /// A JSON object.
    case object
    /// An EC P-256 public JWK object (kty, crv, x, y).
    case ecPublicJWK
    /// Unpadded base64url (or a compact JWS/JWE made of it) of at most the given length.
    case base64url(maxLength: Int)
    /// A JSON array.
    case array
    /// A JSON array of `count` elements, each of `element`'s format (`authenticationMethod`, `sdkUiType`).
    indirect case arrayOf(FieldFormat, count: ClosedRange<Int>)
    /// A JSON object whose members have rules of their own (`deviceRenderOptions`, `acsRenderingType`);
    /// violations name the member as `object.member`.
    case fields(FieldTable)
    /// A JSON boolean (`oobContinue`).
    case boolean
    /// `challengeSelectInfo`: a non-empty array of objects of one member each, `{"key":"label"}`.
    case keyLabelList

    /// Why `value` does not have this format, or nil if it has. Most problems are 203; an
    /// ISO code of the right shape that is not in its list is 304.
    func problem(with value: JSONValue) -> (code: ErrorCode, reason: String)? {
        if case .string(let text) = value, let currency = isCurrency {
            return isoProblem(text, currency: currency)
        }
        return shapeProblem(with: value).map { (.formatInvalid, $0) }
    }

    /// True for a currency code, false for a country code, nil for other formats.
    private var isCurrency: Bool? {
        switch self {
        case .currencyCode: true
        case .countryCode: false
        default: nil
        }
    }

    private func isoProblem(_ text: String, currency: Bool) -> (code: ErrorCode, reason: String)? {
        guard text.utf8.count == 3, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let code = Int(text) else {
            return (.formatInvalid, "must be 3 digits")
        }
        let name = currency ? "ISO 4217 currency" : "ISO 3166-1 country"
        if ISOCodes.isExcluded(code, currency: currency) { return (.isoCodeInvalid, "\(text) is an excluded \(name) code") }
        return (currency ? ISOCodes.currencies : ISOCodes.countries).contains(code) ? nil : (.isoCodeInvalid, "\(text) is not an \(name) code")
    }

    private func shapeProblem(with value: JSONValue) -> String? {
        switch self {
        case .fields:
            return value.objectMembers == nil ? "must be a JSON object, not \(value.typeName)" : nil
        case .arrayOf(let element, let count):
            guard case .array(let items) = value else { return "must be a JSON array, not \(value.typeName)" }
            guard count.contains(items.count) else { return "must have \(count.lowerBound)-\(count.upperBound) elements, has \(items.count)" }
            for (index, item) in items.enumerated() {
                if let problem = element.problem(with: item) { return "element \(index) \(problem.reason)" }
            }
            return nil
        case .object:
            return value.objectMembers == nil ? "must be a JSON object, not \(value.typeName)" : nil
        case .array:
            if case .array = value { return nil }
            return "must be a JSON array, not \(value.typeName)"
        case .boolean:
            if case .bool = value { return nil }
            return "must be a JSON boolean, not \(value.typeName)"
        case .keyLabelList:
            guard case .array(let items) = value, !items.isEmpty else { return "must be a non-empty array of {\"key\":\"label\"} objects" }
            for item in items {
                guard let members = item.objectMembers, members.count == 1, members[0].value.stringValue != nil else {
                    return "each item must be an object of one key with a string label"
                }
            }
            return nil
        case .ecPublicJWK:
            guard let members = value.objectMembers else { return "must be a JWK object, not \(value.typeName)" }
            let keys = Set(members.map(\.key))
            guard value["kty"]?.stringValue == ECPublicJWK.keyType, value["crv"]?.stringValue == ECPublicJWK.curve else { return "must be an EC P-256 JWK" }
            guard keys.isSuperset(of: ["x", "y"]) else { return "JWK must have x and y" }
            return nil
        default:
            guard let text = value.stringValue else { return "must be a string, not \(value.typeName)" }
            return problem(with: text)
        }
    }

    private func problem(with text: String) -> String? {
        // The bytes are read in place (a String's UTF-8 view goes through its index for every byte;
        // sdkEncData and deviceInfo are kilobytes).
        var contiguous = text
        return contiguous.withUTF8 { problem(with: text, bytes: $0) }
    }

    private func problem(with text: String, bytes: UnsafeBufferPointer<UInt8>) -> String? {
        // base64url is read in one pass: its bytes are ASCII, so its length in characters is its length in bytes. The
        // long values (sdkEncData, deviceInfo, acsSignedContent: kilobytes each) are of this format.
        if case .base64url(let maxLength) = self {
            // Too long is said first, in characters, as for every format.
            if bytes.count > maxLength, (Self.isASCII(bytes) ? bytes.count : text.count) > maxLength { return "longer than \(maxLength)" }
            guard !Self.isBase64URL(bytes) else { return nil }
            return bytes.contains(UInt8(ascii: "=")) ? "must be unpadded base64url (it carries '=' padding)" : "must be unpadded base64url"
        }
        // Lengths are in characters; ASCII text (nearly every EMV field) needs no grapheme walk.
        let count = Self.isASCII(bytes) ? bytes.count : text.count
        switch self {
        case .string(let length):
            return length.contains(count) ? nil : "length \(count) is outside \(length.lowerBound)-\(length.upperBound)"
        case .numeric(let length):
            guard bytes.allSatisfy({ (0x30...0x39).contains($0) }) else { return "must be digits only" }
            return length.contains(count) ? nil : "length \(count) is outside \(length.lowerBound)-\(length.upperBound)"
        case .numericAtLeast(let length, let minimum):
            if let problem = FieldFormat.numeric(length).problem(with: text) { return problem }
            return (Int(text) ?? 0) >= minimum ? nil : "must be at least \(minimum)"
        case .oneOf(let values):
            return values.contains(text) ? nil : "\"\(text)\" is not one of \(values.joined(separator: ", "))"
        case .uuid:
            return Self.isCanonicalUUID(text) ? nil : "must be a canonical UUID (8-4-4-4-12 hex)"
        case .httpsURL(let maxLength):
            guard count <= maxLength else { return "longer than \(maxLength)" }
            return text.lowercased().hasPrefix("https://") && count > 8 ? nil : "must be an https URL (2.3.1: a Fully Qualified URL has scheme https)"
        case .url(let maxLength):
            guard count <= maxLength else { return "longer than \(maxLength)" }
            let lower = text.lowercased()
            guard (lower.hasPrefix("https://") || lower.hasPrefix("http://")) && count > 8 else { return "must be an http(s) URL" }
            return nil
        case .dateTime14:
            return Self.isDate(text, length: 14) ? nil : "must be YYYYMMDDHHMMSS"
        case .expiryYYMM:
            guard count == 4, bytes.allSatisfy({ (0x30...0x39).contains($0) }), let month = Int(text.suffix(2)), (1...12).contains(month) else {
                return "must be YYMM"
            }
            return nil
        case .base64url:
            return nil  // read above
        case .object, .array, .ecPublicJWK, .boolean, .keyLabelList, .arrayOf, .fields:
            return "must be JSON, not a string"
        case .currencyCode, .countryCode:
            return nil  // checked by isoProblem
        }
    }

    /// True when every byte is ASCII: eight bytes at a time.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var index = 0, bits: UInt64 = 0
        while index + 8 <= bytes.count {
            bits |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            bits |= UInt64(bytes[index])
            index += 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    /// For each byte value, what it is to the formats read byte by byte: a table read is one load per byte, where
    /// comparisons with ranges were several branches (base64url values are kilobytes, and every id is a UUID).
    private struct ByteClass: OptionSet {
        let rawValue: UInt8
        /// A-Z a-z 0-9 - _ and the dot: unpadded base64url, and the compact serialisations made of it.
        static let base64url = ByteClass(rawValue: 1)
        /// 0-9 a-f A-F.
        static let hex = ByteClass(rawValue: 2)
    }

    private static let byteClasses: [ByteClass] = (0...255).map { byte in
        var classes: ByteClass = []
        if "0123456789abcdefABCDEF".utf8.contains(UInt8(byte)) { classes.insert(.hex) }
        if "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.".utf8.contains(UInt8(byte)) { classes.insert(.base64url) }
        return classes
    }

    /// True when every byte is one of base64url's or the dot.
    static func isBase64URL(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool { allBytes(bytes, are: .base64url) }

    private static func allBytes(_ bytes: UnsafeBufferPointer<UInt8>, are wanted: ByteClass) -> Bool {
        byteClasses.withUnsafeBufferPointer { classes in
            var common = wanted.rawValue
            for byte in bytes { common &= classes[Int(byte)].rawValue }
            return common == wanted.rawValue
        }
    }

    /// The five groups of hex digits of a UUID, between its dashes.
    private static let uuidGroups = [0..<8, 9..<13, 14..<18, 19..<23, 24..<36]

    public static func isCanonicalUUID(_ text: String) -> Bool {
        guard text.utf8.count == 36 else { return false }
        // Every id of every message is checked: by index over the bytes, not an enumerated UTF-8 view.
        var text = text
        return text.withUTF8 { bytes in
            let dash = UInt8(ascii: "-")
            guard bytes[8] == dash, bytes[13] == dash, bytes[18] == dash, bytes[23] == dash else { return false }
            return uuidGroups.allSatisfy { allBytes(UnsafeBufferPointer(rebasing: bytes[$0]), are: .hex) }
        }
    }

    private static func isDate(_ text: String, length: Int) -> Bool {
        let digits = text.utf8.map { Int($0) - 0x30 }
        guard digits.count == length, digits.allSatisfy({ (0...9).contains($0) }) else { return false }
        let month = digits[4] * 10 + digits[5]
        let day = digits[6] * 10 + digits[7]
        let hour = digits[8] * 10 + digits[9]
        let minute = digits[10] * 10 + digits[11]
        let second = length == 14 ? digits[12] * 10 + digits[13] : 0
        return (1...12).contains(month) && (1...31).contains(day) && hour < 24 && minute < 60 && second < 60
    }

    /// A JSON object whose members have rules of their own.
    public static func members(_ rules: [FieldRule]) -> FieldFormat { .fields(FieldTable(rules)) }

    /// The format as the spec view prints it for `version` (an object's members are that version's).
    public func summary(in version: MessageVersion) -> String {
        switch self {
        case .string(let length): "string \(Self.range(length))"
        case .numeric(let length): "numeric \(Self.range(length))"
        case .numericAtLeast(let length, let minimum): "numeric \(Self.range(length)), at least \(minimum)"
        case .currencyCode: "ISO 4217 numeric currency code"
        case .countryCode: "ISO 3166-1 numeric country code"
        case .oneOf(let values): "one of " + Self.runs(values)
        case .uuid: "UUID (36)"
        case .url(let maxLength): "http(s) URL, at most \(maxLength)"
        case .httpsURL(let maxLength): "https URL, at most \(maxLength)"
        case .dateTime14: "YYYYMMDDHHMMSS"
        case .expiryYYMM: "YYMM"
        case .object: "JSON object"
        case .ecPublicJWK: "EC P-256 public JWK"
        case .base64url(let maxLength): "base64url, at most \(maxLength)"
        case .array: "JSON array"
        case .arrayOf(let element, let count): "array of \(Self.range(count)) × (\(element.summary(in: version)))"
        case .fields(let table):
            "object {" + table.fields.filter { $0.applies(to: version) }.map { "\($0.name): \($0.format.summary(in: version))" }
                .joined(separator: "; ") + "}"
        case .boolean: "boolean"
        case .keyLabelList: "array of {key: label}"
        }
    }

    /// Two-digit codes as runs ("01-21, 80-99"); other values as they are.
    private static func runs(_ values: [String]) -> String {
        let numbers = values.compactMap { $0.count == 2 ? Int($0) : nil }
        guard numbers.count == values.count, numbers.count > 3, numbers == numbers.sorted() else { return values.joined(separator: ", ") }
        var parts: [String] = []
        var start = numbers[0], previous = numbers[0]
        func code(_ number: Int) -> String { number < 10 ? "0\(number)" : "\(number)" }
        for number in numbers.dropFirst() + [Int.max] {
            if number == previous + 1 { previous = number; continue }
            parts.append(start == previous ? code(start) : "\(code(start))-\(code(previous))")
            start = number
            previous = number
        }
        return parts.joined(separator: ", ")
    }

    private static func range(_ range: ClosedRange<Int>) -> String {
        range.lowerBound == range.upperBound ? "\(range.lowerBound)" : "\(range.lowerBound)-\(range.upperBound)"
    }
}

/// What an EC public key in a message is: a JWK of `kty` EC on P-256, the curve of EMV 3DS's ephemeral keys (Core
/// specification, 6.2.3: ECDH on P-256).
public enum ECPublicJWK {
    public static let keyType = "EC"
    public static let curve = "P-256"
}
