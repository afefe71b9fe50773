import JSON

/// A YAML value read as JSON, for the members of EMV messages a scenario writes out (`outcomeFields`): strings, booleans,
/// lists and mappings; a number is its text (EMV's numeric fields are strings). A mapping's keys come in sorted order.
struct YAMLJSON: Decodable {
    let value: JSONValue

    init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            value = .string(text)
        } else if let flag = try? container.decode(Bool.self) {
            value = .bool(flag)
        } else if let list = try? container.decode([YAMLJSON].self) {
            value = .array(list.map(\.value))
        } else if let mapping = try? container.decode([String: YAMLJSON].self) {
            value = .object(mapping.keys.sorted().map { (key: $0, value: mapping[$0]?.value ?? .null) })
        } else if container.decodeNil() {
            value = .null
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a string, boolean, list or mapping")
        }
    }
}
