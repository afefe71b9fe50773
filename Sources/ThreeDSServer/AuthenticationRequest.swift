import EMV3DS
import JSON
import Messaging
import Net

/// The requestor's call to `POST /3ds-server/authenticate`: the card and purchase, and the
/// channel's own part: the SDK's authentication request parameters (the app channel), or what
/// the merchant's page collected of the cardholder's browser (the browser channel).
///
/// Field names are the EMV ones; `deviceChannel` ("01", "02", "03") or `channel` ("app",
/// "browser", "3RI") chooses the channel, the app by default.
struct AuthenticationRequest {
    var messageVersion: MessageVersion
    var messageCategory: String
    var acctNumber: String
    var channel: Channel
    /// Everything else that goes into the AReq as given (purchase, merchant, options).
    var passThrough: [(key: String, value: JSONValue)]
    /// Set by a profile that named the transaction before the AReq (the token style's
    /// fingerprint token carries it), or by a browser authentication that `prepare` named;
    /// otherwise the 3DS Server makes one.
    var threeDSServerTransID: String?
    /// The run case and the team the requestor named (`X-Harness-Case`, `X-Harness-Team`), passed on with the AReq to the DS.
    var tags = HarnessTags()

    enum Channel {
        case app(SDKParameters)
        case browser(BrowserParameters)
        /// 3DS Requestor Initiated: no cardholder, frictionless only; `threeRIInd` says why.
        case threeRI

        var deviceChannel: DeviceChannel {
            switch self {
            case .app: .app
            case .browser: .browser
            case .threeRI: .threeRI
            }
        }
    }

    /// AReq fields the requestor may set; the 3DS Server fills in defaults for the rest.
    static let passThroughFields: Set<String> = [
        "cardExpiryDate", "cardholderName", "email", "acctType", "purchaseAmount", "purchaseCurrency", "purchaseExponent",
        "purchaseDate", "merchantName", "acquirerBIN", "acquirerMerchantID", "mcc", "merchantCountryCode", "transType",
        "threeDSRequestorAuthenticationInd", "threeDSRequestorChallengeInd", "deviceRenderOptions", "sdkMaxTimeout",
        "messageExtension", "sdkType", "defaultSdkType", "splitSdkType", "sdkServerSignedContent",
        "acquirerCountryCode", "acquirerCountryCodeSource", "threeDSRequestorDecReqInd", "threeDSRequestorDecMaxTime",
        "recurringExpiry", "recurringFrequency", "recurringInd", "recurringAmount", "recurringCurrency", "recurringExponent",
        "purchaseInstalData", "threeDSRequestorPriorAuthenticationInfo", "threeRIInd",
    ]

    /// The AReq fields each channel alone uses, as the 3DS Server leg's table has them: an app's
    /// `sdkMaxTimeout` has no place in a browser's AReq, nor a browser's fields in an app's.
    static let channelOnlyFields: [DeviceChannel: Set<String>] = Dictionary(uniqueKeysWithValues: DeviceChannel.allCases.map { channel in
        (channel, AReqRules.fromThreeDSServer.fieldNames(usedOnlyIn: channel))
    })

    /// `passThroughFields` for each channel: without the fields only another channel uses.
    private static let passThroughFieldsByChannel: [DeviceChannel: Set<String>] = Dictionary(uniqueKeysWithValues: DeviceChannel.allCases.map { channel in
        (channel, channelOnlyFields.filter { $0.key != channel }.values.reduce(passThroughFields) { $0.subtracting($1) })
    })

