/// What an Erro's `errorDetail` carries, by its `errorCode` (Core specification Annex A, Table A.4, the "Error Detail"
/// column, the same in 2.1.0 and 2.2.0; 2.3.1 keeps the codes): for 102 the message versions the sender of the Erro
/// supports, comma-separated; for 201, 203 and 204 the names of the data elements at fault; for 202 the ID of each
/// critical message extension not recognised; for 301 the sentence "The Transaction ID received was invalid", which
/// implementations also write as the element's name (both are taken); elsewhere free text. The harness writes its own
/// Erro messages by the same table.
public enum ErrorDetail {
    /// 102's `errorDetail`: the versions this harness speaks.
    public static let supportedVersions = MessageVersion.allCases.map(\.rawValue).joined(separator: ",")

    /// Why `detail` is not what Table A.4 asks of an Erro with `code` about a message whose data element `field` was at
    /// fault (`extensionID`: the critical extension's ID, for 202); nil when it is, or when the table asks for free text.
    /// Where the table can be read two ways, each reading is taken: a 102 may list versions or name `messageVersion`, a
    /// 202 may give the extension's ID or name `messageExtension`.
    public static func problem(_ detail: String, code: ErrorCode, field: String?, extensionID: String? = nil) -> String? {
        switch code {
        case .versionNotSupported:
            if listsVersions(detail) || field.map(detail.contains) == true { return nil }
            return "errorDetail \"\(detail)\" lists no message version: for 102 it holds the versions the sender supports (Table A.4), e.g. \"\(supportedVersions)\""
        case .criticalExtensionNotRecognised:
            if extensionID.map(detail.contains) == true || field.map(detail.contains) == true { return nil }
            return "errorDetail \"\(detail)\" does not give the ID of the critical extension not recognised (Table A.4)"
                + (extensionID.map { ": \($0)" } ?? "")
        case .requiredElementMissing, .formatInvalid, .duplicateElement:
            guard let field, !detail.contains(field) else { return nil }
            return "errorDetail does not name \(field), the data element at fault (Table A.4: the names of the data elements)"
        default:
            return nil
        }
    }

    /// Whether `detail` holds a version number such as 2.2.0.
    private static func listsVersions(_ detail: String) -> Bool {
        detail.split(whereSeparator: { $0 == "," || $0 == " " }).contains { part in
            let numbers = part.split(separator: ".", omittingEmptySubsequences: false)
            return numbers.count == 3 && numbers.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
        }
    }
}
