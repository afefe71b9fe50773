import EMV3DS
import JSON
import Net

/// The requestor app's call to `POST /3ds-server/authenticate`: the SDK's authentication
/// request parameters as the SDK hands them to the app, and the card and purchase.
///
/// Field names are the EMV ones; the names the Android and iOS SDK APIs use are accepted too
/// (`sdkTransactionId`, `sdkAppId`, `deviceData`, `sdkEphemeralPublicKey`), and the ephemeral
/// key may be a JWK object or a string holding one, as the SDKs return it.
struct AuthenticationRequest {
    var messageVersion: MessageVersion
    var messageCategory: String
    var sdkTransID: String
    var sdkAppID: String
    var sdkReferenceNumber: String
    var sdkEphemPubKey: JSONValue
    var sdkEncData: String
    var acctNumber: String
    /// Everything else that goes into the AReq as given (purchase, merchant, options).
    var passThrough: [(key: String, value: JSONValue)]
    /// Set by a profile that named the transaction before the AReq (the token style's
    /// fingerprint token carries it); otherwise the 3DS Server makes one.
    var threeDSServerTransID: String?

    /// AReq fields the app may set; the 3DS Server fills in defaults for the rest.
    static let passThroughFields: Set<String> = [
        "cardExpiryDate", "cardholderName", "email", "acctType", "purchaseAmount", "purchaseCurrency", "purchaseExponent",
        "purchaseDate", "merchantName", "acquirerBIN", "acquirerMerchantID", "mcc", "merchantCountryCode", "transType",
        "threeDSRequestorAuthenticationInd", "threeDSRequestorChallengeInd", "deviceRenderOptions", "sdkMaxTimeout",
        "messageExtension", "sdkType", "defaultSdkType", "splitSdkType", "sdkServerSignedContent",
        "acquirerCountryCode", "acquirerCountryCodeSource", "threeDSRequestorDecReqInd", "threeDSRequestorDecMaxTime",
    ]

    /// From the members of `json`; a profile passes what it decoded from its own shape.
    init(json: JSONValue) throws(HTTPError) {
        guard let members = json.objectMembers else { throw HTTPError(.badRequest, "body must be a JSON object") }
        var problems: [String] = []
        func text(_ names: String..., default fallback: String? = nil) -> String {
            for name in names {
                guard let value = json[name] else { continue }
                if let text = value.stringValue { return text }
                problems.append("\(name) must be a string")
                return ""
            }
            if let fallback { return fallback }
            problems.append("\(names[0]) is required")
            return ""
        }
        let version = text("messageVersion")
        if let known = MessageVersion(rawValue: version) {
            messageVersion = known
        } else {
            // Absent is "required" above; present, it must be a version: an empty one is not 2.2.0.
            if json["messageVersion"]?.stringValue != nil {
                problems.append("messageVersion \"\(version)\" is not one of \(MessageVersion.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            messageVersion = .v2_2_0  // for the rest of the checks; the request is refused
        }
        messageCategory = text("messageCategory", default: "01")
        sdkTransID = text("sdkTransID", "sdkTransactionId", "sdkTransactionID")
        sdkAppID = text("sdkAppID", "sdkAppId")
        sdkReferenceNumber = text("sdkReferenceNumber")
        sdkEncData = text("sdkEncData", "deviceData")
        acctNumber = text("acctNumber", "pan")
        switch json["sdkEphemPubKey"] ?? json["sdkEphemeralPublicKey"] {
        case .object(let key)?:
            sdkEphemPubKey = .object(key)
        case .string(let text)?:
            // The SDK APIs return the key as a JSON string.
            if let key = try? JSONReader.parse(Array(text.utf8)).value, key.objectMembers != nil {
                sdkEphemPubKey = key
            } else {
                problems.append("sdkEphemPubKey is a string that does not hold a JWK object")
                sdkEphemPubKey = .null
            }
        default:
            problems.append("sdkEphemPubKey is required (a JWK object, or a string holding one)")
            sdkEphemPubKey = .null
        }
        passThrough = members.filter { Self.passThroughFields.contains($0.key) }
        guard problems.isEmpty else { throw HTTPError(.badRequest, problems.joined(separator: "; ")) }
    }
}
