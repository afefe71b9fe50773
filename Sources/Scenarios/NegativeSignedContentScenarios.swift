import EMV3DS
import Faults
import JSON

/// The negative cases of `acsSignedContent`'s payload (``SignedContentRules/acsPayload``), its `acsEphemPubKey`
/// (``SignedContentRules/ephemeralKey``) and its protected header (``SignedContentRules/jwsHeader``), generated like the
/// CRes's: the JWS signed as it should be, over a payload without one of the elements the table requires. A correct SDK refuses it as a runtime
/// error and sends no CReq (no Erro: it has no channel yet); it ignores a member no version defines and completes the
/// challenge.
///
/// Only presence is graded in a JWS body. Annex A's answers to a malformed or duplicated element (Table A.4) are a
/// message's, and SDKs in use read more than the table: stripe-android's `AcsDataParser` takes a key sent as the string
/// of its JSON text (its tests hold payloads of a certification test platform's ACS so), and Android's `JSONObject`
/// keeps the last of a member written twice. A case of those classes would fail such an SDK for no rule it breaks.
extension NegativeScenarios {
    /// The generated payload cases' cards.
    static let signedContentCardPrefix = "400000011"

    /// The elements an SDK needs to send a CReq at all: the ACS's address and its key. A spoil that leaves either
    /// unreadable stops every SDK, correct or not, before anything reaches the harness, so it makes no case: no verdict
    /// could tell them apart.
    static let neededForACReq: Set<String> = ["acsURL", "acsEphemPubKey"]

    /// The cases, on the scripted text challenge (the first plain one of `scenarios`), in every version: the payload's
    /// table is the same in each.
    public static func signedContent(from scenarios: [Scenario]) -> [Scenario] {
        guard let base = scenarios.first(where: { showsFirst(.text, $0) }) else { return [] }
        let rules = SignedContentRules.acsPayload
        let context = SignedContentRules.payloadContext
        let payloadSpoils = rules.requiredElements(of: examplePayload, context: context)
            .filter { !neededForACReq.contains($0) }.map { Spoil(.missing, $0) }
            + [Spoil(.unknownMember, unknownMember)]
        // The header: `alg` left out or outside PS256 and ES256 (refused whatever the signature's algorithm: an SDK takes
        // the header's against its list, never the key's), `crit` naming a parameter no one defines, a member no one
        // defines (ignored, RFC 7515 §4). `x5c` left out makes no case, as the ACS's address: no SDK could verify the JWS.
        let header = SignedContentRules.jwsHeader
        let headerSpoils = header.requiredElements(of: exampleHeader, context: context).filter { $0 != "x5c" }.map { Spoil(.missing, $0) }
            + header.valuesOutsideTheirSet(of: exampleHeader, context: context).map { Spoil(.outside, $0.element, value: $0.value) }
            + [Spoil(.criticalExtension, "crit"), Spoil(.unknownMember, unknownMember)]
        // The ACS's key: `kty` or `crv` left out or outside EC and P-256 (an SDK that assumes an EC P-256 key would send a
        // CReq all the same), a member no one defines (ignored, RFC 7517 §4). `x` or `y` left out makes no case: no SDK
        // could agree a key without them.
        let key = SignedContentRules.ephemeralKey
        let exampleKey = examplePayload["acsEphemPubKey"] ?? .null
        let keySpoils = key.requiredElements(of: exampleKey, context: context).filter { !["x", "y"].contains($0) }.map { Spoil(.missing, $0) }
            + key.valuesOutsideTheirSet(of: exampleKey, context: context).map { Spoil(.outside, $0.element, value: $0.value) }
            + [Spoil(.unknownMember, unknownMember)]
        let spoils = payloadSpoils.map { (spoil: $0, part: SignedPart.payload) } + headerSpoils.map { (spoil: $0, part: SignedPart.header) }
            + keySpoils.map { (spoil: $0, part: SignedPart.key) }
        return spoils.enumerated().map { serial, found in
            let (spoil, part) = found
            var scenario = base
            scenario.name = name(part.namePrefix, spoil)
            scenario.pan = card(signedContentCardPrefix, serial: serial + 1)
            scenario.versions = Set(MessageVersion.allCases)
            scenario.faults = [FaultInjection(part.fault(spoil.fault), on: .sdk)]
            scenario.description = "acsSignedContent, signed as it should be, \(part.place) \(spoil.change)."
            if spoil.mutation == .unknownMember {
                scenario.description += " The SDK ignores it: the challenge completes."
                scenario.expectation = nil
            } else {
                scenario.expectation = Expectation(sdk: .runtimeError,
                                                   text: "The SDK refuses acsSignedContent (\(part.rule)), sends no CReq and no Erro, and reports runtimeError.")
            }
            return scenario
        }
    }

    /// The part of `acsSignedContent` a generated case spoils.
    enum SignedPart {
        case payload, header, key

        var namePrefix: String {
            switch self {
            case .payload: "signed-content"
            case .header: "signed-content-header"
            case .key: "signed-content-key"
            }
        }

        func fault(_ spoil: Fault) -> Fault {
            switch self {
            case .payload: .signedPayload(spoil)
            case .header: .signedHeader(spoil)
            case .key: .signedKey(spoil)
            }
        }

        /// Where the spoil is, as the description says it.
        var place: String {
            switch self {
            case .payload: "over a payload"
            case .header: "under a protected header"
            case .key: "over a payload whose acsEphemPubKey is a JWK"
            }
        }

        /// The rule a correct SDK refuses the spoil by.
        var rule: String {
            switch self {
            case .payload: "Annex A, ACS Signed Content: the JWS body holds acsURL, acsEphemPubKey and sdkEphemPubKey"
            case .header: "RFC 7515: alg is required, a crit parameter not understood refuses the JWS; EMV 3DS: PS256 or ES256 only"
            case .key: "RFC 7517 §4.1 and RFC 7518 §6.2.1: a JWK has kty, an EC key its crv; EMV 3DS: the ACS's ephemeral key is EC P-256"
            }
        }
    }

    /// A protected header as an ACS signs it, for the probes (any base64 stands for the certificates).
    static let exampleHeader = JSONValue.object([("alg", .string("ES256")), ("x5c", .array([.string("MIIB"), .string("MIIC")]))])

    /// A payload as an ACS signs it, for the probes: the keys are EMVCo's example SDK key (app-based crypto examples).
    static let examplePayload: JSONValue = {
        let key = JSONValue.object([("kty", .string("EC")), ("crv", .string("P-256")), ("x", .string("C1PL42i6kmNkM61aupEAgLJ4gF1ZRzcV7lqo1TG0mL4")),
                                    ("y", .string("cNToWLSdcFQKG--PGVEUQrIHP8w6TcRyj0pyFx4-ZMc"))])
        return .object([("acsURL", .string("https://acs.example/acs/challenge")), ("acsEphemPubKey", key), ("sdkEphemPubKey", key)])
    }()
}
