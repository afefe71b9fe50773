public import EMV3DS
public import JOSE
public import ThreeDSServer

/// One Directory Server the harness plays: its RID (for the test PKI), the card ranges
/// routed to it, its ECIs, and optionally an ACS elsewhere.
public struct SchemeConfiguration: Sendable, Equatable {
    public var rid: String
    public var name: String
    /// Leading digits: "4", "51-55", "2221-2720".
    public var cardRanges: [String]
    public var authenticatedECI = "05"
    public var attemptedECI = "06"
    /// The ACS for these ranges; nil means the harness's own.
    public var acsURL: String?
    /// The ACS signing certificate for `acsSignedContent`: "rsa" (PS256) or "ec" (ES256).
    public var acsSigning = "rsa"

    public init(rid: String, name: String, cardRanges: [String], authenticatedECI: String = "05", attemptedECI: String = "06") {
        self.rid = rid
        self.name = name
        self.cardRanges = cardRanges
        self.authenticatedECI = authenticatedECI
        self.attemptedECI = attemptedECI
    }

    /// The schemes of `DirectoryServerProfile.defaults` with their usual card ranges.
    public static let defaults: [SchemeConfiguration] = [
        SchemeConfiguration(rid: "A000000003", name: "Visa", cardRanges: ["4"]),
        SchemeConfiguration(rid: "A000000004", name: "Mastercard", cardRanges: ["51-55", "2221-2720"], authenticatedECI: "02", attemptedECI: "01"),
        SchemeConfiguration(rid: "A000000025", name: "American Express", cardRanges: ["34", "37"]),
        SchemeConfiguration(rid: "A000000152", name: "Discover", cardRanges: ["6011", "644-649", "65"]),
        SchemeConfiguration(rid: "A000000065", name: "JCB", cardRanges: ["35"]),
        SchemeConfiguration(rid: "A000000333", name: "UnionPay", cardRanges: ["62"]),
        SchemeConfiguration(rid: "F000000001", name: "Harness Test", cardRanges: ["9"]),
    ]

    public var profile: DirectoryServerProfile { DirectoryServerProfile(rid: rid, name: name) }

    /// The scheme for the roles; the ranges were checked when the file was read.
    public var scheme: PaymentScheme {
        PaymentScheme(rid: rid, name: name, cardRanges: cardRanges.compactMap(CardRange.init),
                      authenticatedECI: authenticatedECI, attemptedECI: attemptedECI, acsURL: acsURL)
    }
}

/// `directoryServer:` settings of the DS role.
public struct DirectoryServerConfiguration: Sendable, Equatable {
    public var referenceNumber = "3DS_LOA_DIS_HARN_020200_00001"
    /// For a PAN in no card range: "N" or "U" (an ARes with `outOfRangeReason`), or "erro" (Erro 305).
    public var outOfRange = "N"
    public var outOfRangeReason = "13"
    /// How long the DS waits for the ACS's ARes before answering the 3DS Server Erro 405.
    public var acsTimeoutMs: UInt64 = 10_000
    public init() {}
}

/// `accessControlServer:` settings of the ACS role.
public struct AccessControlServerConfiguration: Sendable, Equatable {
    public var referenceNumber = "3DS_LOA_ACS_HARN_020200_00001"
    public var operatorID = "HARNESS-ACS-OPERATOR"
    /// The acsURL given to SDKs; nil means this harness's `/acs/challenge` (HTTPS when it listens on HTTPS).
    public var challengeURL: String?
    /// Seconds a challenge may take before it ends as timed out.
    public var challengeTimeout: Double = 600
    public init() {}
}

extension SchemeConfiguration: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable { case rid, name, cardRanges, authenticatedECI, attemptedECI, acsURL, acsSigning }

    public init(from decoder: Decoder) throws {
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        self.init(rid: try container.decode(String.self, forKey: .rid), name: try container.decode(String.self, forKey: .name),
                  cardRanges: try container.decodeIfPresent([String].self, forKey: .cardRanges) ?? [])
        authenticatedECI = try container.decodeIfPresent(String.self, forKey: .authenticatedECI) ?? authenticatedECI
        attemptedECI = try container.decodeIfPresent(String.self, forKey: .attemptedECI) ?? attemptedECI
        acsURL = try container.decodeIfPresent(String.self, forKey: .acsURL)
        acsSigning = try container.decodeIfPresent(String.self, forKey: .acsSigning) ?? acsSigning
    }
}

