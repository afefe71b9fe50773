import EMV3DS
import Faults
import JSON
import Store

/// What another instance of a cluster needs to go on with a DS transaction whose instance died
/// (docs/scale.md): where its parties are and what its RReq depends on, kept in its stored record
/// under `resume`, and read back from it.
extension DirectoryServer.Transaction {
    var resume: JSONValue {
        .object(omittingAbsent: [
            ("threeDSServerURL", .string(threeDSServerURL)), ("acsURL", .string(acsURL)), ("aresContext", aresContext),
            ("resultsRelayed", .bool(resultsRelayed)), ("erroDue", Self.json(erroDue)),
            ("resultsFaults", resultsFaults.isEmpty ? nil : .array(resultsFaults.map { .string($0.name) })),
        ])
    }

    /// The transaction as its stored record left it; nil when the record has no `resume` (another role's, or an older harness's).
    init?(stored record: JSONValue) {
        guard let resume = record["resume"], let threeDSServerURL = resume["threeDSServerURL"]?.stringValue,
              let dsTransID = record["dsTransID"]?.stringValue, let threeDSServerTransID = record["threeDSServerTransID"]?.stringValue,
              let version = record["messageVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)) else { return nil }
        let ids = TransactionIDs(threeDSServerTransID: threeDSServerTransID, acsTransID: record["acsTransID"]?.stringValue,
                                 dsTransID: dsTransID, sdkTransID: record["sdkTransID"]?.stringValue)
        self.init(ids: ids, version: version, channel: record["deviceChannel"]?.stringValue.flatMap(DeviceChannel.init(rawValue:)),
                  threeDSServerURL: threeDSServerURL, acsURL: resume["acsURL"]?.stringValue, aresContext: resume["aresContext"],
                  erros: record["erro"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                  warnings: record["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                  resultsRelayed: resume["resultsRelayed"] == .bool(true), erroDue: Self.erroDue(resume["erroDue"]),
                  resultsFaults: (resume["resultsFaults"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(Self.fault) })
    }

    private static func json(_ due: ErroDue) -> JSONValue {
        switch due {
        case .forbidden: .string("forbidden")
        case .ungraded: .string("ungraded")
        case .required(let codes, let field, let claimed):
            .object(omittingAbsent: [("codes", .array(codes.map { .string($0.rawValue) })), ("field", .string(field)), ("claimed", .string(claimed))])
        }
    }

    private static func erroDue(_ json: JSONValue?) -> ErroDue {
        switch json?.stringValue {
        case "ungraded": return .ungraded
        case nil:
            guard let codes = json?["codes"]?.arrayValue?.compactMap({ $0.stringValue.flatMap(ErrorCode.init(rawValue:)) }) else { return .forbidden }
            return .required(codes, field: json?["field"]?.stringValue, claimed: json?["claimed"]?.stringValue)
        default: return .forbidden
        }
    }

    /// A fault from its name as the scenario file writes it ("erro 203"), as ``Fault/name`` gave it.
    private static func fault(_ name: String) -> Fault? {
        let parts = name.split(separator: " ", maxSplits: 1)
        return parts.first.flatMap { try? Fault(name: String($0), value: parts.count > 1 ? String(parts[1]) : nil) }
    }
}
