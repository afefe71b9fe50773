import Yams

/// Finds the line of a field in YAML text, so that errors can name `file:line`.
struct YAMLLocation {
    private let root: Node?

    init(_ text: String) { root = try? Yams.compose(yaml: text) }

    /// The line of the node at `path` (member names and list indexes, as in
    /// "scenarios.3.challenge.steps.0.answer"), or of its deepest ancestor the file has.
    func line(of path: [String]) -> Int? {
        guard var node = root else { return nil }
        var line = node.mark?.line
        for component in path {
            if let mapping = node.mapping {
                // The key's line: a value may start on the next one.
                guard let pair = mapping.first(where: { $0.key.string == component }) else { break }
                node = pair.value
                line = pair.key.mark?.line ?? line
            } else if let sequence = node.sequence, let index = Int(component), sequence.indices.contains(index) {
                node = sequence[index]
                line = node.mark?.line ?? line
            } else {
                break
            }
        }
        return line
    }

    /// "source:line" when the line is known, else "source".
    func source(_ source: String, at path: [String]) -> String {
        line(of: path).map { "\(source):\($0)" } ?? source
    }

    /// "challenge.steps[0].answer" as path components.
    static func components(_ field: String) -> [String] {
        field.split(separator: ".").flatMap { part -> [String] in
            part.split(separator: "[").map { $0.hasSuffix("]") ? String($0.dropLast()) : String($0) }
        }
    }
}

extension DecodingError {
    /// Where in the document the error is, as path components.
    var pathComponents: [String] {
        let context: Context? = switch self {
        case .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): context
        @unknown default: nil
        }
        return (context?.codingPath ?? []).map { $0.intValue.map(String.init) ?? $0.stringValue }
    }
}
