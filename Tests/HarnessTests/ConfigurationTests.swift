@testable import Harness
import Configuration
import Scenarios
import TestSupport
import Testing
import EMV3DS
import Foundation
import Net

@Suite("Configuration file")
struct ConfigurationTests {
    @Test func emptyFileMeansDefaults() throws {
        let configuration = try HarnessConfiguration.parse("{}")
        #expect(configuration == HarnessConfiguration())
        #expect(configuration.server.httpPort == 8080)
        #expect(configuration.server.httpsPort == 8443)
        #expect(configuration.server.maxHeaderBytes == 16_384)
        #expect(configuration.server.maxBodyBytes == 1_048_576)
    }

    @Test func committedDefaultFileParses() throws {
        let configuration = try HarnessConfiguration.load(path: repositoryRoot + "/config/harness.yaml")
        #expect(configuration == HarnessConfiguration())
    }

    @Test func valuesOverrideDefaultsAndNullTurnsAListenerOff() throws {
        let configuration = try HarnessConfiguration.parse("""
            server:
              httpPort: 9090
              httpsPort: null
              loops: 2
            logging:
              format: json
            """)
        #expect(configuration.server.httpPort == 9090)
        #expect(configuration.server.httpsPort == nil)
        #expect(configuration.loopCount == 2)
        #expect(configuration.serverConfiguration().tls == nil)
    }

    @Test(arguments: [
        ("server:\n  htpPort: 1", "harness.yaml: server.htpPort: unknown key"),
        ("server:\n  httpPort: 70000", "harness.yaml: server.httpPort: 70000 is not a port (0-65535)"),
        ("server:\n  httpPort: eighty", "harness.yaml: server.httpPort:"),
        ("server:\n  httpPort: null\n  httpsPort: null", "harness.yaml: server: set httpPort or httpsPort (or both)"),
        ("logging:\n  format: xml", "harness.yaml: logging.format: \"xml\" is not text or json"),
        ("logging:\n  level: loud", "harness.yaml: logging.level: \"loud\" is not one of"),
        ("tls:\n  requireClientCertificate: true", "harness.yaml: tls.requireClientCertificate: set tls.clientCA"),
        ("tls:\n  plainHTTPBesideMutualTLS: maybe", "harness.yaml: tls.plainHTTPBesideMutualTLS: \"maybe\" is not warn or refuse"),
        ("tls:\n  clientCA: certs/tls/root-ca.pem\n  requireClientCertificate: true\n  plainHTTPBesideMutualTLS: refuse",
         "harness.yaml: server.httpPort: plain HTTP would serve every route without the client certificate"),
        ("server:\n  host: 0.0.0.0", "harness.yaml: admin: server.host 0.0.0.0 is reachable from other hosts"),
        ("server:\n  host: \"::\"\nadmin:\n  token: short", "harness.yaml: admin.token: at least 16 characters"),
        ("admin:\n  tokn: x", "harness.yaml: admin.tokn: unknown key"),
        // Every SDK would refuse acsSignedContent with such an acsURL.
        ("accessControlServer:\n  challengeURL: acs.example/challenge", "harness.yaml: accessControlServer.challengeURL: \"acs.example/challenge\""),
    ])
    func invalidFilesNameTheKey(yaml: String, message: String) {
        #expect {
            _ = try HarnessConfiguration.parse(yaml, source: "harness.yaml")
        } throws: { error in
            (error as? ConfigurationError)?.description.hasPrefix(message) == true
        }
    }

    @Test(arguments: [
        "server:\n  host: 0.0.0.0\nadmin:\n  token: 0123456789abcdef",
        "server:\n  host: \"::\"\nadmin:\n  openOnNetwork: true",
        "server:\n  host: 127.0.0.2",
        "server:\n  host: \"::1\"",
        "tls:\n  clientCA: certs/tls/root-ca.pem\n  requireClientCertificate: true",
        "accessControlServer:\n  challengeURL: \"http://10.0.2.2:8080/acs/challenge\"",
    ])
    func exposedAdminWithATokenOrAnOptOutAndMutualTLSBesidePlainHTTPStart(yaml: String) throws {
        _ = try HarnessConfiguration.parse(yaml, source: "harness.yaml")
    }

    @Test func missingFileIsReported() {
        #expect(throws: ConfigurationError.unreadable(path: "/nonexistent/harness.yaml")) {
            _ = try HarnessConfiguration.load(path: "/nonexistent/harness.yaml")
        }
    }

    @Test func relativeTLSPathsResolveAgainstTheBaseDirectory() {
        let server = HarnessConfiguration().serverConfiguration(baseDirectory: "/srv/harness")
        #expect(server.tls?.certificateChainFile == "/srv/harness/certs/tls/server-chain.pem")
        #expect(server.tls?.privateKeyFile == "/srv/harness/certs/tls/server-key.pem")
    }
}

