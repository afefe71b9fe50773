import Configuration
import Harness
import Scenarios
import Testing

@Suite("Pin board: bounded and expiring")
struct PinBoardTests {
    let scenario: Scenario

    init() throws { scenario = try ScenarioFile.parseScenario(#"{"name":"x","description":"d","transStatus":"Y"}"#, source: "t") }

    @Test func aFullBoardRefusesUntilAPinIsUsed() throws {
        let board = PinBoard(capacity: 2)
        _ = try board.add(scenario, for: .pan("4111111111111111"), count: 1)
        _ = try board.add(scenario, for: .pan("4000000000001000"), count: 1)
        #expect(throws: PinBoard.Full.self) { try board.add(scenario, for: .pan("5200000000001005"), count: 1) }
        #expect(board.take(pan: "4111111111111111", sdkTransID: nil)?.name == "x")
        _ = try board.add(scenario, for: .pan("5200000000001005"), count: 1)
    }

    @Test func anExpiredPinIsNeitherUsedNorListedNorCounted() throws {
        let board = PinBoard(capacity: 1)
        _ = try board.add(scenario, for: .pan("4000000000001000"), count: 5, lifetime: .zero)
        #expect(board.take(pan: "4000000000001000", sdkTransID: nil) == nil)
        #expect(board.all().isEmpty)
        _ = try board.add(scenario, for: .pan("4111111111111111"), count: 1)
    }

    @Test func aTeamsPinsApplyToItsTransactionsAloneAndItRemovesItsOwnAlone() throws {
        let board = PinBoard()
        let pan = "4111111111111111"
        _ = try board.add(scenario, for: .pan(pan), team: "red", count: 2)
        _ = try board.add(scenario, for: .pan(pan), count: 1)
        #expect(board.take(pan: pan, sdkTransID: nil, team: "blue") == nil)
        #expect(board.all(team: "blue").isEmpty)
        #expect(board.all(team: "red").map(\.remaining) == [2])
        #expect(board.all().map(\.remaining) == [1])
        // The shared scope's DELETE leaves the red team's pin; the red team's takes it.
        #expect(board.remove(nil) == 1)
        #expect(board.take(pan: pan, sdkTransID: nil) == nil)
        #expect(board.take(pan: pan, sdkTransID: nil, team: "red")?.name == "x")
        #expect(board.remove(.pan(pan), team: "red") == 1)
        #expect(board.take(pan: pan, sdkTransID: nil, team: "red") == nil)
    }
}
