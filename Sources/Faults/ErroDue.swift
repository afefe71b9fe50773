public import EMV3DS

/// What the receiver of a message must send back about it: a 3DS Server that receives an ARes
/// (or an RReq) it cannot process answers the DS with an Erro naming what is wrong (Core
/// Specification: "the 3DS Server shall send an Error Message to the DS" after a failed
/// validation); one that receives a valid ARes, or an Erro, sends none (an Erro is never
/// answered with an Erro).
public enum ErroDue: Sendable, Equatable {
    /// An Erro with one of these codes, `errorDetail` naming `field` when one is given; `claimed`, the value the spoilt
    /// message gave its envelope (`messageType` or `messageVersion`), which the Erro may echo as what it read.
    case required([ErrorCode], field: String?, claimed: String? = nil)
    /// No Erro: the answer was valid, or was itself an Erro.
    case forbidden
    /// The answer never arrived as a message (an HTTP status, a broken connection, silence):
    /// there is nothing to name; an Erro is allowed, not required.
    case ungraded

    /// What is due about an answer the DS spoilt with `faults` (none: a valid ARes or the ACS's Erro). An Erro sent instead
    /// of the answer is never answered, also when the other faults spoil it: "A receiving component never responds to the
    /// sending component of an Error Message, also when it is in error" (EMVCo 3DS FAQ, Technical Questions, April 2026, Q52).
    /// What keeps the answer from arriving as a message (an HTTP status, a cut, no answer, another Content-Type) leaves
    /// nothing to grade, whatever else spoils it and in whatever order the faults are listed.
    public init(answerSpoiltBy faults: [Fault]) {
        if faults.contains(where: { $0.erroDue == .ungraded }) {
            self = .ungraded
        } else if faults.contains(where: { $0.erroInstead != nil }) {
            // An Erro cut to bytes that are no JSON is no Erro either.
            self = faults.contains(.malformedJSON) ? .ungraded : .forbidden
        } else if faults.contains(.malformedJSON) {
            // Bytes that are no JSON are no message whatever else was spoilt before they were cut (101).
            self = Fault.malformedJSON.erroDue
        } else {
            self = faults.lazy.map(\.erroDue).first { $0 != .forbidden } ?? .forbidden
        }
    }

    /// The codes due, as text ("201"); nil unless an Erro is required.
    public var codes: [String]? { errorCodes?.map(\.rawValue) }

    /// The codes due; nil unless an Erro is required.
    public var errorCodes: [ErrorCode]? {
        guard case .required(let codes, _, _) = self else { return nil }
        return codes
    }

    /// The value the spoilt message gave its envelope, when its `messageType` or `messageVersion` was the fault: an Erro
    /// about it is read two ways (101 or 102, and 203), and either is taken.
    public var claimed: String? {
        guard case .required(_, _, let claimed) = self else { return nil }
        return claimed
    }

    /// The data element the Erro's `errorDetail` must name, when one is.
    public var field: String? {
        guard case .required(_, let field, _) = self else { return nil }
        return field
    }
}

extension Fault {
    /// The Erro due from whoever receives an answer this fault spoilt.
    public var erroDue: ErroDue {
        switch self {
        case .missingField(let field): .required([.requiredElementMissing], field: field)
        // An optional element sent as "" is a format error (203); read as absent, some name it 201.
        case .emptyField(let field): .required([.formatInvalid, .requiredElementMissing], field: field)
        case .criticalExtension: .required([.criticalExtensionNotRecognised], field: "messageExtension")
        // A message of another type: not the message expected (101) or, read as a value, invalid (203).
        case .fieldValue("messageType", let type): .required([.messageNotRecognised, .formatInvalid], field: "messageType", claimed: type)
        case .fieldValue(let field, _), .fieldType(let field), .fieldLength(let field, _), .fieldFormat(let field, _): .required([.formatInvalid], field: field)
        case .duplicateMember(let field): .required([.duplicateElement], field: field)
        // A version not the AReq's: not supported (102) or, read as a mismatch, invalid (203).
        case .messageVersion(let version): .required([.versionNotSupported, .formatInvalid], field: "messageVersion", claimed: version)
        case .wrongTransactionID(let field): .required([.transactionIDNotRecognised, .formatInvalid], field: field)
        case .swappedTransactionIDs: .required([.transactionIDNotRecognised, .formatInvalid], field: nil)
        case .malformedJSON: .required([.messageNotRecognised], field: nil)
        // An unknown member outside a critical extension is ignored: an Erro about it refuses a valid message.
        // So is an element another version defines (Annex A, A.2: no validation the tables do not list).
        // And an element outside its condition where a rule has the receiver ignore it there (FieldRule.ignoredOutsideItsCondition).
        case .erro, .latency, .unknownMember, .otherVersionMember, .misplacedMember, .nonCriticalExtension: .forbidden
        // A valid ARes under another Content-Type may be refused as a transport failure: an Erro (101) is allowed, not required.
        case .contentType, .httpStatus, .noAnswer, .closeMidResponse: .ungraded
        case .wrongCounter, .repeatedCounter, .selectInfoShape, .cresEncryption: .forbidden
        // A refused acsSignedContent is a runtime error: the SDK has no channel to send an Erro on.
        case .signedContent, .signedPayload, .signedHeader, .signedKey: .forbidden
        }
    }
}