@Suite("Scenario file")
struct ScenarioFileTests {
    /// A reason 2.3.1 added (27-30, SB 279 Table A.1 transStatusReason) cannot be sent in an older version: as for a status
    /// the version does not know, the ACS answers U with reason 07 there.
    @Test func aReasonTheVersionDoesNotDefineIsAnsweredU07() {
        let outcome = Outcome.frictionless(.notAuthenticated, reason: "27")
        #expect(outcome.plan(for: .v2_3_1) == .final(.notAuthenticated, reason: "27"))
        #expect(outcome.plan(for: .v2_2_0) == .final(.unavailable, reason: "07"))
        #expect(outcome.expectedResult(for: .v2_1_0) == .unavailable)
    }

    @Test func committedFileParses() throws {
        let catalog = try ScenarioFile.load(path: repositoryRoot + "/config/scenarios.yaml")
        #expect(catalog.scenarios.count == 75)
        #expect(catalog.scenario(for: "4000000000003006").name == "frictionless-n")
        guard case .challenge(let script) = catalog.scenario(for: "4000000000110009").outcome else {
            Issue.record("challenge-text is not a challenge")
            return
        }
        #expect(script.steps.first?.answer == "1234")
        #expect(script.steps.first?.resendAnswer == "5678")
        #expect(script.attempts == 3)
        #expect(catalog.scenario(for: "4000000000190001").outcome == .decoupled(DecoupledScript(status: .authenticated, delay: 2,
                                                                                                  cardholderInfo: "Approve the payment in your banking app.")))
        #expect(catalog.scenario(for: "4111111111111111").name == "frictionless-y")
    }

    @Test(arguments: [
        ("defaultScenario: x\nscenarios: []", "s.yaml: defaultScenario x is not a defined scenario"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: C}", "s.yaml:3: scenarios[0] (a).transStatus: \"C\" is not one of"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: N}", "s.yaml:3: scenarios[0] (a).transStatusReason: required for transStatus N"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, transStatusReason: \"01\"}", "s.yaml:3: scenarios[0] (a).transStatusReason: only N, R and U"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, pan: \"4000000000001001\", description: d, transStatus: Y}", "s.yaml:3: scenarios[0] (a).pan: \"4000000000001001\" is not"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y}\n  - {name: a, description: d, transStatus: Y}", "s.yaml: scenario a is defined twice"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, colour: red}", "s.yaml:3: scenarios.0.colour: unknown key"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d}", "s.yaml:3: scenarios[0] (a).transStatus: give exactly one of"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, decoupled: {}}", "s.yaml:3: scenarios[0] (a).transStatus: give exactly one of"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: []}}", "s.yaml:3: scenarios[0] (a).challenge.steps: at least one step"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: [{uiType: voice, answer: x}]}}",
         "s.yaml:3: scenarios[0] (a).challenge.steps[0].uiType: \"voice\" is not 01-07"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: [{uiType: text}]}}",
         "s.yaml:3: scenarios[0] (a).challenge.steps[0].answer: required for uiType 01"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: [{uiType: single-select, answer: \"1\"}]}}",
         "s.yaml:3: scenarios[0] (a).challenge.steps[0].options: required for uiType 02"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: [{uiType: \"02\", answer: \"3\", options: [{key: \"1\", label: x}]}]}}",
         "s.yaml:3: scenarios[0] (a).challenge.steps[0].answer: \"3\" is not one of the option keys"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: [{uiType: oob, resendAnswer: \"1\"}]}}",
         "s.yaml:3: scenarios[0] (a).challenge.steps[0].resendAnswer: only text steps"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: [{uiType: text, answer: \"1\", header: \"\"}]}}",
         "s.yaml:3: scenarios[0] (a).challenge.steps[0].header: must be 1-45 characters"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {attempts: 0, steps: [{uiType: text, answer: \"1\"}]}}",
         "s.yaml:3: scenarios[0] (a).challenge.attempts: at least 1"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {success: N, steps: [{uiType: text, answer: \"1\"}]}}",
         "s.yaml:3: scenarios[0] (a).challenge.success: \"N\" is not Y or A"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: [{uiType: text, answer: \"1\", colour: red}]}}",
         "s.yaml:3: scenarios.0.challenge.steps.0.colour: unknown key"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, decoupled: {delay: -1}}", "s.yaml:3: scenarios[0] (a).decoupled.delay: -1.0 is not 0-86400"),
        // Numbers a Duration cannot hold would trap the process on the first AReq.
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, decoupled: {delay: 1e19}}", "s.yaml:3: scenarios[0] (a).decoupled.delay: 1e+19 is not 0-86400"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, decoupled: {delay: .inf}}", "s.yaml:3: scenarios[0] (a).decoupled.delay: inf is not 0-86400"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, decoupled: {delay: .nan}}", "s.yaml:3: scenarios[0] (a).decoupled.delay: nan is not 0-86400"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, decoupled: {transStatus: N}}",
         "s.yaml:3: scenarios[0] (a).decoupled.transStatusReason: required for transStatus N"),
        // Faults, expectations and triggers; a multi-line entry names the line of the field.
        ("defaultScenario: a\nscenarios:\n  - name: a\n    description: d\n    transStatus: Y\n    faults:\n      - {leg: ds, fault: melt}",
         "s.yaml:7: scenarios[0] (a).faults[0].fault: \"melt\" is not one of"),
        ("defaultScenario: a\nscenarios:\n  - name: a\n    description: d\n    transStatus: Y\n    faults:\n      - {leg: pos, fault: no-answer}",
         "s.yaml:7: scenarios[0] (a).faults[0].leg: \"pos\" is not one of ds, acs, sdk"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, faults: [{leg: ds, fault: bad-signature}]}",
         "s.yaml:3: scenarios[0] (a).faults[0].leg: bad-signature acts on the sdk leg, not ds"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, faults: [{leg: ds, fault: erro}]}",
         "s.yaml:3: scenarios[0] (a).faults[0].value: required for erro: the error code"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, faults: [{leg: ds, fault: erro, value: \"999\"}]}",
         "s.yaml:3: scenarios[0] (a).faults[0].value: \"999\" is not an EMV error code"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, faults: [{leg: ds, fault: no-answer, value: \"1\"}]}",
         "s.yaml:3: scenarios[0] (a).faults[0].value: no-answer takes no value"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, faults: [{leg: ds, fault: http-status, value: \"200\"}]}",
         "s.yaml:3: scenarios[0] (a).faults[0].value: \"200\" is not an HTTP status 300-599"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, faults: [{leg: ds, fault: latency, value: \"2000\", round: 1}]}",
         "s.yaml:3: scenarios[0] (a).faults[0].round: only SDK-leg faults have a round"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: [{uiType: text, header: h, label: l, text: t, answer: \"1\"}]}, faults: [{leg: sdk, fault: repeated-counter, round: 0}]}",
         "s.yaml:3: scenarios[0] (a).faults[0].round: repeated-counter needs a CRes before it"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, expect: {sdk: crashed, text: t}}",
         "s.yaml:3: scenarios[0] (a).expect.sdk: \"crashed\" is not one of completed"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, expect: {sdk: protocolError}}",
         "s.yaml:3: scenarios.0.expect.text: required member missing"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, panRange: \"400000000090000-4000000000999999\"}",
         "s.yaml:3: scenarios[0] (a).panRange: both ends must be card numbers of one length"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, amount: \"500-100\"}",
         "s.yaml:3: scenarios[0] (a).amount: \"500-100\" is not N, N-M or N- with N <= M"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, messageCategory: \"03\"}",
         "s.yaml:3: scenarios[0] (a).messageCategory: \"03\" is not 01 (payment) or 02 (non-payment)"),
        // 2.3.1's outcome fields, checked as the 2.3.1 ARes table has them.
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, outcomeFields: {deviceBindingStatus: \"99\"}}",
         "s.yaml:3: scenarios[0] (a).outcomeFields.deviceBindingStatus: \"99\" is not one of 01, 02, 03, 04, 05, 11"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, outcomeFields: {broadInfo: {category: \"01\", recipients: [\"02\"], source: \"03\"}}}",
         "s.yaml:3: scenarios[0] (a).outcomeFields.broadInfo.severity: is required"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, outcomeFields: {acsURL: \"https://x\"}}",
         "s.yaml:3: scenarios[0] (a).outcomeFields.acsURL: is not one of deviceBindingStatus, trustListStatus"),
        // Decoupled Authentication Fallback (2.3.1): reason 29 or 30 only.
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: [{uiType: text, answer: \"1\"}], decoupledFallback: {reason: \"27\"}}}",
         "s.yaml:3: scenarios[0] (a).challenge.decoupledFallback.reason: \"27\" is not 30 (after the steps pass) or 29 (after the attempts run out)"),
        ("defaultScenario: a\nscenarios:\n  - {name: a, description: d, challenge: {steps: [{uiType: text, answer: \"1\"}], decoupledFallback: {reason: \"30\", decoupled: {transStatus: C}}}}",
         "s.yaml:3: scenarios[0] (a).challenge.decoupledFallback.decoupled.transStatus: \"C\" is not"),
    ])
    func invalidFilesSayWhatIsWrong(yaml: String, message: String) {
        do {
            _ = try ScenarioFile.parse(yaml, source: "s.yaml")
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(error.description.hasPrefix(message), "\(error.description)")
        }
    }

    /// A text read before gives the catalog it gave then (reading one probes every element of every message for the
    /// negative cases); another text gives its own, and a text refused before is refused again.
    @Test func aScenarioTextReadAgainGivesItsCatalogAndAnotherItsOwn() throws {
        let file = try String(contentsOfFile: repositoryRoot + "/config/scenarios.yaml", encoding: .utf8)
        let small = "defaultScenario: a\nscenarios:\n  - {name: a, description: d, transStatus: Y, pan: \"4000000000001000\"}"
        let first = try ScenarioFile.parse(file)
        let other = try ScenarioFile.parse(small)
        #expect(other.scenarios.map(\.name) == ["a"] && other.negative != first.negative)
        #expect(try ScenarioFile.parse(file).negative == first.negative && ScenarioFile.parse(file).scenarios == first.scenarios)
        #expect(try ScenarioFile.parse(small).scenarios == other.scenarios)
        // The same names with one answer changed: an edited file reloaded.
        let edited = try ScenarioFile.parse(file.replacingOccurrences(of: "answer: \"1234\"", with: "answer: \"4321\""))
        #expect(edited.scenarios.map(\.name) == first.scenarios.map(\.name) && edited.scenarios != first.scenarios && edited.negative != first.negative)
        for _ in 0..<2 { #expect(throws: ConfigurationError.self) { try ScenarioFile.parse(small + "\n  - {name: a}") } }
    }

    @Test(arguments: [
        ("directoryServers:\n  - {rid: A000000003, name: V, cardRanges: [\"4x\"]}", "h.yaml: directoryServers[0].cardRanges: \"4x\" is not"),
        ("directoryServers:\n  - {rid: A000000003, name: V, authenticatedECI: \"5\"}", "h.yaml: directoryServers[0].authenticatedECI: \"5\" is not two digits"),
        ("directoryServer:\n  outOfRange: Y", "h.yaml: directoryServer.outOfRange: \"Y\" is not N, U or erro"),
        ("threeDSServer:\n  dsURL: x", "h.yaml: threeDSServer.dsURL: unknown key"),
        ("directoryServers:\n  - {rid: A000000003, name: V, acsSigning: dsa}", "h.yaml: directoryServers.0.acsSigning: \"dsa\" is not rsa or ec"),
        ("accessControlServer:\n  challengeTimeout: 0", "h.yaml: accessControlServer.challengeTimeout: 0.0 is not 0.001-86400.0 seconds"),
        ("accessControlServer:\n  challengeTimeout: 1e300", "h.yaml: accessControlServer.challengeTimeout: 1e+300 is not"),
        ("accessControlServer:\n  challengeTimeout: .inf", "h.yaml: accessControlServer.challengeTimeout: inf is not"),
        ("server:\n  shutdownGraceMs: 18446744073709551615", "h.yaml: server.shutdownGraceMs: 1.8446744073709552e+19 is not 0.0-86400000.0"),
        ("threeDSServer:\n  directoryServerTimeoutMs: 18446744073709551615", "h.yaml: threeDSServer.directoryServerTimeoutMs: 1.8446744073709552e+19 is not"),
    ])
    func invalidRoleSettingsSayWhatIsWrong(yaml: String, message: String) {
        #expect {
            _ = try HarnessConfiguration.parse(yaml, source: "h.yaml")
        } throws: { error in
            (error as? ConfigurationError)?.description.hasPrefix(message) == true
        }
    }
}
