/// Text made safe for XML and HTML: the one escaping of the reports, the ACS's pages and the
/// logos (here, beside JSON, as the other text encoding the harness writes).
public enum Markup {
    /// A page template filled in: `{{name}}` by the value escaped for HTML, `{{{name}}}` by HTML
    /// the caller built (the ACS's challenge pages, the demo's).
    public static func render(_ template: String, text: [String: String], html: [String: String] = [:]) -> String {
        var page = template
        for (name, value) in html { page = page.replacing("{{{\(name)}}}", with: value) }
        for (name, value) in text { page = page.replacing("{{\(name)}}", with: escape(value)) }
        return page
    }

    /// XML text and attribute escaping; characters XML 1.0 forbids become U+FFFD.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out += "&#10;"
            case "\t", "\r": out.unicodeScalars.append(scalar)
            default:
                out.unicodeScalars.append(scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value) ? "\u{FFFD}" : scalar)
            }
        }
        return out
    }
}