extension DirectoryServerConfiguration: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable { case referenceNumber, outOfRange, outOfRangeReason, acsTimeoutMs }

    public init(from decoder: Decoder) throws {
        self.init()
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        referenceNumber = try container.decodeIfPresent(String.self, forKey: .referenceNumber) ?? referenceNumber
        outOfRange = try container.decodeIfPresent(String.self, forKey: .outOfRange) ?? outOfRange
        outOfRangeReason = try container.decodeIfPresent(String.self, forKey: .outOfRangeReason) ?? outOfRangeReason
        acsTimeoutMs = try container.decodeIfPresent(UInt64.self, forKey: .acsTimeoutMs) ?? acsTimeoutMs
    }
}

extension AccessControlServerConfiguration: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable { case referenceNumber, operatorID, challengeURL, challengeTimeout }

    public init(from decoder: Decoder) throws {
        self.init()
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        referenceNumber = try container.decodeIfPresent(String.self, forKey: .referenceNumber) ?? referenceNumber
        operatorID = try container.decodeIfPresent(String.self, forKey: .operatorID) ?? operatorID
        challengeURL = try container.decodeIfPresent(String.self, forKey: .challengeURL)
        challengeTimeout = try container.decodeIfPresent(Double.self, forKey: .challengeTimeout) ?? challengeTimeout
    }
}

// `threeDSServer:` is read straight into the role's settings.
extension ThreeDSServerSettings: Codable {
    private enum CodingKeys: String, CodingKey, CaseIterable {
        case referenceNumber, operatorID, requestorID, requestorName, requestorURL, directoryServerURL, directoryServerTimeoutMs,
             acquirerBIN, acquirerMerchantID, mcc, merchantCountryCode
    }

    public init(from decoder: Decoder) throws {
        self.init()
        let container = try decoder.strictContainer(keyedBy: CodingKeys.self)
        referenceNumber = try container.decodeIfPresent(String.self, forKey: .referenceNumber) ?? referenceNumber
        operatorID = try container.decodeIfPresent(String.self, forKey: .operatorID) ?? operatorID
        requestorID = try container.decodeIfPresent(String.self, forKey: .requestorID) ?? requestorID
        requestorName = try container.decodeIfPresent(String.self, forKey: .requestorName) ?? requestorName
        requestorURL = try container.decodeIfPresent(String.self, forKey: .requestorURL) ?? requestorURL
        directoryServerURL = try container.decodeIfPresent(String.self, forKey: .directoryServerURL)
        directoryServerTimeoutMs = try container.decodeIfPresent(UInt64.self, forKey: .directoryServerTimeoutMs) ?? directoryServerTimeoutMs
        acquirerBIN = try container.decodeIfPresent(String.self, forKey: .acquirerBIN) ?? acquirerBIN
        acquirerMerchantID = try container.decodeIfPresent(String.self, forKey: .acquirerMerchantID) ?? acquirerMerchantID
        mcc = try container.decodeIfPresent(String.self, forKey: .mcc) ?? mcc
        merchantCountryCode = try container.decodeIfPresent(String.self, forKey: .merchantCountryCode) ?? merchantCountryCode
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(referenceNumber, forKey: .referenceNumber)
        try container.encode(operatorID, forKey: .operatorID)
        try container.encode(requestorID, forKey: .requestorID)
        try container.encode(requestorName, forKey: .requestorName)
        try container.encode(requestorURL, forKey: .requestorURL)
        try container.encodeIfPresent(directoryServerURL, forKey: .directoryServerURL)
        try container.encode(directoryServerTimeoutMs, forKey: .directoryServerTimeoutMs)
        try container.encode(acquirerBIN, forKey: .acquirerBIN)
        try container.encode(acquirerMerchantID, forKey: .acquirerMerchantID)
        try container.encode(mcc, forKey: .mcc)
        try container.encode(merchantCountryCode, forKey: .merchantCountryCode)
    }
}
