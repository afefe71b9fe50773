public import EMV3DS

/// The leg of the protocol whose answer a fault spoils.
public enum FaultLeg: String, Sendable, CaseIterable {
    /// The DS's answer to the 3DS Server's AReq: tests a 3DS Server.
    case directoryServer = "ds"
    /// The ACS's answer to the DS's AReq: the harness's DS copes, the 3DS Server sees what it makes of it.
    case accessControlServer = "acs"
    /// What the ACS sends the SDK: `acsSignedContent` (through the ARes) and the CRes: tests an SDK.
    case sdk
    /// The RReq the DS relays to the 3DS Server: tests a 3DS Server.
    case results = "rreq"
    /// The DS's PRes to a 3DS Server's PReq: tests a 3DS Server. A PReq names no card: a scenario's faults on this leg
    /// spoil the PRes to the PReq it is armed for (`POST /admin/ds/pres-faults` with the scenario's name).
    case preparation = "pres"

    public var title: String {
        switch self {
        case .directoryServer: "DS to 3DS Server"
        case .accessControlServer: "ACS to DS"
        case .sdk: "ACS to SDK"
        case .results: "DS to 3DS Server (RReq)"
        case .preparation: "DS to 3DS Server (PRes)"
        }
    }
}

/// One way to misbehave. Which legs take which fault is `legs`.
public enum Fault: Sendable, Equatable {
    // Timing.
    /// The answer after this many extra milliseconds (on the SDK leg, 10 000 or more is past the SDK's CRes wait).
    case latency(milliseconds: Int)
    /// No answer at all: the connection is held open until the client gives up.
    case noAnswer
    /// The status line, headers and half the body, then the connection closes.
    case closeMidResponse

    // Protocol.
    /// An `Erro` with this code instead of the answer.
    case erro(ErrorCode)
    /// This HTTP status, with a plain-text body, instead of the answer.
    case httpStatus(Int)
    /// The answer with this Content-Type.
    case contentType(String)
    /// The answer's JSON cut short (on the SDK leg, inside the JWE).
    case malformedJSON
    /// A required field left out.
    case missingField(String)
    /// A field sent as `""`.
    case emptyField(String)
    /// Another `messageVersion` than the transaction's.
    case messageVersion(String)
    /// A transaction id replaced by an unknown one.
    case wrongTransactionID(String)
    /// `threeDSServerTransID` and `acsTransID` exchanged.
    case swappedTransactionIDs
    /// An unknown `messageExtension` flagged critical.
    case criticalExtension
    /// An unknown `messageExtension` with `criticalityIndicator` false: the receiver ignores it (Core specification:
    /// an extension a receiver does not recognise is ignored unless it is critical).
    case nonCriticalExtension
    /// `acsCounterAtoS` one ahead of the CReq's counter.
    case wrongCounter
    /// `acsCounterAtoS` of the CRes before (needs a second CRes).
    case repeatedCounter
    /// `challengeSelectInfo` as a list of strings instead of `[{"key":"label"}]`.
    case selectInfoShape
    /// A member no version defines, added: a receiver ignores it (Core specification: an unrecognised data element
    /// outside a critical extension is not an error). stripe/stripe-android PR 10590: ACSs send extra members in the
    /// final CRes, and an SDK that refused them broke.
    case unknownMember(String)
    /// An element another version of the message's table defines and the message's version does not, added with a value
    /// of its format there (``MessageRules/exampleFromAnotherVersion(of:besides:)``): what an ACS or DS written for
    /// another version sends. A receiver ignores it: no rule of Annex A refuses it, and a message is rejected for no
    /// validation the tables do not list (Annex A, A.2 "Field Edit Criteria", 2.3.1).
    case otherVersionMember(String)
    /// A conditional element of the message's version added where its condition does not hold, with a value of its format,
    /// where a rule has the receiver ignore it there (``FieldRule/ignoredOutsideItsCondition``): `transStatus` in a CRes
    /// that is not the final one (EMVCo FAQ Q15, Req 209). A receiver that refuses it or acts on it is wrong.
    case misplacedMember(String)
    /// A string element given a value outside the set the message's version defines for it (Annex A: a value not
    /// defined is invalid, Table A.4: 203 naming it): `acsUiType` 06 in a 2.2.0 CRes, `challengeCompletionInd` "Z".
    case fieldValue(String, String)
    /// An element sent as a JSON value of another type (`NegativeValue.ofAnotherType`: a string as a number, an object as a
    /// string): Annex A gives each element's format, Table A.4: 203 naming it.
    case fieldType(String)
    /// A string element cut or lengthened to this many characters (`NegativeValue.resized`), outside the lengths its format
    /// allows (Annex A "Length"): 203 naming it.
    case fieldLength(String, Int)
    /// A string element of its own length whose format is broken (`NegativeValue.FormatBreak`: a letter among digits, an
    /// http URL where https is wanted, a month 13, a base64 character): Annex A "Format", Table A.4: 203 naming it.
    case fieldFormat(String, NegativeValue.FormatBreak)
    /// An element written twice, with the same value (`NegativeValue.duplicating`): Table A.4: 204 naming it.
    case duplicateMember(String)

