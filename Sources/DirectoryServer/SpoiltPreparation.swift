import JSON
import Store

/// A PRes the armed faults spoilt, by the `threeDSServerTransID` of its PReq. In a cluster the store keeps which instance
/// answered it, so the 3DS Server's Erro about it (posted to `/ds/preq`, naming that id) is passed on to that instance,
/// which grades the Erro it owes, whichever instance the balancer chose.
struct SpoiltPreparation: ArchivableRecord {
    let threeDSServerRefNumber: String

    /// The store's name of these records.
    static let role = "ds-pres"

    var archivedJSON: [UInt8] { JSONWriter.write(.object([("threeDSServerRefNumber", .string(threeDSServerRefNumber))])) }
    var isSettled: Bool { true }
}
