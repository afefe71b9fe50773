import EMV3DS
import EMVCrypto
import Faults
import JOSE
import JSON
import Net
import Scenarios
import SDKSimulator
import Testing
import TestSupport

/// The negative cases of acsSignedContent's payload, its key and header (docs/negative.md), generated from their tables. The
/// ACS's key (`SignedContentRules.ephemeralKey`): without `kty` or `crv`, or either outside EC and P-256, refused by a
/// correct SDK and taken by one that assumes the curve; a member no one defines taken. The header
/// (`SignedContentRules.jwsHeader`; RFC 7515: `alg` required, a `crit` parameter not understood refuses the JWS, an
/// unknown parameter is ignored; EMV 3DS: PS256 or ES256): signed as it should be under a header without `alg`, with
/// `alg` outside the two, with `crit`; a correct SDK refuses each, one that infers the algorithm from the key takes them.
/// The payload, generated from its table
/// (`SignedContentRules.acsPayload`; Annex A, Table A.1, ACS Signed Content: the JWS body holds acsURL, acsEphemPubKey and
/// sdkEphemPubKey): signed as it should be over a payload without an element. A correct SDK refuses it as a runtime
/// error and sends no CReq (`challenge.end`), and takes a member no version defines. The ACS's address or key left out
/// makes no case: a CReq could not come from a wrong SDK either. Malformed and duplicated elements make none: SDKs in use
/// take a key as the string of its JSON text (stripe-android's AcsDataParser) and break by no rule.
@Suite("Negative cases of acsSignedContent's payload")
struct SignedContentPayloadTests {
    static let catalog = NegativeCaseTests.catalog
    static let cases = catalog.negative.filter { $0.name.hasPrefix("negative-signed-content-") }

