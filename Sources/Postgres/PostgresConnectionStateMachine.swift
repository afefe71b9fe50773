/// The order of a PostgreSQL connection's work, apart from libpq and the loop: connecting, then one query at a time in
/// the order asked, and once broken, every query refused with the error that broke it. Each event returns the action
/// the connection takes (postgres-nio's `ConnectionStateMachine` is the model): pure, so that each transition has a test.
struct PostgresConnectionStateMachine<ConnectReply, QueryReply> {
    struct Query {
        let sql: String
        let parameters: [String?]
        let reply: QueryReply
    }

    enum State {
        case notConnected
        case connecting(ConnectReply, waiting: [Query])
        case idle
        /// A query sent: the result of its statements so far (the first error stands; rows are the last statement's).
        case running(Query, result: Result<PostgresRows, PostgresError>?, waiting: [Query])
        case broken(PostgresError)
    }

    enum Action {
        case none
        /// Send this query.
        case send(Query)
        /// The connection is made: tell its caller, then send `next` when there is one.
        case reportConnected(ConnectReply, next: Query?)
        /// The query is done: give its caller the result, then send `next` when there is one.
        case reportResult(QueryReply, Result<PostgresRows, PostgresError>, next: Query?)
        /// Refuse this query: the connection is broken (or was never made).
        case refuse(QueryReply, PostgresError)
        /// Fail the connect and the queries with the error, and close the connection (again: closing is idempotent).
        case failAndClose(connect: ConnectReply?, queries: [QueryReply], PostgresError)
    }

    private(set) var state = State.notConnected

    var isConnecting: Bool { if case .connecting = state { true } else { false } }
    var isRunning: Bool { if case .running = state { true } else { false } }

    mutating func startConnecting(_ reply: ConnectReply) -> Action {
        guard case .notConnected = state else {
            return .failAndClose(connect: reply, queries: [], PostgresError(operation: "connect", message: "the connection was started already"))
        }
        state = .connecting(reply, waiting: [])
        return .none
    }

    mutating func connected() -> Action {
        guard case .connecting(let reply, var waiting) = state else { return .none }
        guard !waiting.isEmpty else {
            state = .idle
            return .reportConnected(reply, next: nil)
        }
        let next = waiting.removeFirst()
        state = .running(next, result: nil, waiting: waiting)
        return .reportConnected(reply, next: next)
    }

    mutating func asked(_ query: Query) -> Action {
        switch state {
        case .notConnected:
            return .refuse(query.reply, PostgresError(operation: "query", message: "the connection is not made"))
        case .connecting(let reply, let waiting):
            state = .connecting(reply, waiting: waiting + [query])
            return .none
        case .idle:
            state = .running(query, result: nil, waiting: [])
            return .send(query)
        case .running(let running, let result, let waiting):
            state = .running(running, result: result, waiting: waiting + [query])
            return .none
        case .broken(let error):
            return .refuse(query.reply, error)
        }
    }

    /// The result of one statement of the running query.
    mutating func received(_ statement: Result<PostgresRows, PostgresError>) {
        guard case .running(let query, let result, let waiting) = state else { return }
        if case .failure = result { return }
        state = .running(query, result: statement, waiting: waiting)
    }

    /// libpq has no more results for the running query.
    mutating func queryDone() -> Action {
        guard case .running(let query, let result, var waiting) = state else { return .none }
        let outcome = result ?? .failure(PostgresError(operation: "query", message: "no result"))
        guard !waiting.isEmpty else {
            state = .idle
            return .reportResult(query.reply, outcome, next: nil)
        }
        let next = waiting.removeFirst()
        state = .running(next, result: nil, waiting: waiting)
        return .reportResult(query.reply, outcome, next: next)
    }

    mutating func failed(_ error: PostgresError) -> Action {
        switch state {
        case .notConnected, .idle:
            state = .broken(error)
            return .failAndClose(connect: nil, queries: [], error)
        case .connecting(let reply, let waiting):
            state = .broken(error)
            return .failAndClose(connect: reply, queries: waiting.map(\.reply), error)
        case .running(let query, _, let waiting):
            state = .broken(error)
            return .failAndClose(connect: nil, queries: [query.reply] + waiting.map(\.reply), error)
        case .broken(let first):
            return .failAndClose(connect: nil, queries: [], first)
        }
    }
}
