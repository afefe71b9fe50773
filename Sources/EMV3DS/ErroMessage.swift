public import JSON

/// An EMV 3DS `Erro` message: what a party sends instead of an answer it cannot give.
public struct ErroMessage: Sendable, Equatable {
    public var messageVersion: String
    public var errorCode: ErrorCode
    public var errorComponent: ErrorComponent
    public var errorDescription: String
    /// What was wrong, e.g. the name of the offending field.
    public var errorDetail: String
    /// The type of the message that caused the error, when known.
    public var errorMessageType: String?
    public var threeDSServerTransID: String?
    public var acsTransID: String?
    public var dsTransID: String?
    public var sdkTransID: String?

    public init(messageVersion: String, errorCode: ErrorCode, errorComponent: ErrorComponent, errorDetail: String,
                errorMessageType: String? = nil, threeDSServerTransID: String? = nil, acsTransID: String? = nil,
                dsTransID: String? = nil, sdkTransID: String? = nil) {
        self.messageVersion = messageVersion
        self.errorCode = errorCode
        self.errorComponent = errorComponent
        self.errorDescription = errorCode.description
        self.errorDetail = errorDetail
        self.errorMessageType = errorMessageType
        self.threeDSServerTransID = threeDSServerTransID
        self.acsTransID = acsTransID
        self.dsTransID = dsTransID
        self.sdkTransID = sdkTransID
    }

    /// Sets `errorDescription` to the code's description followed by `reason` (2048 characters at most).
    public mutating func explain(_ reason: String) {
        errorDescription = String("\(errorCode.description): \(reason)".prefix(2048))
    }

    /// The message as JSON. Absent ids are omitted, never sent as "" or null (SDKs answer
    /// 203 to an optional field sent empty).
    public var json: JSONValue {
        func present(_ value: String?) -> JSONValue? { value.flatMap { $0.isEmpty ? nil : .string($0) } }
        let members: [(String, JSONValue?)] = [
            ("messageType", .string(MessageType.erro.rawValue)),
            ("messageVersion", .string(messageVersion)),
            ("errorCode", .string(errorCode.rawValue)),
            ("errorComponent", .string(errorComponent.rawValue)),
            ("errorDescription", .string(errorDescription)),
            // errorDetail is required: a code with nothing to name says so.
            ("errorDetail", .string(errorDetail.isEmpty ? "none" : errorDetail)),
            ("errorMessageType", present(errorMessageType)),
            ("threeDSServerTransID", present(threeDSServerTransID)),
            ("acsTransID", present(acsTransID)),
            ("dsTransID", present(dsTransID)),
            ("sdkTransID", present(sdkTransID)),
        ]
        // Erro's table is the same in every version; its messageVersion may be one the harness does not speak.
        return ErroRules.rules.build(members, version: MessageVersion(rawValue: messageVersion) ?? .latest)
    }

    /// Reads an Erro message (as an SDK or peer sends it).
    public init(json: JSONValue) throws(MessageError) {
        func field(_ name: String) throws(MessageError) -> String {
            guard let value = json[name]?.stringValue else { throw .missing(name) }
            return value
        }
        guard try field("messageType") == MessageType.erro.rawValue else { throw .invalid("messageType", "not Erro") }
        guard let code = ErrorCode(rawValue: try field("errorCode")) else { throw .invalid("errorCode", "unknown code") }
        guard let component = ErrorComponent(rawValue: try field("errorComponent")) else { throw .invalid("errorComponent", "not C, S, D or A") }
        self.init(messageVersion: try field("messageVersion"), errorCode: code, errorComponent: component,
                  errorDetail: json["errorDetail"]?.stringValue ?? "", errorMessageType: json["errorMessageType"]?.stringValue,
                  threeDSServerTransID: json["threeDSServerTransID"]?.stringValue, acsTransID: json["acsTransID"]?.stringValue,
                  dsTransID: json["dsTransID"]?.stringValue, sdkTransID: json["sdkTransID"]?.stringValue)
        errorDescription = json["errorDescription"]?.stringValue ?? code.description
    }
}

/// A message that cannot be read as the type expected.
public enum MessageError: Error, Equatable, Sendable {
    case missing(String)
    case invalid(String, String)

    /// The error as Annex A names it: a required element missing (201), or one not in its format (203).
    public var violation: Violation {
        switch self {
        case .missing(let field): Violation(field: field, code: .requiredElementMissing, reason: "is required")
        case .invalid(let field, let reason): Violation(field: field, code: .formatInvalid, reason: reason)
        }
    }
}
