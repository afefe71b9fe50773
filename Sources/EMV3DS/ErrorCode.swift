/// EMV 3DS error codes (Core specification, Table A.4), carried by an `Erro` message.
public enum ErrorCode: String, Sendable, CaseIterable, Codable {
    case messageNotRecognised = "101"
    case versionNotSupported = "102"
    case sentTooLate = "103"
    case requiredElementMissing = "201"
    case criticalExtensionNotRecognised = "202"
    case formatInvalid = "203"
    case duplicateElement = "204"
    case transactionIDNotRecognised = "301"
    case dataDecryptionFailure = "302"
    case accessDenied = "303"
    case isoCodeInvalid = "304"
    case transactionDataNotValid = "305"
    case mccNotValid = "306"
    case serialNumberNotValid = "307"
    /// 2.3.1: a Split-SDK's sdkServerSignedContent that does not verify (SB 279 Req 390).
    case signatureVerificationFailure = "308"
    /// 2.3.1: a cryptographic algorithm the context does not allow (a Split-SDK's CReq not in A128GCM).
    case incorrectCryptographicAlgorithm = "310"
    /// 2.3.1: a message received again (an RReq for a transaction already completed).
    case duplicateMessage = "312"
    /// 2.3.1: an RReq for a transaction whose ARes was not C or D.
    case inconsistentResults = "313"
    case transactionTimedOut = "402"
    case transientSystemFailure = "403"
    case permanentSystemFailure = "404"
    case systemConnectionFailure = "405"

    /// The specification's description, used as `errorDescription`.
    public var description: String {
        switch self {
        case .messageNotRecognised: "Message Received Invalid"
        case .versionNotSupported: "Message Version Number Not Supported"
        case .sentTooLate: "Message Received Too Late"
        case .requiredElementMissing: "Required Data Element Missing"
        case .criticalExtensionNotRecognised: "Critical Message Extension Not Recognised"
        case .formatInvalid: "Format of one or more Data Elements is Invalid according to the Specification"
        case .duplicateElement: "Duplicate Data Element"
        case .transactionIDNotRecognised: "Transaction ID Not Recognised"
        case .dataDecryptionFailure: "Data Decryption Failure"
        case .accessDenied: "Access Denied, Invalid Endpoint"
        case .isoCodeInvalid: "ISO Code Invalid"
        case .transactionDataNotValid: "Transaction data not valid"
        case .mccNotValid: "Merchant Category Code (MCC) Not Valid for Payment System"
        case .serialNumberNotValid: "Serial Number not Valid"
        case .signatureVerificationFailure: "Signature Verification Failure"
        case .incorrectCryptographicAlgorithm: "Incorrect Cryptographic Algorithm"
        case .duplicateMessage: "Duplicate Message Received"
        case .inconsistentResults: "Transaction Data Inconsistent: Results Request not expected"
        case .transactionTimedOut: "Transaction Timed Out"
        case .transientSystemFailure: "Transient System Failure"
        case .permanentSystemFailure: "Permanent System Failure"
        case .systemConnectionFailure: "System Connection Failure"
        }
    }
}

extension ErrorCode {
    /// The code for an RReq its transaction does not await: 313 from 2.3.1, which names the
    /// case; 305 (transaction data not valid) before.
    public static func unexpectedResults(in version: MessageVersion) -> ErrorCode {
        version >= .v2_3_1 ? .inconsistentResults : .transactionDataNotValid
    }

    /// The code for a message received again (an AReq with a used `threeDSServerTransID`, an
    /// RReq of a transaction already completed): 312 from 2.3.1, 305 before.
    public static func duplicate(in version: MessageVersion) -> ErrorCode {
        version >= .v2_3_1 ? .duplicateMessage : .transactionDataNotValid
    }
}

/// Who reports an error: `errorComponent`.
public enum ErrorComponent: String, Sendable, Codable {
    case sdk = "C"
    case threeDSServer = "S"
    case directoryServer = "D"
    case acs = "A"
}
