/// The EMV 3DS protocol versions the harness speaks. A transaction's version is fixed
/// by its AReq; every later message must carry the same one.
public enum MessageVersion: String, Sendable, CaseIterable, Comparable, Codable {
    case v2_1_0 = "2.1.0"
    case v2_2_0 = "2.2.0"
    case v2_3_1 = "2.3.1"

    /// The newest version the harness speaks.
    public static let latest = MessageVersion.v2_3_1

    /// The order of the versions, oldest first.
    var ordinal: Int {
        switch self {
        case .v2_1_0: 0
        case .v2_2_0: 1
        case .v2_3_1: 2
        }
    }

    var bit: UInt8 { 1 << UInt8(ordinal) }

    public static func < (lhs: MessageVersion, rhs: MessageVersion) -> Bool { lhs.ordinal < rhs.ordinal }
}
