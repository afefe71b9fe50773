public import EMV3DS
public import Foundation
public import JOSE
public import JSON

/// `sdkServerSignedContent` (2.3.1, `sdkType` 02): the Split-SDK server's JWS over the transaction, which the DS verifies
/// before anything else of a Split-SDK's AReq (EMVCo SB 279 §6.2.2.3-6.2.2.4, Req 390: Erro 308 when it does not verify).
/// The payload is `sdkReferenceNumber`, `sdkTransID`, `splitSdkServerID` and `sdkSignatureTimestamp`; the header has
/// alg PS256 or ES256 and `x5c`, the server's certificate (and intermediates) under the DS CA, without the DS CA's own.
public struct SDKServerSignedContent: SignedContent {
    public static let fieldName = "sdkServerSignedContent"
    public let sdkReferenceNumber: String
    public let sdkTransID: String
    public let splitSdkServerID: String
    /// UTC, YYYYMMDDHHMMSS (Annex A: 14 characters).
    public let sdkSignatureTimestamp: String
    /// The certificate that signed it (the first of `x5c`).
    public let signer: Certificate

    /// Why the DS refuses it: every case is Erro 308, Signature Verification Failure.
    public typealias Failure = SignedContentFailure<Self>

    /// How far ahead of the DS's clock a timestamp may be (clocks differ).
    static let allowedClockDifference: TimeInterval = 300

    /// Signs the four elements the specification names, as a Split-SDK server does.
    public static func sign(sdkReferenceNumber: String, sdkTransID: String, splitSdkServerID: String, at time: Date = Date(),
                            key: PrivateKey, chain: [Certificate]) throws(JOSEError) -> String {
        let payload = JSONWriter.write(.object([
            ("sdkReferenceNumber", .string(sdkReferenceNumber)), ("sdkSignatureTimestamp", .string(UTCTime.purchaseDate(time))),
            ("sdkTransID", .string(sdkTransID)), ("splitSdkServerID", .string(splitSdkServerID)),
        ]))
        return try JWS.sign(payload: payload, key: key, algorithm: .emv(for: key.kind), certificates: chain)
    }

    /// Verifies as the DS does: PS256 or ES256, the `x5c` chain up to the DS CA root, the signature, then the payload.
    public init(verifying compact: String, with verifier: CertificateVerifier, at time: Date = Date()) throws(Failure) {
        let payload: JSONValue
        (payload, _, signer) = try Self.verified(compact, with: verifier, at: time)
        func member(_ name: String, _ lengths: ClosedRange<Int>) throws(Failure) -> String {
            guard let text = payload[name]?.stringValue, lengths.contains(text.count) else {
                throw .payload("\(name) is required, a string of \(lengths.lowerBound)-\(lengths.upperBound) characters")
            }
            return text
        }
        sdkReferenceNumber = try member("sdkReferenceNumber", 1...32)
        sdkTransID = try member("sdkTransID", 36...36)
        splitSdkServerID = try member("splitSdkServerID", 1...32)
        sdkSignatureTimestamp = try member("sdkSignatureTimestamp", 14...14)
        guard let signed = UTCTime.date(purchaseDate: sdkSignatureTimestamp) else { throw .payload("sdkSignatureTimestamp is not a UTC date and time YYYYMMDDHHMMSS") }
        guard signed.timeIntervalSince(time) <= Self.allowedClockDifference else {
            throw .payload("sdkSignatureTimestamp \(sdkSignatureTimestamp) is ahead of the DS's UTC clock")
        }
    }

    /// Why it does not vouch for the AReq that carries it; nil when it names the AReq's SDK and transaction.
    public func mismatch(sdkReferenceNumber areqReference: String?, sdkTransID areqTransID: String?) -> String? {
        if sdkTransID != areqTransID { return "its sdkTransID \(sdkTransID) is not the AReq's \(areqTransID ?? "(none)")" }
        if sdkReferenceNumber != areqReference { return "its sdkReferenceNumber \(sdkReferenceNumber) is not the AReq's \(areqReference ?? "(none)")" }
        return nil
    }
}
