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
