import Configuration
import Foundation
import Harness
import JSON
import Net
import SDKSimulator
import Store
import ThreeDSServer
import Testing
import TestSupport

/// The store behind the roles: what the three roles recorded is still there after a restart.
@Suite("Durable store: transactions survive a restart")
struct StoreFlowTests {
    /// The record of each role for a transaction the 3DS Server knows as `id`: (path, body).
    private func records(_ harness: RunningHarness, _ id: String) async throws -> [(String, [UInt8])] {
        let server = try await harness.get("/3ds-server/transactions/\(id)")
        #expect(server.status == .ok)
        let json = try JSONReader.parse(server.body).value
        let ds = try #require(json["dsTransID"]?.stringValue), acs = try #require(json["acsTransID"]?.stringValue)
        var records = [("/3ds-server/transactions/\(id)", server.body)]
        for path in ["/admin/ds/transactions/\(ds)", "/admin/acs/transactions/\(acs)"] {
            let response = try await harness.get(path)
            #expect(response.status == .ok, "\(path)")
            records.append((path, response.body))
        }
        return records
    }

    @Test func everyRolesRecordIsReadTheSameAfterARestart() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("harness-restart-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: data) }
        var before: [(String, [UInt8])] = []
        try await withHarness(dataDirectory: data) { harness in
            for (pan, answers) in [("4000000000001000", []), ("4000000000110009", ["1234"])] {
                let run = try await runTransaction(harness, pan: pan, answers: answers)
                before += try await records(harness, try #require(run.final.threeDSServerTransID))
            }
        }
        #expect(FileManager.default.fileExists(atPath: data + "/harness.sqlite"))
        try await withHarness(dataDirectory: data) { harness in
            #expect(harness.app.threeDSServer.transactions.count == 0)  // nothing in memory: read from the store
            for (path, body) in before {
                let response = try await harness.get(path)
                #expect(response.status == .ok && response.body == body, "\(path): \(response.bodyText)")
            }
            #expect(try await harness.get("/3ds-server/transactions/\(UUID().uuidString.lowercased())").status == .notFound)
        }
    }

    @Test func aDataDirectoryThatCannotBeWrittenStopsTheStartSayingWhatToDo() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-folder-\(UUID().uuidString)").path
        try Data().write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect {
            _ = try RunningHarness(dataDirectory: file + "/data")
        } throws: { error in
            let text = "\(error)"
            return text.contains("dataDirectory") && text.contains(file + "/data") && text.contains("store.enabled: false")
        }
    }

    @Test func theStoreCanBeTurnedOff() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("harness-off-\(UUID().uuidString)").path
        try await withHarness(dataDirectory: data, configure: { $0.store.enabled = false }) { harness in
            _ = try await runTransaction(harness, pan: "4000000000001000", answers: [])
            #expect(harness.app.archive == nil)
        }
        #expect(!FileManager.default.fileExists(atPath: data))
    }
}
