public import JSON

/// The values negative cases give an element: made here once, for the probes that find the cases and the faults that play them.
public enum NegativeValue {
    /// `value` as a JSON value of another type, as a wrong sender writes it: a string as a number (its own digits where it
    /// is a number), a number or a boolean as a string, an object or an array as the string of its JSON text.
    public static func ofAnotherType(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text): .number(Int(text).map(String.init) ?? "1")
        case .number(let text): .string(text)
        case .bool(let flag): .string(flag ? "true" : "false")
        case .null: .string("null")
        case .array, .object: .string(JSONWriter.string(value))
        }
    }

    /// `message` with its member `name` written twice, the same value each time (nil when it has no such member).
    public static func duplicating(_ name: String, in message: JSONValue) -> JSONValue? {
        guard case .object(var members) = message, let value = message[name] else { return nil }
        members.append((name, value))
        return .object(members)
    }

    /// `text` cut to `length` characters, or lengthened to it with characters of its kind: "9" after digits, "A" after
    /// anything else (which keeps a URL a URL and base64url base64url).
    public static func resized(_ text: String, to length: Int) -> String {
        guard text.count < length else { return String(text.prefix(max(0, length))) }
        let digits = !text.isEmpty && text.utf8.allSatisfy { (0x30...0x39).contains($0) }
        return text + String(repeating: digits ? "9" : "A", count: length - text.count)
    }
}

extension NegativeValue {
    /// How a `format` case breaks a string element's format and keeps its length (Annex A "Format"): the shapes a wrong
    /// sender gets wrong beyond the length.
    public enum FormatBreak: String, Sendable, CaseIterable {
        /// The last character made "Z": a letter among a numeric element's digits, or a UUID's hex.
        case letter
        /// An https URL sent as http (2.3.1 wants a Fully Qualified URL of scheme https).
        case http
        /// An http(s) URL sent with the scheme ftp.
        case ftp
        /// A date's month made 13.
        case month
        /// The last character made "+", which base64 has and base64url does not.
        case base64

        /// What the break does, after "a value of its length that".
        public var description: String {
            switch self {
            case .letter: "has a letter (Z) where its format wants a digit"
            case .http: "is an http URL where its format wants https"
            case .ftp: "is an ftp URL where its format wants http or https"
            case .month: "is a date of month 13"
            case .base64: "has a '+', which base64url does not have"
            }
        }

        /// `text` broken so: nil when it is not of the shape the break changes.
        public func apply(to text: String) -> String? {
            guard !text.isEmpty else { return nil }
            switch self {
            case .letter: return text.dropLast() + "Z"
            case .base64: return text.dropLast() + "+"
            case .http, .ftp:
                guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return nil }
                return (self == .http ? "http" : "ftp") + text[colon...]
            case .month:
                // YYYYMMDDHHMMSS or YYMM.
                let start = text.count == 14 ? 4 : text.count == 4 ? 2 : nil
                guard let start else { return nil }
                var characters = Array(text)
                characters.replaceSubrange(start..<start + 2, with: "13")
                return String(characters)
            }
        }
    }
}

extension FieldFormat {
    /// The break a `format` case gives an element of this format: nil for a format that is its length and type alone (a
    /// string, a set of values) or made of other tables.
    public var formatBreak: NegativeValue.FormatBreak? {
        switch self {
        case .numeric, .numericAtLeast, .uuid: .letter
        case .httpsURL: .http
        case .url: .ftp
        case .dateTime14, .expiryYYMM: .month
        case .base64url: .base64
        default: nil
        }
    }
}
