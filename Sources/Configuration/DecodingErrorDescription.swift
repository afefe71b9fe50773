import Foundation

extension DecodingError {
    /// "field.path: what was wrong", without Swift type names.
    public var readableDescription: String {
        func path(_ context: Context) -> String {
            let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? "body" : path
        }
        switch self {
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return "\(parent == "body" ? "" : parent + ".")\(key.stringValue): required member missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "\(path(context)): \(context.debugDescription)"
        case .dataCorrupted(let context):
            let underlying = (context.underlyingError as NSError?)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return "\(path(context)): \(underlying ?? context.debugDescription)"
        @unknown default:
            return "\(self)"
        }
    }
}
