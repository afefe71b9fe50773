public import EMV3DS
import Foundation
public import JSON

extension Fault {
    /// The ID of the unknown critical extension `criticalExtension` adds: what an Erro 202 about it gives as errorDetail.
    public static let criticalExtensionID = "HARNESS-CRITICAL-01"
    /// The header parameter `criticalExtension` names in `crit` on `acsSignedContent`'s header: one no one defines.
    public static let criticalHeaderParameter = "harnessCritical"
    /// The ID of the unknown extension `nonCriticalExtension` adds.
    public static let nonCriticalExtensionID = "HARNESS-NONCRITICAL-01"

    /// `message` with this fault's change to its content; faults that do not change the
    /// message itself (timing, transport, crypto) leave it as it is.
    /// `previousCounter` is the `acsCounterAtoS` of the CRes before, for `repeatedCounter`.
    public func apply(to message: JSONValue, previousCounter: String? = nil) -> JSONValue {
        var message = message
        switch self {
        case .missingField(let name):
            message.set(name, nil)
        case .emptyField(let name):
            message.set(name, .string(""))
        case .unknownMember(let name):
            message.set(name, .string("a member no version defines"))
        case .otherVersionMember(let name):
            if let value = Self.valueFromAnotherVersion(of: name, in: message) { message.set(name, value) }
        case .misplacedMember(let name):
            if let value = Self.valueOutsideItsCondition(of: name, in: message) { message.set(name, value) }
        case .fieldValue(let name, let value):
            message.set(name, .string(value))
        case .fieldType(let name):
            if let value = message[name] { message.set(name, NegativeValue.ofAnotherType(value)) }
        case .duplicateMember(let name):
            if let spoilt = NegativeValue.duplicating(name, in: message) { message = spoilt }
        case .fieldLength(let name, let length):
            if let text = message[name]?.stringValue { message.set(name, .string(NegativeValue.resized(text, to: length))) }
        case .fieldFormat(let name, let broken):
            if let text = message[name]?.stringValue, let spoilt = broken.apply(to: text) { message.set(name, .string(spoilt)) }
        case .messageVersion(let version):
            message.set("messageVersion", .string(version))
        case .wrongTransactionID(let field):
            message.set(field, .string(UUID().uuidString.lowercased()))
        case .swappedTransactionIDs:
            let server = message["threeDSServerTransID"], acs = message["acsTransID"]
            message.set("threeDSServerTransID", acs)
            message.set("acsTransID", server)
        case .criticalExtension, .nonCriticalExtension:
            let critical = self == .criticalExtension
            let ext: JSONValue = .object([("name", .string("Harness test extension")),
                                          ("id", .string(critical ? Self.criticalExtensionID : Self.nonCriticalExtensionID)),
                                          ("criticalityIndicator", .bool(critical)), ("data", .object([("test", .string("unknown"))]))])
            message.set("messageExtension", .array([ext]))
        case .wrongCounter:
            if let counter = message["acsCounterAtoS"]?.stringValue, let value = Int(counter) {
                message.set("acsCounterAtoS", .string(CReq.counterText((value + 1) % 1000)))
            }
        case .repeatedCounter:
            if let previousCounter { message.set("acsCounterAtoS", .string(previousCounter)) }
        case .selectInfoShape:
            if case .array(let options)? = message["challengeSelectInfo"] {
                message.set("challengeSelectInfo", .array(options.compactMap { $0.objectMembers?.first?.value }))
            }
        case .latency, .noAnswer, .closeMidResponse, .erro, .httpStatus, .contentType, .malformedJSON, .signedContent, .signedPayload, .signedHeader, .signedKey, .cresEncryption:
            break
        }
        return message
    }

    /// The value `misplacedMember` gives `name` in `message`: one of its format in the message's version, where a rule of that
    /// version has the receiver ignore it outside its condition. Nil, leaving the message as it is, when the message names
    /// no table, carries the element already (a final CRes's own transStatus), or no such rule covers it.
    static func valueOutsideItsCondition(of name: String, in message: JSONValue) -> JSONValue? {
        guard message[name] == nil, let (rules, version) = tableAndVersion(of: message),
              rules.ignoredOutsideItsCondition(name, in: version) != nil else { return nil }
        return rules.format(of: name, in: version)?.example
    }

    /// The value `otherVersionMember` gives `name` in `message`: one of its format in the newest other version of the
    /// message type's table that defines it. Nil, leaving the message as it is, when the message names no table, when its
    /// own version defines the element (an id or a label of its own is not another version's), when it carries the
    /// element already, or when no other version defines it.
    static func valueFromAnotherVersion(of name: String, in message: JSONValue) -> JSONValue? {
        guard message[name] == nil, let (rules, version) = tableAndVersion(of: message), !rules.defines(name, in: version) else { return nil }
        return rules.exampleFromAnotherVersion(of: name, besides: version)
    }

    /// The table of `message`'s type and its version, as its envelope names them; nil when it names no table or version.
    private static func tableAndVersion(of message: JSONValue) -> (MessageRules, MessageVersion)? {
        guard let type = message["messageType"]?.stringValue, let rules = MessageTables.named(type)?.rules,
              let version = message["messageVersion"]?.stringValue.flatMap(MessageVersion.init(rawValue:)) else { return nil }
        return (rules, version)
    }
}

extension Fault {
    /// The Erro a faulty party sends instead of `message` (an `erro` fault), with its ids: what the content faults of the
    /// same leg then spoil.
    public static func erroMessage(_ code: ErrorCode, insteadOf message: JSONValue, from component: ErrorComponent) -> ErroMessage {
        var erro = ErroMessage(messageVersion: message["messageVersion"]?.stringValue ?? MessageVersion.latest.rawValue, errorCode: code,
                               errorComponent: component, errorDetail: "harness fault",
                               errorMessageType: message["messageType"]?.stringValue,
                               threeDSServerTransID: message["threeDSServerTransID"]?.stringValue,
                               acsTransID: message["acsTransID"]?.stringValue, dsTransID: message["dsTransID"]?.stringValue,
                               sdkTransID: message["sdkTransID"]?.stringValue)
        erro.explain("a scenario's fault")
        return erro
    }

    /// The code of the Erro this fault sends instead of the answer, when it is one.
    public var erroInstead: ErrorCode? {
        if case .erro(let code) = self { return code }
        return nil
    }
}

extension [Fault] {
    /// The message with every content fault applied in order.
    public func apply(to message: JSONValue, previousCounter: String? = nil) -> JSONValue {
        reduce(message) { $1.apply(to: $0, previousCounter: previousCounter) }
    }

    /// The message as sent: content faults applied, then written, cut short to its first half
    /// for `malformedJSON`.
    public func write(_ message: JSONValue, previousCounter: String? = nil) -> (message: JSONValue, bytes: [UInt8]) {
        let spoiled = apply(to: message, previousCounter: previousCounter)
        let bytes = JSONWriter.write(spoiled)
        return (spoiled, contains(.malformedJSON) ? [UInt8](bytes.prefix(Swift.max(1, bytes.count / 2))) : bytes)
    }
}
