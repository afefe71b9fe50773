import Foundation
import JSON
import Testing
@testable import EMV3DS

/// Messages nobody on this project wrote (ThirdParty/README.md names each one's source: EMVCo's published samples,
/// 3dsecure.io's documentation, recorded scheme test-platform traffic, SDK fixtures), read by the field tables of the
/// role that receives them, as published and as each other version would send them. What the tables find is held to
/// ThirdParty/expected.json: every finding there is a deviation of the published sample itself from Annex A (its reason
/// is in the manifest's notes). A rule that starts refusing a published message, as 2.3.1's BroadcastInformation did
/// EMVCo's 2.1.0 `broadInfo`, shows here as a finding that is not expected.
@Suite("Third-party messages read by the field tables")
struct ThirdPartyCorpusTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ThirdParty")

    struct Entry: Sendable, CustomTestStringConvertible {
        let file: String
        let messageType: String
        let publishedVersion: String
        let leg: String
        var testDescription: String { file }
    }

    static let entries: [Entry] = {
        guard let bytes = FileManager.default.contents(atPath: folder.appendingPathComponent("manifest.json").path),
              let manifest = try? JSONReader.parse(Array(bytes)).value.arrayValue else { return [] }
        return manifest.compactMap { entry in
            guard let file = entry["file"]?.stringValue, let type = entry["messageType"]?.stringValue,
                  let version = entry["publishedVersion"]?.stringValue, let leg = entry["leg"]?.stringValue else { return nil }
            return Entry(file: file, messageType: type, publishedVersion: version, leg: leg)
        }
    }()

    /// The table of the role that receives the message on its leg; nil for what is no EMV message (an API's input).
    static func rules(for entry: Entry) -> MessageRules? {
        switch (entry.messageType, entry.leg) {
        case ("AReq", "DS to ACS"): AReqRules.fromDirectoryServer
        case ("AReq", "3DS Server to DS"): AReqRules.fromThreeDSServer
        case ("ARes", "ACS to DS"), ("ARes", "DS to 3DS Server"): AResRules.rules
        case ("CReq", "SDK to ACS"): ChallengeRules.cReq
        case ("CReq", "Browser to ACS"): ChallengeRules.browserCReq
        case ("CRes", "ACS to SDK"): ChallengeRules.cRes
        case ("CRes", "ACS to Browser (POSTed to notificationURL)"): ChallengeRules.browserFinalCRes
        case ("RReq", _): ResultsRules.rReq
        case ("RRes", _): ResultsRules.rRes
        case ("PReq", _): PreparationRules.pReq
        case ("PRes", _): PreparationRules.pRes
        case ("Erro", let leg) where !leg.contains("3dsecure.io"): ErroRules.rules
        default: nil
        }
    }

    /// The channel of a message that does not carry it (an ARes, a CRes), from its file's name.
    static func channel(of entry: Entry) -> DeviceChannel? {
        if entry.file.contains("-app") { return .app }
        if entry.file.contains("-browser") { return .browser }
        if entry.file.contains("-3ri") { return .threeRI }
        return nil
    }

    /// "code field" of each thing the receiving role's table finds, sorted, with `messageVersion` set to `version`.
    static func findings(_ entry: Entry, as version: MessageVersion) throws -> [String]? {
        guard let rules = rules(for: entry) else { return nil }
        let bytes = try #require(FileManager.default.contents(atPath: folder.appendingPathComponent(entry.file).path))
        let parsed = try JSONReader.parse(Array(bytes))
        var message = parsed.value
        message.set("messageVersion", .string(version.rawValue))
        let context = MessageContext(version: version, channel: channel(of: entry))
        let report = rules.check(message, context: context, duplicates: parsed.duplicates)
        return report.violations.map { "\($0.code.rawValue) \($0.field)" }.sorted()
    }

    static let expected: [String: [String]] = {
        guard let bytes = FileManager.default.contents(atPath: folder.appendingPathComponent("expected.json").path),
              let members = try? JSONReader.parse(Array(bytes)).value.objectMembers else { return [:] }
        return Dictionary(members.map { ($0.key, ($0.value.arrayValue ?? []).compactMap(\.stringValue)) }) { first, _ in first }
    }()

    @Test func theCorpusIsThere() {
        #expect(Self.entries.count >= 50, "ThirdParty/manifest.json lists \(Self.entries.count) messages")
        #expect(!Self.expected.isEmpty, "ThirdParty/expected.json is missing")
    }

    @Test(arguments: entries)
    func eachMessageReadsAsExpectedInEveryVersion(_ entry: Entry) throws {
        for version in MessageVersion.allCases {
            guard let found = try Self.findings(entry, as: version) else { return }
            let key = "\(entry.file)@\(version.rawValue)"
            #expect(found == Self.expected[key] ?? [], "\(key): \(found)")
        }
    }

    /// With THREEDS_HARNESS_WRITE_CORPUS_EXPECTATIONS=1, writes what the tables find now as ThirdParty/expected.json: for a
    /// message added to the corpus, whose every finding is then read against Annex A before it is committed.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["THREEDS_HARNESS_WRITE_CORPUS_EXPECTATIONS"] == "1"))
    func writeExpectations() throws {
        var members: [(key: String, value: JSONValue)] = []
        for entry in Self.entries {
            for version in MessageVersion.allCases {
                guard let found = try Self.findings(entry, as: version), !found.isEmpty else { continue }
                members.append(("\(entry.file)@\(version.rawValue)", .array(found.map(JSONValue.string))))
            }
        }
        let text = JSONWriter.string(.object(members)).replacingOccurrences(of: "],\"", with: "],\n\"")
        try (text + "\n").write(to: Self.folder.appendingPathComponent("expected.json"), atomically: true, encoding: .utf8)
    }

    /// EMVCo's own sample AReq carries broadInfo as 2.1.0 and 2.2.0 define it, a free-form object: taken there, and
    /// refused only where 2.3.1's BroadcastInformation applies.
    @Test(arguments: MessageVersion.allCases)
    func emvcosFreeFormBroadInfoIsTakenUpTo220(_ version: MessageVersion) throws {
        let sample = try #require(Self.entries.first { $0.file.contains("emvco-areq-2.1.0-browser") })
        let broadInfo = try #require(try Self.findings(sample, as: version)).filter { $0.hasSuffix("broadInfo") || $0.contains("broadInfo.") }
        #expect(broadInfo.isEmpty == (version != .v2_3_1), "\(version.rawValue): \(broadInfo)")
    }
}
