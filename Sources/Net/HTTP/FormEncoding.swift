import Foundation

/// `application/x-www-form-urlencoded` and query values as the harness writes them: only RFC
/// 3986's unreserved characters stay, so a URL or form built from any text is printable ASCII.
public enum FormEncoding {
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// One value, percent-encoded for a query or a form.
    public static func encode(_ value: String) -> String { value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "" }

    /// A form body: `name=value&…` in the order given.
    public static func body(_ fields: [(String, String)]) -> [UInt8] {
        Array(fields.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&").utf8)
    }
}
