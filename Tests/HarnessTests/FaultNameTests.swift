import Faults
import Scenarios
import Testing

/// A scenario file names faults; the admin views and `scenarios list` print them back. Both
/// directions come from one table (`Fault.names`), and each name survives the round trip.
@Suite("Fault names")
struct FaultNameTests {
    /// A valid value for each kind of value a fault takes.
    static let samples: [String: String] = [
        "milliseconds": "250", "error code": "203", "status code": "503", "media type": "text/plain",
        "field name": "acsTransID", "version": "2.1.0", "id field name": "dsTransID", "member name": "harnessUnknownMember", "field name=value": "acsUiType=06",
        "field name=length": "challengeInfoText=351", "field name=break": "acsCounterAtoS=letter",
        "content fault and its value": "missing-field sdkEphemPubKey", "header fault and its value": "missing-field alg",
        "key fault and its value": "missing-field crv", "conditional field name": "transStatus",
    ]

    @Test(arguments: Fault.names.keys.sorted())
    func everyNameReadsBackAsItself(name: String) throws {
        let valueKind = Fault.names[name] ?? nil
        let value = try valueKind.map { kind in try #require(Self.samples[kind], "no sample value for \(kind)") }
        let fault = try Fault(name: name, value: value)
        let printed = fault.name.split(separator: " ", maxSplits: 1).map(String.init)
        #expect(printed.first == name)
        #expect(try Fault(name: printed[0], value: printed.count > 1 ? printed[1] : nil) == fault)
    }

    @Test func unknownNamesAndWrongValuesSayWhy() {
        #expect(throws: Fault.SpecError.self) { try Fault(name: "latencyy", value: "1") }
        #expect(throws: Fault.SpecError.value("required for latency: the milliseconds")) { try Fault(name: "latency", value: nil) }
        #expect(throws: Fault.SpecError.value("no-answer takes no value")) { try Fault(name: "no-answer", value: "x") }
        #expect(throws: Fault.SpecError.value("\"700000\" is not 0-600000 milliseconds")) { try Fault(name: "latency", value: "700000") }
        #expect(throws: Fault.SpecError.value("\"acsUiType=x\" is not field=length (0-100000 characters)")) { try Fault(name: "field-length", value: "acsUiType=x") }
        #expect(throws: Fault.SpecError.value("\"acsUiType=x\" is not field=break (letter, http, ftp, month, base64)")) { try Fault(name: "field-format", value: "acsUiType=x") }
        #expect(throws: Fault.SpecError.value("harnessUnknownMember is an element of no message the harness sends: unknown-member adds a member no one defines")) {
            try Fault(name: "other-version-member", value: "harnessUnknownMember")
        }
        #expect(throws: Fault.SpecError.value("acsURL is no element a rule has the receiver ignore where its condition does not hold: one of transStatus")) {
            try Fault(name: "misplaced-member", value: "acsURL")
        }
    }
}