    // Crypto on `acsSignedContent`.
    case signedContent(SignedContentFault)
    /// `acsSignedContent` signed as it should be over a payload this content fault spoils (``SignedContentRules/acsPayload``:
    /// an element left out, of another type, written twice, a member no version defines).
    indirect case signedPayload(Fault)
    /// `acsSignedContent` signed as it should be under a protected header this content fault spoils
    /// (``SignedContentRules/jwsHeader``: `alg` left out or another, a member no one defines; `criticalExtension`: `crit`
    /// naming a parameter no one defines, RFC 7515 §4.1.11). The signature is the ACS key's own algorithm's.
    indirect case signedHeader(Fault)
    /// `acsSignedContent` signed as it should be over a payload whose `acsEphemPubKey` this content fault spoils
    /// (``SignedContentRules/ephemeralKey``: `kty` or `crv` left out or another, a member no one defines).
    indirect case signedKey(Fault)
    // Crypto on the CRes JWE.
    case cresEncryption(CResEncryptionFault)

    /// How long an SDK waits for a CRes before it gives up with Erro 402.
    public static let sdkCResWaitMilliseconds = 10_000

    /// Whether an answer with this fault never reaches an SDK as a body it reads: silence, a cut, an HTTP error, or a
    /// delay past its CRes wait.
    public var keepsTheAnswerFromTheSDK: Bool {
        switch self {
        case .noAnswer, .closeMidResponse, .httpStatus: true
        case .latency(let milliseconds): milliseconds >= Self.sdkCResWaitMilliseconds
        default: false
        }
    }

    /// The legs where this fault means something.
    public var legs: Set<FaultLeg> {
        switch self {
        // The RReq is a request: its content can be spoilt, not the way it is answered.
        case .malformedJSON, .missingField, .emptyField, .messageVersion, .wrongTransactionID, .swappedTransactionIDs, .criticalExtension, .unknownMember,
             .otherVersionMember, .misplacedMember, .fieldValue, .fieldType, .fieldLength, .fieldFormat, .duplicateMember, .nonCriticalExtension:
            Set(FaultLeg.allCases)
        case .latency, .noAnswer, .closeMidResponse, .erro, .httpStatus, .contentType:
            [.directoryServer, .accessControlServer, .sdk, .preparation]
        case .wrongCounter, .repeatedCounter, .selectInfoShape, .signedContent, .signedPayload, .signedHeader, .signedKey, .cresEncryption:
            [.sdk]
        }
    }

    /// Whether this fault acts on `acsSignedContent` (in the ARes) rather than on a CRes.
    public var isOnSignedContent: Bool {
        switch self {
        case .signedContent, .signedPayload, .signedHeader, .signedKey: true
        default: false
        }
    }

    /// Whether a correct SDK refuses the ARes's `acsSignedContent` this fault spoils (a runtime error, no CReq): every
    /// payload fault but a member no version defines, which it ignores (Core specification: an unrecognised data element
    /// is not an error).
    public var signedContentRefusedBySDK: Bool {
        switch self {
        case .signedContent(let fault): fault.refusedBySDK
        case .signedPayload(.unknownMember), .signedHeader(.unknownMember), .signedKey(.unknownMember): false
        case .signedPayload, .signedHeader, .signedKey: true
        default: false
        }
    }

    public var cresEncryptionFault: CResEncryptionFault? {
        if case .cresEncryption(let fault) = self { return fault }
        return nil
    }
}

/// How `acsSignedContent` is broken, or signed another valid way. SDKs must refuse each broken one as a runtime error
/// and take the valid one (``refusedBySDK``).
public enum SignedContentFault: String, Sendable, CaseIterable {
    /// The signature's bytes altered.
    case badSignature = "bad-signature"
    /// Signed by a key the x5c leaf does not certify.
    case untrustedKey = "key-not-in-chain"
    /// The leaf expired yesterday.
    case expiredCertificate = "expired-certificate"
    /// The leaf is valid from tomorrow.
    case notYetValidCertificate = "not-yet-valid-certificate"
    /// A chain to a root the SDK was not given.
    case otherRoot = "other-root"
    /// No `x5c` header.
    case missingX5C = "missing-x5c"
    /// `alg` `none` and no signature.
    case algNone = "alg-none"
    /// The leaf under an intermediate CA that `x5c` leaves out: no chain to the root can be built (an ACS that sent
    /// such a chain to Adyen's iOS SDK, adyen-3ds2-ios 26).
    case missingIntermediate = "missing-intermediate"
    /// A valid chain through an intermediate CA, `x5c` leaf, intermediate and root: DS PKIs have intermediates, and
    /// an SDK that checks the leaf against its roots alone refuses the chain of every such ACS.
    case throughIntermediate = "through-intermediate"

    /// Whether a correct SDK refuses it (a runtime error, no CReq).
    public var refusedBySDK: Bool { self != .throughIntermediate }
}

/// How a CRes JWE is broken. SDKs must answer each with Erro 302.
public enum CResEncryptionFault: String, Sendable, CaseIterable {
    /// The authentication tag altered.
    case badTag = "bad-tag"
    /// Encrypted under a key other than the channel's.
    case wrongKey = "wrong-key"
    /// `kid` other than the acsTransID.
    case wrongKid = "wrong-kid"
    /// Base64url parts with `=` padding.
    case base64Padding = "base64-padding"
}

/// A fault at its leg. On the SDK leg, `round` says which CRes (0 answers the first CReq);
/// `acsSignedContent` faults act on the ARes whatever the round.
public struct FaultInjection: Sendable, Equatable {
    public var leg: FaultLeg
    public var fault: Fault
    public var round: Int

    public init(_ fault: Fault, on leg: FaultLeg, round: Int = 0) {
        self.leg = leg
        self.fault = fault
        self.round = round
    }
}

extension [FaultInjection] {
    /// The faults on `leg` (for the SDK leg: on CRes `round`, or on the ARes when `round` is nil).
    public func on(_ leg: FaultLeg, round: Int? = nil) -> [Fault] {
        filter { $0.leg == leg && (round == nil || $0.round == round) }.map(\.fault)
    }
}
