import EMV3DS
import Foundation
import JSON
import Testing

/// acsSignedContent's payload table (Annex A, Table A.1, ACS Signed Content: acsURL, acsEphemPubKey, sdkEphemPubKey),
/// held to a payload a real ACS signs.
@Suite("acsSignedContent's payload table")
struct SignedContentRulesTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ThirdParty/payloads")

    /// Stripe's test-mode ACS payload (ThirdParty/README.md): taken as published, `use` in the echoed key and all.
    @Test func aPayloadARealACSSignsPasses() throws {
        let bytes = try Data(contentsOf: Self.folder.appendingPathComponent("stripe-acs-signed-content-payload.json"))
        let read = try JSONReader.parse([UInt8](bytes))
        #expect(SignedContentRules.violations(ofACSPayload: read.value, duplicates: read.duplicates).isEmpty)
    }

    @Test func eachElementIsRequiredOnceAndOfItsFormat() throws {
        let bytes = try Data(contentsOf: Self.folder.appendingPathComponent("stripe-acs-signed-content-payload.json"))
        let payload = try JSONReader.parse([UInt8](bytes)).value
        for name in ["acsURL", "acsEphemPubKey", "sdkEphemPubKey"] {
            var without = payload
            without.set(name, nil)
            #expect(SignedContentRules.violations(ofACSPayload: without).map(\.code) == [.requiredElementMissing], "\(name)")
        }
        var asText = payload
        asText.set("acsEphemPubKey", .string(JSONWriter.string(payload["acsEphemPubKey"] ?? .null)))
        #expect(SignedContentRules.violations(ofACSPayload: asText).map(\.field) == ["acsEphemPubKey"])
        var otherCurve = payload
        otherCurve.set("sdkEphemPubKey", .object([("kty", .string("EC")), ("crv", .string("P-384")), ("x", .string("x")), ("y", .string("y"))]))
        #expect(SignedContentRules.violations(ofACSPayload: otherCurve).map(\.field) == ["sdkEphemPubKey"])
    }
}
