import ArgumentParser
import EMV3DS

/// `spec AReq --version 2.3.1 [--channel 02]`: the field table the harness enforces, so a
/// developer can see why a message was refused. The same as `GET /admin/spec/{type}/{version}`.
struct SpecCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "spec",
        abstract: "Print the field table the harness enforces for a message type and version.",
        discussion: "Tables: \(MessageTables.all.map { "\($0.name) (\($0.leg))" }.joined(separator: ", "))."
    )

    @Argument(help: "Message type: AReq, AReq-ACS, ARes, CReq, CRes, RReq, RRes, PReq, PRes or Erro.") var messageType: String
    @Option(name: .long, help: "Protocol version: 2.1.0, 2.2.0 or 2.3.1.") var version = MessageVersion.latest.rawValue
    @Option(name: .long, help: "Keep only the fields of one deviceChannel: 01 app, 02 browser, 03 3RI.") var channel: String?

    func run() throws {
        guard let version = MessageVersion(rawValue: version) else {
            throw ValidationError("--version \(version) is not one of \(MessageVersion.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var deviceChannel: DeviceChannel?
        if let channel {
            guard let known = DeviceChannel(rawValue: channel) else { throw ValidationError("--channel \(channel) is not 01, 02 or 03") }
            deviceChannel = known
        }
        guard let entry = MessageTables.named(messageType, channel: deviceChannel) else {
            throw ValidationError("no table \(messageType); tables: \(MessageTables.all.map(\.name).joined(separator: ", "))")
        }
        let rows = entry.rules.table(version: version, channel: deviceChannel)
        let scope = deviceChannel.map { ", deviceChannel \($0.rawValue) (\($0.name))" } ?? ""
        print("\(entry.name) \(version.rawValue)\(scope), \(entry.leg): \(rows.count) fields")
        let nameWidth = max(5, rows.map(\.name.count).max() ?? 0)
        let presenceWidth = min(60, max(8, rows.map(\.presence.count).max() ?? 0))
        func pad(_ text: String, _ width: Int) -> String { text.count >= width ? text : text + String(repeating: " ", count: width - text.count) }
        print(pad("field", nameWidth) + "  " + pad("presence", presenceWidth) + "  format")
        for row in rows { print(pad(row.name, nameWidth) + "  " + pad(row.presence, presenceWidth) + "  " + row.format) }
    }
}
