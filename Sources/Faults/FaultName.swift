import EMV3DS
import JOSE

/// Faults as scenario files name them: the one table of names both ways.
extension Fault {
    /// Why a fault cannot be read: its name, or its value.
    public enum SpecError: Error, Equatable {
        case name(String)
        case value(String)
    }

    /// Every fault name, with what its value is (nil: it takes none).
    public static let names: [String: String?] = [
        "latency": "milliseconds", "no-answer": nil, "close-mid-response": nil, "erro": "error code", "http-status": "status code",
        "content-type": "media type", "malformed-json": nil, "missing-field": "field name", "empty-field": "field name",
        "message-version": "version", "wrong-id": "id field name", "swapped-ids": nil, "critical-extension": nil, "noncritical-extension": nil,
        "wrong-counter": nil, "repeated-counter": nil, "select-info-shape": nil, "unknown-member": "member name",
        "other-version-member": "field name", "misplaced-member": "conditional field name",
        "field-value": "field name=value", "field-type": "field name", "field-length": "field name=length", "field-format": "field name=break",
        "duplicate-member": "field name", "signed-payload": "content fault and its value", "signed-header": "header fault and its value",
        "signed-key": "key fault and its value",
    ].merging(SignedContentFault.allCases.map { ($0.rawValue, nil) }, uniquingKeysWith: { a, _ in a })
     .merging(CResEncryptionFault.allCases.map { ("cres-" + $0.rawValue, nil) }, uniquingKeysWith: { a, _ in a })

    /// The tables of the messages the harness sends a party under test, which content faults spoil.
    static let spoiltMessages = ["CRes", "ARes", "RReq", "PRes", "Erro"].compactMap { MessageTables.named($0) }

    /// The faults that spoil `acsSignedContent`'s payload under `signed-payload`: those that change a JSON object's members.
    static let payloadFaultNames: Set<String> = ["missing-field", "empty-field", "unknown-member", "field-value", "field-type", "field-length",
                                                  "field-format", "duplicate-member"]

    /// The faults that spoil `acsSignedContent`'s protected header under `signed-header`.
    static let headerFaultNames: Set<String> = ["missing-field", "field-value", "unknown-member", "critical-extension"]

    /// The faults that spoil the payload's `acsEphemPubKey` under `signed-key`.
    static let keyFaultNames: Set<String> = ["missing-field", "field-value", "unknown-member"]

    /// Refuses a fault on `acsSignedContent` whose expectation would be wrong: an element left out or given a value that
    /// `rules` does not have or allows (nothing would be broken), or a member said to be no one's that `rules` or the
    /// `registered` names define (a recipient may act on it).
    static func check(_ fault: Fault, spoiling rules: MessageRules, registered: Set<String>, in part: String) throws(SpecError) {
        let names = Set(rules.fields.map(\.name))
        switch fault {
        case .missingField(let name), .emptyField(let name), .fieldType(let name), .fieldLength(let name, _), .fieldFormat(let name, _),
             .duplicateMember(let name):
            guard names.contains(name) else { throw .value("\(name) is not an element of \(part): one of \(names.sorted().joined(separator: ", "))") }
        case .fieldValue(let name, let value):
            guard names.contains(name) else { throw .value("\(name) is not an element of \(part): one of \(names.sorted().joined(separator: ", "))") }
            if let allowed = rules.allowedValues(of: name, in: .v2_1_0), allowed.contains(value) {
                throw .value("\(value) is a value \(name) allows: nothing would be broken")
            }
        case .unknownMember(let name):
            guard !names.contains(name), !registered.contains(name) else { throw .value("\(name) is defined in \(part): not a member no one defines") }
        default:
            break
        }
    }

    /// The content fault `value` names with its own value ("missing-field alg"): one of `names`, held to `rules` (``check``).
    private static func contentFault(_ value: String, one names: Set<String>, kind: String, spoiling rules: MessageRules,
                                     registered: Set<String>, in part: String) throws(SpecError) -> Fault {
        let parts = value.split(separator: " ", maxSplits: 1).map(String.init)
        guard names.contains(parts.first ?? "") else {
            throw .value("\"\(value)\" is not a \(kind) fault: one of \(names.sorted().joined(separator: ", "))")
        }
        let inner = try Fault(name: parts.first ?? "", value: parts.count > 1 ? parts[1] : nil)
        try check(inner, spoiling: rules, registered: registered, in: part)
        return inner
    }

