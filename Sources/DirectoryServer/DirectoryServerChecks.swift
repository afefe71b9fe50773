import EMV3DS
import Faults
import Foundation
import JSON

// The DS's checks of the 3DS Server that need no state: pure functions of a message, its time and what was due.
extension DirectoryServer {
    /// How far ahead of the DS's clock a purchaseDate may be: the two clocks' difference.
    static let purchaseDateAheadAllowance = 300

    /// How far behind it a cardholder-present purchaseDate may be before it is a warning: the cardholder is at the
    /// checkout as the AReq goes, so an hour or more behind is most likely local time west of Greenwich, which the DS
    /// cannot prove (an order placed earlier and paid now is possible).
    static let purchaseDateBehindAllowance = 3600

    /// `areq.purchase-date`: a purchase is not in the future; a purchaseDate ahead of UTC is local
    /// time east of Greenwich. Five minutes of clock difference are allowed. In an app or browser AReq
    /// (the cardholder present) an hour or more behind is a warning.
    static func purchaseDateCheck(_ text: String, now: Date, cardholderPresent: Bool = true) -> CheckResult {
        guard let date = UTCTime.date(purchaseDate: text) else { return .pass(.purchaseDate) }  // its format is areq.elements'
        let ahead = Int(date.timeIntervalSince(now))
        if cardholderPresent, -ahead >= purchaseDateBehindAllowance {
            let behind = -ahead
            return CheckResult(.purchaseDate, .warning, "purchaseDate \(text) is \(behind / 3600) h \(behind % 3600 / 60) min behind the DS's UTC clock "
                               + "(\(UTCTime.purchaseDate(now))) in an AReq with the cardholder present: local time west of Greenwich written as UTC?")
        }
        guard ahead > purchaseDateAheadAllowance else { return .pass(.purchaseDate) }
        return .fail(.purchaseDate, "purchaseDate \(text) is \(ahead / 3600) h \(ahead % 3600 / 60) min ahead of the DS's UTC clock "
                                     + "(\(UTCTime.purchaseDate(now))): the 3DS Server wrote its local time")
    }

    /// `areq.device-info`: the device data's layout, as the SDK specification gives it.
    static func deviceInformationCheck(_ json: JSONValue) -> CheckResult {
        let (failures, warnings) = DeviceInformation.problems(in: json)
        if !failures.isEmpty { return .fail(.deviceInformation, (failures + warnings).joined(separator: "; ")) }
        return warnings.isEmpty ? .pass(.deviceInformation) : CheckResult(.deviceInformation, .warning, warnings.joined(separator: "; "))
    }

    /// The 3DS Server's Erro about what the DS sent it (its answer, an ARes or a PRes; or an RReq), against what that message called for.
    static func erroCheck(_ erro: ErroMessage, due: ErroDue, about message: MessageType, version: MessageVersion) -> CheckResult {
        let check: ConformanceCheck = switch message {
        case .rReq: .rreqErro
        case .pRes: .presErro
        default: .aresErro
        }
        let seen = "Erro \(erro.errorCode.rawValue) (errorComponent \(erro.errorComponent.rawValue), errorMessageType \(erro.errorMessageType ?? "none"), "
            + "errorDetail \"\(erro.errorDetail)\")"
        switch due {
        case .forbidden:
            return .fail(check, "\(seen) received, but the DS's \(message.rawValue) was valid or an Erro: nothing was due (an Erro is never answered with an Erro)")
        case .ungraded:
            return .pass(check, "\(seen) received about an answer that never arrived whole; allowed, not required")
        case .required(let codes, let field, let claimed):
            var problems: [String] = []
            if !codes.contains(erro.errorCode) { problems.append("errorCode \(erro.errorCode.rawValue), expected \(codes.map(\.rawValue).joined(separator: " or "))") }
            if erro.errorComponent != .threeDSServer { problems.append("errorComponent \(erro.errorComponent.rawValue), expected S (the 3DS Server)") }
            // A message not read as one (101) may leave its type unnamed; one that was read is named: as the DS sent it, or,
            // when its messageType was the fault, as the type it said it was.
            let named = [message.rawValue] + (field == "messageType" ? [claimed].compactMap { $0 } : [])
            if let type = erro.errorMessageType {
                if !named.contains(type) { problems.append("errorMessageType \(type), expected \(named.joined(separator: " or "))") }
            } else if erro.errorCode != .messageNotRecognised {
                problems.append("errorMessageType absent, expected \(message.rawValue)")
            }
            // The transaction's version; when the version was the fault, also the one the message claimed (answered as read).
            let versions = [version.rawValue] + (field == "messageVersion" ? [claimed].compactMap { $0 } : [])
            if !versions.contains(erro.messageVersion) {
                let whose = switch message {
                case .pRes: "the PReq's"
                case .rReq: "the transaction's"
                default: "the AReq's"
                }
                problems.append("messageVersion \(erro.messageVersion), expected \(whose) \(version.rawValue)"
                                + (versions.count > 1 ? " or the one the message claimed, \(versions[1])" : ""))
            }
            if let problem = ErrorDetail.problem(erro.errorDetail, code: erro.errorCode, field: field, extensionID: Fault.criticalExtensionID) {
                problems.append(problem)
            }
            return problems.isEmpty ? .pass(check, "\(seen) received") : .fail(check, "\(seen) received: " + problems.joined(separator: "; "))
        }
    }

    /// How long a 3DS Server keeps its cached ranges at least: the specification asks for a PReq at most once an hour.
    static let preparationInterval: TimeInterval = 3600

    /// `preq.serial-number` and `preq.frequency` of a PReq, against the 3DS Server's PReq before it.
    static func preparationChecks(_ preq: PReq, earlier: Preparation?, currentSerial: String, now: Date) -> [CheckResult] {
        guard let earlier, let given = earlier.serial else { return [.pass(.preparationSerial), .pass(.preparationFrequency)] }
        let serialCheck: CheckResult = preq.serialNum == nil
            ? .fail(.preparationSerial, "a PReq without serialNum, though this DS's last PRes to the 3DS Server gave serial \(given): "
                                        + "it asked for every range again instead of what changed")
            : .pass(.preparationSerial)
        let since = Int(now.timeIntervalSince(earlier.lastAt))
        // A change of the ranges since its last PRes (a tester's, through /admin/ds/card-ranges) excuses an early PReq.
        let frequencyCheck: CheckResult = since < Int(preparationInterval) && given == currentSerial
            ? .fail(.preparationFrequency, "a PReq \(since) s after the 3DS Server's previous one, with no card-range change since: "
                                           + "a PReq at most once an hour and at least once every 24 hours, not one per transaction")
            : .pass(.preparationFrequency)
        return [serialCheck, frequencyCheck]
    }

    /// The ids of `rres` that are not those of the RReq it answers, as 301 violations; nil when it echoes all three.
    static func unechoed(_ rres: TransactionIDs, of rreq: RReq) -> InvalidMessage? {
        let violations = [("threeDSServerTransID", rres.threeDSServerTransID, rreq.threeDSServerTransID),
                          ("acsTransID", rres.acsTransID, rreq.acsTransID),
                          ("dsTransID", rres.dsTransID, rreq.dsTransID)].filter { $0.1 != $0.2 }.map { field, sent, wanted in
            Violation(field: field, code: .transactionIDNotRecognised, reason: "\(field) \(sent ?? "absent") is not the RReq's \(wanted)")
        }
        return violations.isEmpty ? nil : InvalidMessage(violations: violations, messageType: MessageType.rRes.rawValue, claimedVersion: nil, ids: rres)
    }
}
