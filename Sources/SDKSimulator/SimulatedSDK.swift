public import EMV3DS
public import EMVCrypto
public import Foundation
public import JOSE
public import JSON

/// The Directory Server an SDK is configured with: its id and encryption key (from its
/// certificate, as `pki export` prints them, or a bare JWK, as a token carries it).
public struct SDKDirectoryServer: Sendable {
    public let rid: String
    public let publicKey: PublicKey
    public let keyID: String?
    /// The scheme's name, for what is printed.
    public let name: String?

    public init(rid: String, certificate: Certificate, keyID: String? = nil, name: String? = nil) {
        self.init(rid: rid, publicKey: certificate.publicKey, keyID: keyID, name: name)
    }

    public init(rid: String, publicKey: PublicKey, keyID: String? = nil, name: String? = nil) {
        self.rid = rid
        self.publicKey = publicKey
        self.keyID = keyID
        self.name = name
    }
}

/// One transaction of a simulated SDK: what `createTransaction` and
/// `getAuthenticationRequestParameters` produce in a real one.
public struct SimulatedSDKTransaction: Sendable {
    public static let sdkReferenceNumber = "3DS_LOA_SDK_HARN_020200_00001"

    public let messageVersion: MessageVersion
    public let style: DeviceDataStyle
    public let sdkTransID: String
    public let sdkAppID: String
    /// The ephemeral key of the secure channel; its public half goes into the AReq.
    public let ephemeralKey: PrivateKey
    public let deviceData: String
    /// A Split-SDK's members (2.3.1, `sdkType` 02, `splitSdkType`, `sdkServerSignedContent`); empty for a default SDK.
    public private(set) var splitSDKMembers: [(key: String, value: JSONValue)] = []

    /// Creates the ids, the ephemeral key and the encrypted device data.
    public init(directoryServer: SDKDirectoryServer, messageVersion: MessageVersion, style: DeviceDataStyle,
                encryption: ContentEncryptionAlgorithm = .a128cbcHS256, sdkAppID: String = "5cd8c5e9-7d0c-4a1f-a0d4-2b1a1d8c7f10") throws(JOSEError) {
        self.messageVersion = messageVersion
        self.style = style
        self.sdkAppID = sdkAppID
        sdkTransID = UUID().uuidString.lowercased()
        ephemeralKey = try PrivateKey.generateP256()
        deviceData = try DeviceData.encrypt(Array(JSONWriter.string(Self.deviceInformation(style)).utf8), to: directoryServer.publicKey,
                                            directoryServerID: directoryServer.rid, style: style, encryption: encryption,
                                            kid: directoryServer.keyID)
    }

    /// Device information as the SDK specification lays it out (a small, plausible sample).
    static func deviceInformation(_ style: DeviceDataStyle) -> JSONValue {
        let android = style == .android
        return .object([
            ("DV", .string("1.4")),
            ("DD", .object([
                ("C001", .string(android ? "Android" : "iOS")),
                ("C002", .string(android ? "Pixel 8" : "iPhone15,2")),
                ("C003", .string(android ? "14" : "17.4")),
                ("C004", .string("en-US")),
                ("C005", .string("UTC")),
            ])),
            ("DPNA", .object([("C010", .string("RE03")), ("C011", .string("RE03"))])),
            ("SW", .array([])),
        ])
    }

    /// The authentication request parameters, as the SDK gives them to the app, with the
    /// card and purchase: the body of `POST /3ds-server/authenticate`.
    public func authenticateRequest(pan: String, amount: String = "1099", currency: String = "978", messageCategory: String = "01") -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("messageVersion", .string(messageVersion.rawValue)),
            ("sdkTransID", .string(sdkTransID)),
            ("sdkAppID", .string(sdkAppID)),
            ("sdkReferenceNumber", .string(Self.sdkReferenceNumber)),
            // The SDK APIs hand the key over as a JSON string.
            ("sdkEphemPubKey", .string(JSONWriter.string(ephemeralPublicKeyJSON))),
            ("deviceData", .string(deviceData)),
            ("acctNumber", .string(pan)),
            ("cardExpiryDate", .string("3012")),
            ("messageCategory", .string(messageCategory)),
        ]
        if messageCategory == "01" {
            members += [("purchaseAmount", .string(amount)), ("purchaseCurrency", .string(currency))]
        }
        return .object(members + splitSDKMembers)
    }

    /// Makes this a Split-SDK's transaction: its server signs it (SB 279 §6.2.2.3), the AReq says sdkType 02.
    public mutating func signAsSplitSDK(_ server: SplitSDKServer, at time: Date = Date()) throws(JOSEError) {
        let signed = try SDKServerSignedContent.sign(sdkReferenceNumber: Self.sdkReferenceNumber,
                                                     sdkTransID: server.signsAnotherTransaction ? UUID().uuidString.lowercased() : sdkTransID,
                                                     splitSdkServerID: server.serverID, at: time, key: server.key, chain: server.chain)
        splitSDKMembers = [
            ("sdkType", .string("02")),
            ("splitSdkType", .object(omittingAbsent: [("sdkVariant", .string(server.variant)), ("limitedInd", server.limited ? .string("Y") : nil)])),
            ("sdkServerSignedContent", .string(signed)),
        ]
    }

    /// The public half of the ephemeral key as the AReq's `sdkEphemPubKey` object.
    public var ephemeralPublicKeyJSON: JSONValue { ephemeralKey.publicKey.emvJWK }
}

/// The server half of a Split-SDK (2.3.1): its signing key and certificate under the DS CA, and the id the DS gave it.
public struct SplitSDKServer: Sendable {
    public let key: PrivateKey
    /// Its certificate first, then intermediates; not the DS CA's own (SB 279 §6.2.2.3).
    public let chain: [Certificate]
    public let serverID: String
    /// `splitSdkType.sdkVariant`: 01 native client, 02 browser, 03 shell.
    public var variant = "01"
    /// `splitSdkType.limitedInd` Y: a client of limited capabilities.
    public var limited = false
    /// A faulty server on purpose: it signs another sdkTransID than the AReq's (the DS refuses it, Erro 308).
    public var signsAnotherTransaction = false

    public init(key: PrivateKey, chain: [Certificate], serverID: String = "HARNESS-SPLIT-SDK-1") {
        self.key = key
        self.chain = chain
        self.serverID = serverID
    }
}
