import EMV3DS
import Faults
import JSON
import Store

extension DirectoryServer {
    /// What the DS remembers of a transaction: where its parties are, what its RReq depends
    /// on, and the Erro messages that passed through it.
    struct Transaction: ArchivableRecord {
        var ids: TransactionIDs
        let version: MessageVersion
        let channel: DeviceChannel?
        let threeDSServerURL: String
        /// Where the transaction's ACS takes AReqs (and Erro); nil when the DS answered itself.
        let acsURL: String?
        /// What the RReq rules read of the ARes as relayed (`ResultsRules.aresContext`: its
        /// `acsDecConInd` and transStatus), not the whole message (its acsSignedContent alone is kilobytes).
        var aresContext: JSONValue?
        var erros: [String] = []
        var warnings: [String] = []
        /// Set when the transaction's RReq has been relayed.
        var resultsRelayed = false
        /// The Erro the 3DS Server owes about the DS's answer: required when the scenario's faults spoilt the ARes.
        var erroDue = ErroDue.forbidden
        /// The scenario's faults on the RReq the DS relays to the 3DS Server.
        var resultsFaults: [Fault] = []

        var archivedJSON: [UInt8] { JSONWriter.write(json) }

        /// Answered without a challenge, or its result relayed: no message is due.
        var isSettled: Bool {
            guard let status = aresContext?["transStatus"]?.stringValue else { return false }
            return resultsRelayed || TransStatus(rawValue: status)?.awaitsResult != true
        }

        var json: JSONValue {
            .object(omittingAbsent: [
                ("dsTransID", .string(ids.dsTransID)), ("threeDSServerTransID", .string(ids.threeDSServerTransID)),
                ("acsTransID", .string(ids.acsTransID)), ("sdkTransID", .string(ids.sdkTransID)),
                ("messageVersion", .string(version.rawValue)), ("deviceChannel", .string(channel?.rawValue)),
                ("transStatus", aresContext?["transStatus"]),
                ("erro", erros.isEmpty ? nil : .array(erros.map(JSONValue.string))),
                ("warnings", warnings.isEmpty ? nil : .array(warnings.map(JSONValue.string))),
                ("resume", resume),
            ])
        }
    }
}