    /// The fault named `name`, with its `value` checked.
    public init(name: String, value: String?) throws(SpecError) {
        guard let valueName = Self.names[name] else {
            throw .name("\"\(name)\" is not one of \(Self.names.keys.sorted().joined(separator: ", "))")
        }
        if let valueName, value == nil { throw .value("required for \(name): the \(valueName)") }
        if valueName == nil, value != nil { throw .value("\(name) takes no value") }
        let value = value ?? ""
        switch name {
        case "latency":
            guard let milliseconds = Int(value), (0...600_000).contains(milliseconds) else { throw .value("\"\(value)\" is not 0-600000 milliseconds") }
            self = .latency(milliseconds: milliseconds)
        case "no-answer": self = .noAnswer
        case "close-mid-response": self = .closeMidResponse
        case "erro":
            guard let code = ErrorCode(rawValue: value) else { throw .value("\"\(value)\" is not an EMV error code") }
            self = .erro(code)
        case "http-status":
            guard let code = Int(value), (300...599).contains(code) else { throw .value("\"\(value)\" is not an HTTP status 300-599") }
            self = .httpStatus(code)
        case "content-type": self = .contentType(value)
        case "malformed-json": self = .malformedJSON
        case "missing-field": self = .missingField(value)
        case "empty-field": self = .emptyField(value)
        case "message-version": self = .messageVersion(value)
        case "wrong-id":
            guard TransactionIDs.names.contains(value) else {
                throw .value("\"\(value)\" is not threeDSServerTransID, acsTransID, dsTransID or sdkTransID")
            }
            self = .wrongTransactionID(value)
        case "swapped-ids": self = .swappedTransactionIDs
        case "critical-extension": self = .criticalExtension
        case "noncritical-extension": self = .nonCriticalExtension
        case "wrong-counter": self = .wrongCounter
        case "repeated-counter": self = .repeatedCounter
        case "select-info-shape": self = .selectInfoShape
        case "unknown-member": self = .unknownMember(value)
        case "other-version-member":
            guard Self.spoiltMessages.contains(where: { $0.rules.fields.contains { $0.name == value } }) else {
                throw .value("\(value) is an element of no message the harness sends: unknown-member adds a member no one defines")
            }
            self = .otherVersionMember(value)
        case "misplaced-member":
            let ignored = Set(Self.spoiltMessages.flatMap { $0.rules.fields.filter { $0.ignoredOutsideItsCondition != nil }.map(\.name) })
            guard ignored.contains(value) else {
                throw .value("\(value) is no element a rule has the receiver ignore where its condition does not hold: one of \(ignored.sorted().joined(separator: ", "))")
            }
            self = .misplacedMember(value)
        case "field-value":
            guard let equals = value.firstIndex(of: "="), equals != value.startIndex else {
                throw .value("\"\(value)\" is not field=value")
            }
            self = .fieldValue(String(value[..<equals]), String(value[value.index(after: equals)...]))
        case "field-type": self = .fieldType(value)
        case "duplicate-member": self = .duplicateMember(value)
        case "field-length":
            guard let equals = value.firstIndex(of: "="), equals != value.startIndex,
                  let length = Int(value[value.index(after: equals)...]), (0...100_000).contains(length) else {
                throw .value("\"\(value)\" is not field=length (0-100000 characters)")
            }
            self = .fieldLength(String(value[..<equals]), length)
        case "field-format":
            guard let equals = value.firstIndex(of: "="), equals != value.startIndex,
                  let broken = NegativeValue.FormatBreak(rawValue: String(value[value.index(after: equals)...])) else {
                throw .value("\"\(value)\" is not field=break (\(NegativeValue.FormatBreak.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            self = .fieldFormat(String(value[..<equals]), broken)
        case "signed-payload":
            self = .signedPayload(try Self.contentFault(value, one: Self.payloadFaultNames, kind: "payload",
                                                        spoiling: SignedContentRules.acsPayload, registered: [], in: "the payload"))
        case "signed-header":
            self = .signedHeader(try Self.contentFault(value, one: Self.headerFaultNames, kind: "header", spoiling: SignedContentRules.jwsHeader,
                                                       registered: JWSHeader.registeredParameters, in: "the header"))
        case "signed-key":
            self = .signedKey(try Self.contentFault(value, one: Self.keyFaultNames, kind: "key", spoiling: SignedContentRules.ephemeralKey,
                                                    registered: SignedContentRules.registeredKeyParameters, in: "acsEphemPubKey"))
        default:
            if let signed = SignedContentFault(rawValue: name) {
                self = .signedContent(signed)
            } else if name.hasPrefix("cres-"), let cres = CResEncryptionFault(rawValue: String(name.dropFirst(5))) {
                self = .cresEncryption(cres)
            } else {
                throw .name("\"\(name)\" is not a known fault")
            }
        }
    }

    /// The fault as the scenario file names it, with its value: "erro 203", "cres-bad-tag".
    public var name: String {
        switch self {
        case .latency(let milliseconds): "latency \(milliseconds)"
        case .noAnswer: "no-answer"
        case .closeMidResponse: "close-mid-response"
        case .erro(let code): "erro \(code.rawValue)"
        case .httpStatus(let code): "http-status \(code)"
        case .contentType(let value): "content-type \(value)"
        case .malformedJSON: "malformed-json"
        case .missingField(let name): "missing-field \(name)"
        case .emptyField(let name): "empty-field \(name)"
        case .messageVersion(let version): "message-version \(version)"
        case .wrongTransactionID(let field): "wrong-id \(field)"
        case .swappedTransactionIDs: "swapped-ids"
        case .criticalExtension: "critical-extension"
        case .nonCriticalExtension: "noncritical-extension"
        case .wrongCounter: "wrong-counter"
        case .repeatedCounter: "repeated-counter"
        case .selectInfoShape: "select-info-shape"
        case .unknownMember(let name): "unknown-member \(name)"
        case .otherVersionMember(let name): "other-version-member \(name)"
        case .misplacedMember(let name): "misplaced-member \(name)"
        case .fieldValue(let name, let value): "field-value \(name)=\(value)"
        case .fieldType(let name): "field-type \(name)"
        case .duplicateMember(let name): "duplicate-member \(name)"
        case .fieldLength(let name, let length): "field-length \(name)=\(length)"
        case .fieldFormat(let name, let broken): "field-format \(name)=\(broken.rawValue)"
        case .signedContent(let fault): fault.rawValue
        case .signedPayload(let fault): "signed-payload \(fault.name)"
        case .signedHeader(let fault): "signed-header \(fault.name)"
        case .signedKey(let fault): "signed-key \(fault.name)"
        case .cresEncryption(let fault): "cres-" + fault.rawValue
        }
    }
}
