import EMV3DS
import Faults
import JSON

/// The negative cases of `acsSignedContent`'s payload (``SignedContentRules/acsPayload``), generated like the CRes's: the
/// payload signed as it should be, without one of the elements the table requires. A correct SDK refuses it as a runtime
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
        let spoils = payloadSpoils.map { (spoil: $0, inHeader: false) } + headerSpoils.map { (spoil: $0, inHeader: true) }
        return spoils.enumerated().map { serial, found in
            let (spoil, inHeader) = found
            var scenario = base
            scenario.name = name(inHeader ? "signed-content-header" : "signed-content", spoil)
            scenario.pan = card(signedContentCardPrefix, serial: serial + 1)
            scenario.versions = Set(MessageVersion.allCases)
            scenario.faults = [FaultInjection(inHeader ? .signedHeader(spoil.fault) : .signedPayload(spoil.fault), on: .sdk)]
            scenario.description = inHeader ? "acsSignedContent, signed as it should be, under a protected header \(spoil.change)."
                : "acsSignedContent, signed as it should be, over a payload \(spoil.change)."
            if spoil.mutation == .unknownMember {
                scenario.description += " The SDK ignores it: the challenge completes."
                scenario.expectation = nil
            } else {
                let rule = inHeader ? "RFC 7515: alg is required, a crit parameter not understood refuses the JWS; EMV 3DS: PS256 or ES256 only"
                    : "Annex A, ACS Signed Content: the JWS body holds acsURL, acsEphemPubKey and sdkEphemPubKey"
                scenario.expectation = Expectation(sdk: .runtimeError, text: "The SDK refuses acsSignedContent (\(rule)), sends no CReq and no Erro, and reports runtimeError.")
            }
            return scenario
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