    @Test func thePayloadsTableMakesACaseOfEachSpoilAnSDKCouldBeSeenToTake() throws {
        #expect(Set(Self.cases.map(\.name)) == [
            "negative-signed-content-missing-sdkEphemPubKey", "negative-signed-content-unknown-harnessUnknownMember",
            "negative-signed-content-header-missing-alg", "negative-signed-content-header-outside-alg-ZZZZZ",
            "negative-signed-content-header-critical-crit", "negative-signed-content-header-unknown-harnessUnknownMember",
            "negative-signed-content-key-missing-kty", "negative-signed-content-key-missing-crv", "negative-signed-content-key-outside-kty-ZZ",
            "negative-signed-content-key-outside-crv-ZZZZZ", "negative-signed-content-key-unknown-harnessUnknownMember",
        ])
        for scenario in Self.cases {
            #expect(scenario.versions == Set(MessageVersion.allCases), "\(scenario.name)")
            #expect(scenario.faults.count == 1 && scenario.faults.first?.leg == .sdk && scenario.faults.first?.fault.isOnSignedContent == true)
            let refused = !scenario.name.contains("-unknown-")
            #expect((scenario.expectation?.sdk == .runtimeError) == refused, "\(scenario.name)")
            #expect(scenario.faults.first?.fault.signedContentRefusedBySDK == refused, "\(scenario.name)")
            #expect(Self.catalog.scenario(for: scenario.pan ?? "").name == scenario.name)
        }
        // Each fault reads back from its name, as a scenario file writes it.
        for fault in Self.cases.compactMap(\.faults.first?.fault) {
            let name = fault.name.split(separator: " ", maxSplits: 1).map(String.init)
            #expect(try Fault(name: name[0], value: name[1]) == fault)
        }
        #expect(throws: Fault.SpecError.self) { try Fault(name: "signed-payload", value: "latency 10") }
        #expect(throws: Fault.SpecError.self) { try Fault(name: "signed-header", value: "field-type alg") }
        // A fault whose expectation would be wrong: nothing broken, or a registered parameter said to be no one's.
        #expect(throws: Fault.SpecError.self) { try Fault(name: "signed-header", value: "field-value alg=ES256") }
        #expect(throws: Fault.SpecError.self) { try Fault(name: "signed-header", value: "missing-field kid") }
        #expect(throws: Fault.SpecError.self) { try Fault(name: "signed-header", value: "unknown-member jku") }
        #expect(throws: Fault.SpecError.self) { try Fault(name: "signed-payload", value: "missing-field acsTransID") }
        #expect(throws: Fault.SpecError.self) { try Fault(name: "signed-payload", value: "unknown-member acsURL") }
        #expect(throws: Fault.SpecError.self) { try Fault(name: "signed-key", value: "field-type kty") }
        #expect(throws: Fault.SpecError.self) { try Fault(name: "signed-key", value: "field-value crv=P-256") }
        #expect(throws: Fault.SpecError.self) { try Fault(name: "signed-key", value: "unknown-member use") }
        // A private key's member is registered: a reader may act on it, so no case may expect it ignored.
        #expect(throws: Fault.SpecError.self) { try Fault(name: "signed-key", value: "unknown-member d") }
    }

    /// joserfc (Tests/JOSETests/Interop/joserfc_peer.py) reads the `acsEphemPubKey` of each key case's acsSignedContent, as
    /// the ACS signs it, as the case expects an SDK to: refused without `kty` or `crv` or with either outside EC and P-256
    /// (RFC 7517 §4.1, RFC 7518 §6.2.1), taken with a member no one defines (RFC 7517 §4). stripe-android reads the key with
    /// Nimbus JOSE's `ECKey.parse`, which refuses the same four (its AcsDataParser).
    @Test func joserfcJudgesEachKeyCaseAsTheCaseExpects() throws {
        let leafKey = try PrivateKey.generateP256()
        let leaf = try CertificateBuilder.issue(CertificateProfile(commonName: "Interop ACS", validFor: 30, isCA: true),
                                                publicKey: leafKey.publicKey, issuer: nil, issuerKey: leafKey)
        let identity = ACSSigningIdentity(key: leafKey, chain: [leaf], rootKey: leafKey)
        let keyCases = try Self.signed("negative-signed-content-key-", by: identity)
        #expect(keyCases.count == 5)
        for (scenario, fault, compact) in keyCases {
            let signed = try JSONReader.parse(try JWS(compact: compact).payload).value
            let key = try #require(signed["acsEphemPubKey"], "\(scenario.name)")
            let verdict = try ChildProcess.run("python3", [repositoryRoot + "/Tests/JOSETests/Interop/joserfc_peer.py", "import-jwk", JSONWriter.string(key)])
            #expect((verdict.status != 0) == fault.signedContentRefusedBySDK, "\(scenario.name): \(verdict.output)")
            if verdict.status == 0 { #expect(verdict.output.contains("EC P-256"), "\(scenario.name): \(verdict.output)") }
            // Refused for the member the case spoilt.
            let why = ["missing-kty": "MissingKeyTypeError", "missing-crv": "'crv' is required", "outside-kty": "InvalidKeyTypeError",
                       "outside-crv": "ZZZZZ"]
            if let expected = why.first(where: { scenario.name.contains($0.key) })?.value {
                #expect(verdict.output.contains(expected), "\(scenario.name): \(verdict.output)")
            }
        }
    }

    /// An implementation nobody here wrote, joserfc (Tests/JOSETests/Interop/joserfc_peer.py), reads each header case's
    /// acsSignedContent as the case expects an SDK to: refused without `alg`, with an `alg` outside PS256 and ES256, with a
    /// `crit` parameter it does not understand; taken with a parameter no one defines, which RFC 7515 §4 has a recipient
    /// ignore (joserfc's default refuses one: an SDK on such a default fails that case, as RFC 7515 says it should not).
    @Test func joserfcJudgesEachHeaderCaseAsTheCaseExpects() throws {
        let rootKey = try PrivateKey.generateP256(), leafKey = try PrivateKey.generateP256()
        let root = try CertificateBuilder.issue(CertificateProfile(commonName: "Interop Root", validFor: 30, isCA: true),
                                                publicKey: rootKey.publicKey, issuer: nil, issuerKey: rootKey)
        let leaf = try CertificateBuilder.issue(CertificateProfile(commonName: "Interop ACS", validFor: 30),
                                                publicKey: leafKey.publicKey, issuer: root, issuerKey: rootKey)
        let identity = ACSSigningIdentity(key: leafKey, chain: [leaf, root], rootKey: rootKey)
        let headerCases = try Self.signed("negative-signed-content-header-", by: identity)
        #expect(headerCases.count == 4)
        for (scenario, fault, compact) in headerCases {
            let verdict = try ChildProcess.run("python3", [repositoryRoot + "/Tests/JOSETests/Interop/joserfc_peer.py", "verify-rfc",
                                                           leafKey.publicKey.jwk().jsonString, "ES256,PS256", compact])
            #expect((verdict.status != 0) == fault.signedContentRefusedBySDK, "\(scenario.name): \(verdict.output)")
            // Refused for what the case broke, not for something else of the JWS.
            let why = ["missing-alg": "MissingAlgorithmError", "outside-alg": "UnsupportedAlgorithmError", "critical-crit": "UnsupportedHeaderError"]
            if let expected = why.first(where: { scenario.name.contains($0.key) })?.value {
                #expect(verdict.output.contains(expected), "\(scenario.name): \(verdict.output)")
            }
        }
    }

    /// The cases whose names start with `prefix`, each with its fault and the acsSignedContent the ACS signs with `identity`
    /// over a payload of fresh keys as that fault spoils it.
    static func signed(_ prefix: String, by identity: ACSSigningIdentity) throws -> [(scenario: Scenario, fault: Fault, compact: String)] {
        let payload = AcsSignedContent.payload(acsURL: "https://acs.example/challenge", acsEphemeralKey: try PrivateKey.generateP256().publicKey.jwk(),
                                               sdkEphemPubKey: try PrivateKey.generateP256().publicKey.emvJWK)
        return try cases.filter { $0.name.hasPrefix(prefix) }.map { scenario in
            let fault = try #require(scenario.faults.first?.fault, "\(scenario.name)")
            return (scenario, fault, try FaultySignedContent.sign(fault, payload: payload, identity: identity))
        }
    }

    /// Each case of a 2.2.0 run of the payload's cases, once finished: its status.
    func finishedRun(_ harness: RunningHarness, challenger: ChallengeRunner) async throws -> [String: String] {
        let names = Self.cases.map { JSONValue.string($0.name) }
        let suite = JSONValue.object([("name", .string("payload")), ("party", .string("sdk")), ("negative", .bool(true)),
                                      ("versions", .array([.string("2.2.0")])), ("only", .array(names))])
        let started = try await harness.post("/admin/runs", JSONWriter.write(.object([("suite", suite)])))
        let id = try #require(try JSONReader.parse(started.body).value["id"]?.stringValue, "\(started.bodyText)")
        for scenario in Self.cases { _ = try await runTransaction(harness, pan: scenario.pan ?? "", answers: ["1234"], challenger: challenger) }
        let run = try JSONReader.parse(try await harness.post("/admin/runs/\(id)/finish", []).body).value
        // The report says what the SDK owes where the flow's transStatus is not where it ends.
        let report = String(decoding: try await harness.get("/admin/runs/\(id)/report.html").body, as: UTF8.self)
        let saysRuntimeError = report.contains(#"<span class="muted">(SDK runtime error)</span>"#)
        #expect(saysRuntimeError)
        var statuses: [String: String] = [:]
        for entry in run["cases"]?.arrayValue ?? [] { statuses[entry["scenario"]?.stringValue ?? ""] = entry["status"]?.stringValue }
        return statuses
    }

    /// A correct SDK passes every case; the lax one fails the element it does not check, the strict one the member it
    /// should ignore.
    @Test(arguments: [
        (nil, []),
        (ChallengeRunner.Misbehaviour.ignoresSDKKeyEcho, ["missing-sdkEphemPubKey"]),
        (.refusesUnknownMembers, ["unknown-harnessUnknownMember", "header-unknown-harnessUnknownMember", "key-unknown-harnessUnknownMember"]),
        (.infersAlgFromKey, ["header-missing-alg", "header-outside-alg-ZZZZZ", "header-critical-crit"]),
        (.assumesP256Key, ["key-missing-kty", "key-missing-crv", "key-outside-kty-ZZ", "key-outside-crv-ZZZZZ"]),
    ] as [(ChallengeRunner.Misbehaviour?, [String])])
    func anSDKFailsExactlyTheCasesOfWhatItGetsWrong(_ misbehaviour: ChallengeRunner.Misbehaviour?, _ failing: [String]) async throws {
        try await withHarness { harness in
            let statuses = try await finishedRun(harness, challenger: harness.challenger(misbehaving: misbehaviour))
            #expect(statuses.count == Self.cases.count)
            let failed = Set(statuses.filter { $0.value != "passed" }.keys)
            #expect(failed == Set(failing.map { "negative-signed-content-" + $0 }), "\(String(describing: misbehaviour)): \(statuses)")
        }
    }
}
