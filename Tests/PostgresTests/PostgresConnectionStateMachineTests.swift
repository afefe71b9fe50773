import Testing
@testable import Postgres

/// Each transition of a PostgreSQL connection's state machine: what it does with a connect, a query, a result and a
/// failure in each state. Replies are names here; the connection's are continuations.
@Suite("PostgreSQL connection state machine")
struct PostgresConnectionStateMachineTests {
    typealias Machine = PostgresConnectionStateMachine<String, String>

    static func query(_ name: String) -> Machine.Query { .init(sql: "SELECT '\(name)'", parameters: [], reply: name) }
    static let rows = PostgresRows(columns: ["a"], rows: [["1"]], affected: 0)
    static let lost = PostgresError(operation: "read", message: "server closed the connection", sqlState: "08006")

    /// The action as words, to compare.
    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none: "none"
        case .send(let query): "send \(query.reply)"
        case .reportConnected(let reply, let next): "connected \(reply)" + (next.map { ", send \($0.reply)" } ?? "")
        case .reportResult(let reply, let result, let next):
            "result \(reply): " + ((try? result.get()).map { "\($0.rows)" } ?? "failed") + (next.map { ", send \($0.reply)" } ?? "")
        case .refuse(let reply, let error): "refuse \(reply): \(error.message)"
        case .failAndClose(let connect, let queries, let error):
            "fail \(([connect].compactMap { $0 } + queries).joined(separator: " ")): \(error.message)"
        }
    }

    static func connected() -> Machine {
        var machine = Machine()
        _ = machine.startConnecting("connect")
        _ = machine.connected()
        return machine
    }

    @Test func aConnectionMadeIsReportedAndWaitsIdle() {
        var machine = Machine()
        #expect(Self.describe(machine.startConnecting("connect")) == "none")
        #expect(machine.isConnecting)
        #expect(Self.describe(machine.connected()) == "connected connect")
        #expect(!machine.isConnecting && !machine.isRunning)
    }

    @Test func queriesAskedWhileConnectingWaitAndTheFirstIsSentOnceConnected() {
        var machine = Machine()
        _ = machine.startConnecting("connect")
        #expect(Self.describe(machine.asked(Self.query("q1"))) == "none")
        #expect(Self.describe(machine.asked(Self.query("q2"))) == "none")
        #expect(Self.describe(machine.connected()) == "connected connect, send q1")
        #expect(machine.isRunning)
        machine.received(.success(Self.rows))
        #expect(Self.describe(machine.queryDone()) == #"result q1: [[Optional("1")]], send q2"#)
    }

    @Test func aQueryAskedWhenIdleIsSentAtOnceAndOneAskedWhileRunningWaitsItsTurn() {
        var machine = Self.connected()
        #expect(Self.describe(machine.asked(Self.query("q1"))) == "send q1")
        #expect(Self.describe(machine.asked(Self.query("q2"))) == "none")
        #expect(Self.describe(machine.queryDone()) == "result q1: failed, send q2")
        machine.received(.success(Self.rows))
        #expect(Self.describe(machine.queryDone()) == #"result q2: [[Optional("1")]]"#)
        #expect(!machine.isRunning)
    }

    @Test func theFirstErrorOfAQueryStandsOverTheRowsOfLaterStatements() {
        var machine = Self.connected()
        _ = machine.asked(Self.query("q1"))
        machine.received(.failure(PostgresError(operation: "query", message: "syntax error", sqlState: "42601")))
        machine.received(.success(Self.rows))
        #expect(Self.describe(machine.queryDone()) == "result q1: failed")
    }

    @Test func aQueryThatGaveNoResultFails() {
        var machine = Self.connected()
        _ = machine.asked(Self.query("q1"))
        guard case .reportResult(_, .failure(let error), _) = machine.queryDone() else {
            Issue.record("a query without a result reported success")
            return
        }
        #expect(error.message == "no result")
    }

    @Test func aFailureWhileConnectingFailsTheConnectAndEveryQueryWaiting() {
        var machine = Machine()
        _ = machine.startConnecting("connect")
        _ = machine.asked(Self.query("q1"))
        #expect(Self.describe(machine.failed(Self.lost)) == "fail connect q1: server closed the connection")
    }

    @Test func aFailureWhileRunningFailsTheRunningQueryAndThoseWaiting() {
        var machine = Self.connected()
        _ = machine.asked(Self.query("q1"))
        _ = machine.asked(Self.query("q2"))
        #expect(Self.describe(machine.failed(Self.lost)) == "fail q1 q2: server closed the connection")
        #expect(!machine.isRunning)
    }

    @Test func aBrokenConnectionRefusesEveryLaterQueryWithTheErrorThatBrokeIt() {
        var machine = Self.connected()
        _ = machine.failed(Self.lost)
        #expect(Self.describe(machine.asked(Self.query("q3"))) == "refuse q3: server closed the connection")
        let closed = PostgresError(operation: "close", message: "the connection was closed")
        #expect(Self.describe(machine.failed(closed)) == "fail : server closed the connection", "closed again, nothing left to fail")
    }

    @Test func aFailureWhenIdleBreaksTheConnection() {
        var machine = Self.connected()
        #expect(Self.describe(machine.failed(Self.lost)) == "fail : server closed the connection")
        #expect(Self.describe(machine.asked(Self.query("q1"))) == "refuse q1: server closed the connection")
    }

    @Test func eventsOutOfTheirStateChangeNothing() {
        var machine = Machine()
        #expect(Self.describe(machine.asked(Self.query("q1"))) == "refuse q1: the connection is not made")
        #expect(Self.describe(machine.connected()) == "none")
        #expect(Self.describe(machine.queryDone()) == "none")
        machine.received(.success(Self.rows))
        var started = Self.connected()
        #expect(Self.describe(started.startConnecting("again")) == "fail again: the connection was started already")
        #expect(Self.describe(started.connected()) == "none")
        #expect(Self.describe(started.queryDone()) == "none")
    }
}
