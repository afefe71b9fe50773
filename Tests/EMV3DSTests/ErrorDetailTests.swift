import JSON
import Testing
@testable import EMV3DS

/// errorDetail as Table A.4 defines it for each code (see ``ErrorDetail``): each reading the text allows is taken, an
/// errorDetail that gives none of them is not.
@Suite("errorDetail by error code")
struct ErrorDetailTests {
    @Test(arguments: [
        // 102: the versions the sender supports, or (read as the element at fault) messageVersion.
        (ErrorCode.versionNotSupported, "2.1.0,2.2.0", true), (.versionNotSupported, "2.2.0", true), (.versionNotSupported, "2.1.0, 2.2.0, 2.3.1", true),
        (.versionNotSupported, "messageVersion", true), (.versionNotSupported, "unsupported", false), (.versionNotSupported, "2.2", false),
        // 202: the ID of the critical extension not recognised, or the element messageExtension.
        (.criticalExtensionNotRecognised, "HARNESS-CRITICAL-01", true), (.criticalExtensionNotRecognised, "messageExtension", true),
        (.criticalExtensionNotRecognised, "Harness test extension", false),
        // 201, 203, 204: the element's name.
        (.requiredElementMissing, "acsTransID", false), (.requiredElementMissing, "dsTransID,acsTransID", true), (.formatInvalid, "ARes.dsTransID", true),
        (.duplicateElement, "transStatus", false),
        // 301: the table's sentence or the element's name; free text elsewhere.
        (.transactionIDNotRecognised, "The Transaction ID received was invalid.", true), (.transactionIDNotRecognised, "dsTransID", true),
        (.transientSystemFailure, "anything", true),
    ])
    func errorDetailIsJudgedByItsCode(code: ErrorCode, detail: String, accepted: Bool) {
        let field: String? = switch code {
        case .versionNotSupported: "messageVersion"
        case .criticalExtensionNotRecognised: "messageExtension"
        case .transactionIDNotRecognised, .transientSystemFailure: nil
        default: "dsTransID"
        }
        let problem = ErrorDetail.problem(detail, code: code, field: field, extensionID: "HARNESS-CRITICAL-01")
        #expect((problem == nil) == accepted, "\(code.rawValue) \"\(detail)\": \(problem ?? "accepted")")
    }

    /// The harness's own Erro follows the table: 102 lists the versions it speaks, 202 gives the extension's ID.
    @Test func theHarnesssOwnErroFollowsTheTable() {
        let version = InvalidMessage(Violation(field: "messageVersion", code: .versionNotSupported, reason: "9.9.9 is not one"), about: nil)
        #expect(version.erro(from: .directoryServer).errorDetail == "2.1.0,2.2.0,2.3.1")
        var ares = validAReq()
        ares.set("messageExtension", .array([.object([("name", .string("x")), ("id", .string("EXT-7")), ("criticalityIndicator", .bool(true)),
                                                      ("data", .object([]))])]))
        let violations = AReqRules.fromThreeDSServer.validate(ares, version: .v2_2_0)
        let critical = InvalidMessage(violations: violations.filter { $0.code == .criticalExtensionNotRecognised }, messageType: "AReq",
                                      claimedVersion: "2.2.0", ids: TransactionIDs())
        #expect(critical.erro(from: .directoryServer).errorDetail == "EXT-7", "\(violations)")
    }
}
