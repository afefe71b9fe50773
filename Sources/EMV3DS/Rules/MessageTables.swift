/// Every field table the harness enforces, by the name the spec view takes.
public enum MessageTables {
    public struct Entry: Sendable {
        public let name: String
        /// Which leg the table checks, where a message's legs differ.
        public let leg: String
        public let rules: MessageRules
    }

    public static let all: [Entry] = [
        Entry(name: "AReq", leg: "3DS Server to DS", rules: AReqRules.fromThreeDSServer),
        Entry(name: "AReq-ACS", leg: "DS to ACS", rules: AReqRules.fromDirectoryServer),
        Entry(name: "ARes", leg: "ACS to DS to 3DS Server", rules: AResRules.rules),
        Entry(name: "CReq", leg: "SDK to ACS", rules: ChallengeRules.cReq),
        Entry(name: "CRes", leg: "ACS to SDK", rules: ChallengeRules.cRes),
        Entry(name: "RReq", leg: "ACS to DS to 3DS Server", rules: ResultsRules.rReq),
        Entry(name: "RRes", leg: "3DS Server to DS to ACS", rules: ResultsRules.rRes),
        Entry(name: "PReq", leg: "3DS Server to DS", rules: PreparationRules.pReq),
        Entry(name: "PRes", leg: "DS to 3DS Server", rules: PreparationRules.pRes),
        Entry(name: "Erro", leg: "any party to its peer", rules: ErroRules.rules),
    ]

    /// The table of `name` (case-insensitive), or nil.
    public static func named(_ name: String) -> Entry? { all.first { $0.name.lowercased() == name.lowercased() } }

    /// The table of `name` in `channel`: the browser's CReq and final CRes travel as form fields, with tables of their own.
    public static func named(_ name: String, channel: DeviceChannel?) -> Entry? {
        guard channel == .browser else { return named(name) }
        switch name.lowercased() {
        case "creq": return Entry(name: "CReq", leg: "3DS Server's page to ACS (the creq form field)", rules: ChallengeRules.browserCReq)
        case "cres": return Entry(name: "CRes", leg: "ACS to the notificationURL (the final cres form field)", rules: ChallengeRules.browserFinalCRes)
        default: return named(name)
        }
    }
}

public import JSON

extension MessageTables.Entry {
    /// The table of `version` (and `channel`, which keeps only the fields it uses), as
    /// `GET /admin/spec/{messageType}/{version}` answers it.
    public func json(version: MessageVersion, channel: DeviceChannel?) -> JSONValue {
        let rows = rules.table(version: version, channel: channel)
        return .object(omittingAbsent: [
            ("messageType", .string(rules.messageType.rawValue)),
            ("table", .string(name)),
            ("leg", .string(leg)),
            ("messageVersion", .string(version.rawValue)),
            ("deviceChannel", .string(channel?.rawValue)),
            ("fieldCount", .number(String(rows.count))),
            ("fields", .array(rows.map { row in
                .object([("name", .string(row.name)), ("presence", .string(row.presence)), ("format", .string(row.format))])
            })),
        ])
    }
}
