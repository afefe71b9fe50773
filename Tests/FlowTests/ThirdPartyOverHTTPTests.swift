import EMV3DS
import Foundation
import JSON
import Net
import Testing
import TestSupport

/// The third-party corpus (Tests/EMV3DSTests/ThirdParty, its README names each message's source) sent over HTTP to the
/// role that receives it, as published and as each other version would send it: the DS takes the AReqs of the 3DS
/// Server's leg and the PReqs, the ACS those of the DS's leg. A role refuses a message exactly when its field table
/// finds something (ThirdParty/expected.json, which `ThirdPartyCorpusTests` holds the tables to), and its Erro names
/// one of those findings: a role that refused a published message its table accepts, or that let through one its
/// table refuses, would fail here.
@Suite("Third-party messages sent to the roles over HTTP")
struct ThirdPartyOverHTTPTests {
    static let folder = repositoryRoot + "/Tests/EMV3DSTests/ThirdParty/"

    struct Entry: Sendable, CustomTestStringConvertible {
        let file: String
        let path: String
        var testDescription: String { file }
    }

    /// The AReqs and PReqs a role of the harness receives, with the path it receives them at.
    static let entries: [Entry] = {
        guard let bytes = FileManager.default.contents(atPath: folder + "manifest.json"),
              let manifest = try? JSONReader.parse(Array(bytes)).value.arrayValue else { return [] }
        return manifest.compactMap { entry in
            guard let file = entry["file"]?.stringValue else { return nil }
            switch (entry["messageType"]?.stringValue, entry["leg"]?.stringValue) {
            case ("AReq", "3DS Server to DS"): return Entry(file: file, path: "/ds/areq")
            case ("AReq", "DS to ACS"): return Entry(file: file, path: "/acs/areq")
            case ("PReq", _): return Entry(file: file, path: "/ds/preq")
            default: return nil
            }
        }
    }()

    static let expected: [String: [String]] = {
        guard let bytes = FileManager.default.contents(atPath: folder + "expected.json"),
              let members = try? JSONReader.parse(Array(bytes)).value.objectMembers else { return [:] }
        return Dictionary(members.map { ($0.key, ($0.value.arrayValue ?? []).compactMap(\.stringValue)) }) { first, _ in first }
    }()

    /// The codes of the field rules: an Erro with another (302 for device data sealed to the sample's own DS key, 305 for a
    /// card in no range of this DS) is not a field table's verdict.
    static let fieldCodes: Set<String> = ["201", "202", "203", "204", "304"]

    @Test func theCorpusHasMessagesForTheRoles() {
        #expect(Self.entries.count >= 10, "\(Self.entries.map(\.file))")
    }

    @Test(arguments: MessageVersion.allCases)
    func eachRoleRefusesAThirdPartyMessageExactlyWhenItsTableFindsSomething(version: MessageVersion) async throws {
        // One harness per version: each message is sent once, its ids not yet seen.
        try await withHarness { harness in
            for entry in Self.entries {
                let bytes = try #require(FileManager.default.contents(atPath: Self.folder + entry.file), "\(entry.file)")
                var message = try JSONReader.parse(Array(bytes)).value
                message.set("messageVersion", .string(version.rawValue))
                let answer = try await harness.post(entry.path, JSONWriter.write(message))
                let json = try? JSONReader.parse(answer.body).value
                let findings = Self.expected["\(entry.file)@\(version.rawValue)"] ?? []
                let erro = json?["messageType"]?.stringValue == "Erro" ? json : nil
                let code = erro?["errorCode"]?.stringValue ?? ""
                let detail = erro?["errorDetail"]?.stringValue ?? ""
                if findings.isEmpty {
                    #expect(!Self.fieldCodes.contains(code), "\(entry.file) as \(version.rawValue): refused with Erro \(code) \(detail), though its table finds nothing")
                } else {
                    let named = findings.contains { finding in
                        let parts = finding.split(separator: " ", maxSplits: 1).map(String.init)
                        return parts.count == 2 && parts[0] == code && detail.contains(parts[1].split(separator: ".").first.map(String.init) ?? parts[1])
                    }
                    #expect(named, "\(entry.file) as \(version.rawValue): answered \(answer.status.code) \(answer.bodyText.prefix(300)), expected an Erro naming one of \(findings)")
                }
            }
        }
    }
}
