import EMV3DS
import JOSE
import JSON
public import Net

/// A route whose requests belong to a transaction a role keeps: registered with it as the route's tag, it says where a
/// request names its transaction, so that a layer over the roles (a cluster's instances, each holding some transactions)
/// finds the transaction of any request, whatever the form, without a table of its own.
public struct TransactionRoute: Sendable {
    /// The store's name of the records the key names (a role's, or the runs').
    public let role: String
    public let key: TransactionKey
    /// True when this instance holds the transaction in memory.
    public let holds: @Sendable (String) -> Bool
    /// Takes up a transaction this instance does not hold from its stored record, when one is there to take (a cluster's
    /// instance that died held it): what a request served here needs first. The layer over the roles calls it for the
    /// request's own transaction; a handler that goes on with another (the first of a decoupled fallback) takes that one up.
    public let takeUp: @Sendable (String) async -> Void

    public init(role: String, key: TransactionKey, holds: @escaping @Sendable (String) -> Bool,
                takeUp: @escaping @Sendable (String) async -> Void = { _ in }) {
        self.role = role
        self.key = key
        self.holds = holds
        self.takeUp = takeUp
    }
}

/// Where a request names its transaction.
public enum TransactionKey: Sendable {
    case pathParameter(String)
    /// A member of the JSON body (an RReq's `threeDSServerTransID` or `dsTransID`, a browser authentication's).
    case jsonMember(String)
    /// A member of the JSON body when the body is an Erro: a route whose requests name no transaction of their own (a
    /// PReq) but whose Erro about an answer names the request's (its `threeDSServerTransID`).
    case erroMember(String)
    /// An app CReq: a JWE whose protected header's `kid` is the acsTransID (EMV 3DS Core specification, 6.2.3.3).
    case jweKeyID
    /// A form field of base64url JSON (`threeDSMethodData`, `creq`, `cres`), and the member of it.
    case formJSON(field: String, member: String)
    /// An AReq that follows an earlier one up (2.3.1): SPC's second AReq (an SPC result, and a prior authentication of
    /// method 05) or a decoupled fallback's 3RI AReq (`threeRIInd` 19, method 02): that entry's `threeDSReqPriorRef`,
    /// the acsTransID it names, whose home holds what the follow-up needs (the SPC offer, the challenge that fell back).
    /// Any other AReq, whatever prior authentication it names, stays where it came.
    case followedUpTransaction
    /// The first of several keys the request has.
    case first([TransactionKey])

    public func value(in request: HTTPRequest, _ context: RequestContext) -> String? {
        switch self {
        case .pathParameter(let name):
            return context.parameters[name]
        case .jsonMember(let name):
            // Most bodies of such a route have no such member (an AReq has no dsTransID yet): found in the bytes first.
            guard ByteSearch.contains(request.body, "\"\(name)\"") else { return nil }
            return (try? JSONReader.parse(request.body).value)?[name]?.stringValue
        case .erroMember(let name):
            guard ByteSearch.contains(request.body, "\"Erro\""), let json = try? JSONReader.parse(request.body).value,
                  json["messageType"]?.stringValue == MessageType.erro.rawValue else { return nil }
            return json[name]?.stringValue
        case .jweKeyID:
            return JWE.keyID(compact: request.body)
        case .formJSON(let field, let member):
            guard let value = request.formFields?[field], let object = try? Base64URL.decodeObject(value).object else { return nil }
            return object[member]?.stringValue
        case .followedUpTransaction:
            guard ByteSearch.contains(request.body, "\"threeDSReqPriorRef\""), let areq = try? JSONReader.parse(request.body).value,
                  areq["messageVersion"]?.stringValue == MessageVersion.v2_3_1.rawValue else { return nil }
            let method: String
            if areq["deviceChannel"]?.stringValue == DeviceChannel.threeRI.rawValue, areq["threeRIInd"]?.stringValue == DecoupledFallback.threeRIInd {
                method = DecoupledFallback.priorAuthMethod
            } else if areq["spcIncompInd"] != nil
                        || (areq["threeDSRequestorAuthenticationInfo"]?.arrayValue ?? []).contains(where: { $0["threeDSReqAuthMethod"]?.stringValue == "09" }) {
                method = "05"
            } else {
                return nil
            }
            let entries = areq["threeDSRequestorPriorAuthenticationInfo"]?.arrayValue ?? []
            return entries.last { $0["threeDSReqPriorAuthMethod"]?.stringValue == method }?["threeDSReqPriorRef"]?.stringValue
        case .first(let keys):
            for key in keys { if let value = key.value(in: request, context) { return value } }
            return nil
        }
    }
}
