import AccessControlServer
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
    /// The ACS signing certificate for `acsSignedContent`: rsa (PS256) or ec (ES256).
    public var acsSigning = TestPKI.KeyVariant.rsa

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
    /// For a PAN in no card range: N or U (an ARes with `outOfRangeReason`), or erro (Erro 305).
    public var outOfRange = OutOfRange.notAuthenticated
    public var outOfRangeReason = "13"
    /// How long the DS waits for the ACS's ARes before answering the 3DS Server Erro 405.
    public var acsTimeoutMs: UInt64 = 10_000
    public init() {}
}

extension DirectoryServerConfiguration {
    /// `directoryServer.outOfRange`: the DS's answer for a PAN in no card range.
    public enum OutOfRange: String, ConfigurationChoice {
        case notAuthenticated = "N"
        case unavailable = "U"
        case erro
    }
}

extension TestPKI.KeyVariant: ConfigurationChoice {}

/// `accessControlServer:` settings of the ACS role.
public struct AccessControlServerConfiguration: Sendable, Equatable {
    public var referenceNumber = "3DS_LOA_ACS_HARN_020200_00001"
    public var operatorID = "HARNESS-ACS-OPERATOR"
    /// The acsURL given to SDKs; nil means this harness's `/acs/challenge` (HTTPS when it listens on HTTPS).
    public var challengeURL: String?
    /// Seconds a challenge may take before it ends as timed out.
    public var challengeTimeout = AccessControlServerSettings.defaultChallengeTimeout
    /// An RReq that surely did not reach the DS is sent again this many times, the first after this many seconds.
    public var rreqRetries = 3
    public var rreqRetrySeconds: Double = 2
    /// The folder of the browser challenge's page templates (`acs-challenge.html`, `acs-final.html`).
    public var pageTemplates = "config/templates"
    public init() {}
}

extension SchemeConfiguration: KeyTableDecodable, Encodable {
    /// Only for reading: `rid` and `name` are required keys.
    public init() { self.init(rid: "", name: "", cardRanges: []) }

    public static var keys: [TableKey<Self>] {
        [.key("rid", \.rid, required: true), .key("name", \.name, required: true), .key("cardRanges", \.cardRanges),
         .key("authenticatedECI", \.authenticatedECI), .key("attemptedECI", \.attemptedECI), .key("acsURL", \.acsURL),
         .key("acsSigning", \.acsSigning)]
    }
}

extension DirectoryServerConfiguration: KeyTableDecodable, Encodable {
    public static var keys: [TableKey<Self>] {
        [.key("referenceNumber", \.referenceNumber), .key("outOfRange", \.outOfRange), .key("outOfRangeReason", \.outOfRangeReason),
         .key("acsTimeoutMs", \.acsTimeoutMs)]
    }
}

extension AccessControlServerConfiguration: KeyTableDecodable, Encodable {
    public static var keys: [TableKey<Self>] {
        [.key("referenceNumber", \.referenceNumber), .key("operatorID", \.operatorID), .key("challengeURL", \.challengeURL),
         .key("challengeTimeout", \.challengeTimeout), .key("rreqRetries", \.rreqRetries), .key("rreqRetrySeconds", \.rreqRetrySeconds),
         .key("pageTemplates", \.pageTemplates)]
    }
}

// `threeDSServer:` is read straight into the role's settings.
extension ThreeDSServerSettings: KeyTableDecodable {
    public static var keys: [TableKey<Self>] {
        [.key("referenceNumber", \.referenceNumber), .key("operatorID", \.operatorID), .key("requestorID", \.requestorID),
         .key("requestorName", \.requestorName), .key("requestorURL", \.requestorURL), .key("directoryServerURL", \.directoryServerURL),
         .key("directoryServerTimeoutMs", \.directoryServerTimeoutMs),
         .key("cardRangeRefreshSeconds", \.cardRangeRefreshSeconds), .key("spcResultTimeout", \.spcResultTimeout), .key("acquirerBIN", \.acquirerBIN),
         .key("acquirerMerchantID", \.acquirerMerchantID), .key("mcc", \.mcc), .key("merchantCountryCode", \.merchantCountryCode)]
    }
}