    /// From the members of `json`; a profile passes what it decoded from its own shape.
    init(json: JSONValue) throws(HTTPError) {
        guard let members = json.objectMembers else { throw HTTPError(.badRequest, "body must be a JSON object") }
        var reader = BodyReader(json: json)
        let version = reader.text("messageVersion")
        if let known = MessageVersion(rawValue: version) {
            messageVersion = known
        } else {
            // Absent is "required" above; present, it must be a version: an empty one is not 2.2.0.
            if json["messageVersion"]?.stringValue != nil {
                reader.problems.append("messageVersion \"\(version)\" is not one of \(MessageVersion.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            messageVersion = .v2_2_0  // for the rest of the checks; the request is refused
        }
        messageCategory = reader.text("messageCategory", default: "01")
        let deviceChannel = try Self.deviceChannel(of: json)
        switch deviceChannel {
        case .browser:
            channel = .browser(BrowserParameters(reading: &reader, members: members))
            threeDSServerTransID = reader.optionalText("threeDSServerTransID")
        case .threeRI:
            channel = .threeRI
            if reader.optionalText("threeRIInd") == nil { reader.problems.append("threeRIInd is required for a 3RI authentication (deviceChannel 03)") }
            if messageVersion == .v2_1_0, messageCategory == MessageCategory.payment.rawValue {
                reader.problems.append("a 2.1.0 3RI authentication is non-payment only: messageCategory 02")
            }
        case .app:
            channel = .app(SDKParameters(reading: &reader))
        }
        acctNumber = reader.text("acctNumber", "pan")
        let passing = Self.passThroughFieldsByChannel[deviceChannel, default: []]
        passThrough = members.filter { passing.contains($0.key) }
        guard reader.problems.isEmpty else { throw HTTPError(.badRequest, reader.problems.joined(separator: "; ")) }
    }

    /// The channel the body names: `deviceChannel` as the AReq writes it, or `channel` by name; the app when neither.
    private static func deviceChannel(of json: JSONValue) throws(HTTPError) -> DeviceChannel {
        let chosen: DeviceChannel?
        if let code = json["deviceChannel"] {
            chosen = code.stringValue.flatMap(DeviceChannel.init(rawValue:))
        } else if let name = json["channel"] {
            chosen = DeviceChannel.allCases.first { [$0.name, $0.name.lowercased()].contains(name.stringValue) }
        } else {
            return .app
        }
        guard let chosen else {
            throw HTTPError(.badRequest, "deviceChannel must be 01 (app), 02 (browser) or 03 (3RI), or channel app, browser or 3RI")
        }
        return chosen
    }
}

/// The SDK's authentication request parameters, as the SDK hands them to the app.
///
/// The names the Android and iOS SDK APIs use are accepted beside the EMV ones
/// (`sdkTransactionId`, `sdkAppId`, `deviceData`, `sdkEphemeralPublicKey`), and the ephemeral
/// key may be a JWK object or a string holding one, as the SDKs return it.
struct SDKParameters {
    var sdkTransID: String
    var sdkAppID: String
    var sdkReferenceNumber: String
    var sdkEphemPubKey: JSONValue
    var sdkEncData: String

    fileprivate init(reading reader: inout BodyReader) {
        sdkTransID = reader.text("sdkTransID", "sdkTransactionId", "sdkTransactionID")
        sdkAppID = reader.text("sdkAppID", "sdkAppId")
        sdkReferenceNumber = reader.text("sdkReferenceNumber")
        sdkEncData = reader.text("sdkEncData", "deviceData")
        switch reader.json["sdkEphemPubKey"] ?? reader.json["sdkEphemeralPublicKey"] {
        case .object(let key)?:
            sdkEphemPubKey = .object(key)
        case .string(let text)?:
            // The SDK APIs return the key as a JSON string.
            if let key = try? JSONReader.parse(Array(text.utf8)).value, key.objectMembers != nil {
                sdkEphemPubKey = key
            } else {
                reader.problems.append("sdkEphemPubKey is a string that does not hold a JWK object")
                sdkEphemPubKey = .null
            }
        default:
            reader.problems.append("sdkEphemPubKey is required (a JWK object, or a string holding one)")
            sdkEphemPubKey = .null
        }
    }
}

/// What the merchant's page collected of the cardholder's browser, and where its challenge goes.
struct BrowserParameters {
    /// The browser's AReq fields as the page sent them, under their EMV names (`browserUserAgent`,
    /// `browserJavascriptEnabled`, `notificationURL`…): the table decides which a version
    /// requires and their formats, when the AReq is checked.
    var fields: [(key: String, value: JSONValue)]
    /// `threeDSCompInd` as the page sent it; a prepared transaction decides it instead.
    var threeDSCompInd: String?
    /// Not an AReq field: the CReq's, which the 3DS Server writes for the page.
    var challengeWindowSize: String
    /// A harness extension for a web view: where the notification page redirects the browser
    /// once the challenge ended (any scheme: `gatewaysdk://3dsecure`).
    var returnURL: String?
    /// The query parameter the returnURL gets the transaction's id under (`3DSecureId` for a gateway SDK's web view).
    var returnIdParameter: String?

    /// The browser fields the page may send: the channel's own fields of the table but the one the 3DS Server decides.
    private static let pageFields = AuthenticationRequest.channelOnlyFields[.browser, default: []].subtracting(["threeDSCompInd"])

    fileprivate init(reading reader: inout BodyReader, members: [(key: String, value: JSONValue)]) {
        fields = members.filter { Self.pageFields.contains($0.key) }
        threeDSCompInd = reader.optionalText("threeDSCompInd")
        challengeWindowSize = reader.optionalText("challengeWindowSize") ?? ChallengeWindowSize.fullScreen
        if !ChallengeWindowSize.allowed.contains(challengeWindowSize) {
            reader.problems.append("challengeWindowSize \"\(challengeWindowSize)\" is not one of \(ChallengeWindowSize.allowed.joined(separator: ", ")) (the CReq's)")
        }
        returnURL = reader.optionalText("returnURL")
        if let returnURL, !Self.isRedirectTarget(returnURL) {
            reader.problems.append("returnURL must be an absolute URL of at most 2048 printable ASCII characters (any scheme, e.g. gatewaysdk://3dsecure)")
        }
        returnIdParameter = reader.optionalText("returnIdParameter")
        if let returnIdParameter, let problem = ReturnRedirect.problem(withParameterName: returnIdParameter) { reader.problems.append(problem) }
    }

    /// Whether `url` can go in a `Location` header as it is: a scheme (RFC 3986 3.1), then
    /// printable ASCII only, so that no header can be injected through it.
    static func isRedirectTarget(_ url: String) -> Bool {
        guard url.utf8.count <= 2048, url.utf8.allSatisfy({ (0x21...0x7E).contains($0) }),
              let colon = url.firstIndex(of: ":"), let first = url.first, first.isLetter else { return false }
        return url[..<colon].allSatisfy { $0.isLetter || $0.isNumber || "+-.".contains($0) } && url.index(after: colon) < url.endIndex
    }
}

extension ThreeDSServer {
    /// Whether `url` may be a browser authentication's `returnURL`: the one check for every page
    /// that redirects a web view there (the demo's return page too).
    public static func isRedirectTarget(_ url: String) -> Bool { BrowserParameters.isRedirectTarget(url) }
}

/// Reads members of a request body, collecting every problem so that one 400 names them all.
private struct BodyReader {
    let json: JSONValue
    var problems: [String] = []

    /// The first of `names` present, as a string; without any, `fallback`, else a problem.
    mutating func text(_ names: String..., default fallback: String? = nil) -> String {
        if let found = first(of: names) { return found }
        if let fallback { return fallback }
        problems.append("\(names[0]) is required")
        return ""
    }

    /// The first of `names` present, as a string; nil when none is.
    mutating func optionalText(_ names: String...) -> String? { first(of: names) }

    /// A member present but not a string is a problem (and "" for the rest of the checks).
    private mutating func first(of names: [String]) -> String? {
        for name in names {
            guard let value = json[name] else { continue }
            if let text = value.stringValue { return text }
            problems.append("\(name) must be a string")
            return ""
        }
        return nil
    }
}

extension MessageRules {
    /// The fields this table uses on `channel` alone (its rules `only` on that channel).
    func fieldNames(usedOnlyIn channel: DeviceChannel) -> Set<String> {
        Set(fields.compactMap { rule in
            guard case .only(.channel(let channels), _, _) = rule.presence, channels == [channel] else { return nil }
            return rule.name
        })
    }
}
