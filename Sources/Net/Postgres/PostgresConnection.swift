import CLibPQ
import CLibUV
import Foundation

/// Why a PostgreSQL operation failed: the server's or libpq's message, and the SQLSTATE when the
/// server gave one (`23505` a unique violation, `57P01` the server shutting down…).
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let message: String
    public let sqlState: String?

    public init(operation: String, message: String, sqlState: String? = nil) {
        self.operation = operation
        self.message = message
        self.sqlState = sqlState
    }

    /// A request that a stopped loop dropped.
    static func loopStopped(_ operation: String) -> PostgresError {
        PostgresError(operation: operation, message: "the connection's loop stopped before it ran")
    }

    public var description: String {
        "\(operation): \(message.trimmingCharacters(in: .whitespacesAndNewlines))" + (sqlState.map { " (SQLSTATE \($0))" } ?? "")
    }
}

/// What a query returned, as text (libpq's text format): rows of columns, NULL as nil.
public struct PostgresRows: Sendable {
    public let columns: [String]
    public let rows: [[String?]]
    /// Rows an INSERT, UPDATE or DELETE touched (`PQcmdTuples`); 0 for other commands.
    public let affected: Int
}

/// One PostgreSQL connection driven by libpq's asynchronous API on a libuv poll handle of one
/// loop: nothing blocks the loop. Queries run one at a time in the order they were asked for;
/// they may be asked for from any thread (each hops to the loop, where every field is touched).
/// A connection the server dropped fails its queries from then on: make a new one.
public final class PostgresConnection: LoopHandleOwner, @unchecked Sendable {
    public let loop: EventLoop
    private var connection: OpaquePointer?
    private var poll: UnsafeMutablePointer<uv_poll_t>?
    private var polledSocket: Int32 = -1
    private var connecting: LoopReply<Result<Void, PostgresError>>?
    private var waiting: [Query] = []
    private var running: Query?
    private var broken: PostgresError?
    /// The connection attempt's or the running query's time limit: a server that does not answer fails it, not hangs it.
    private var deadline: LoopTimer?
    private let timeoutMilliseconds: UInt64

    private struct Query {
        let sql: String
        let parameters: [String?]
        let done: LoopReply<Result<PostgresRows, PostgresError>>
        var last: Result<PostgresRows, PostgresError>?
    }

    private init(loop: EventLoop, timeoutMilliseconds: UInt64) {
        self.loop = loop
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// Connects to `url` (`postgresql://user@host:port/database`, or libpq's `key=value` form) on `loop`.
    /// `timeoutMilliseconds` bounds the connection and each query (libpq's own connect_timeout does not act here).
    public static func connect(_ url: String, on loop: EventLoop, timeoutMilliseconds: UInt64 = 30_000) async throws(PostgresError) -> PostgresConnection {
        let connection = PostgresConnection(loop: loop, timeoutMilliseconds: timeoutMilliseconds)
        let result = await LoopReply<Result<Void, PostgresError>>.awaiting(abandoned: .failure(.loopStopped("connect"))) { done in
            loop.execute { connection.start(url, done) }
        }
        try result.get()
        return connection
    }

    /// Runs `sql` with `parameters` ($1, $2… as text; nil is NULL); without parameters `sql` may hold
    /// several statements (the last one's rows are returned). Fails with the first error.
    public func query(_ sql: String, _ parameters: [String?] = []) async throws(PostgresError) -> PostgresRows {
        let result = await LoopReply<Result<PostgresRows, PostgresError>>.awaiting(abandoned: .failure(.loopStopped("query"))) { done in
            loop.execute { self.enqueue(Query(sql: sql, parameters: parameters, done: done)) }
        }
        return try result.get()
    }

    /// Fails what waits and closes the connection; idempotent. On the loop at once (a loop that is
    /// stopping runs no job handed to it later).
    public func close() {
        let closed = PostgresError(operation: "close", message: "the connection was closed")
        if loop.inLoop { fail(closed) } else { loop.execute { self.fail(closed) } }
    }

    // MARK: On the loop

    private func start(_ url: String, _ done: LoopReply<Result<Void, PostgresError>>) {
        connecting = done
        connection = PQconnectStart(url)
        guard let connection, PQstatus(connection) != CONNECTION_BAD else {
            return fail(PostgresError(operation: "connect", message: connection.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"))
        }
        PQsetnonblocking(connection, 1)
        startDeadline("connect")
        // libpq's sequence starts as if its poll had asked to write.
        advanceConnect(PGRES_POLLING_WRITING)
    }

    private func advanceConnect(_ state: PostgresPollingStatusType) {
        guard let connection else { return }
        switch state {
        case PGRES_POLLING_OK:
            let done = connecting
            connecting = nil
            stopDeadline()
            watchWhileIdle()
            done?.resume(returning: .success(()))
            startNext()
        case PGRES_POLLING_READING: watch(for: Int32(UV_READABLE.rawValue))
        case PGRES_POLLING_WRITING: watch(for: Int32(UV_WRITABLE.rawValue))
        default: fail(PostgresError(operation: "connect", message: String(cString: PQerrorMessage(connection))))
        }
    }

    /// Polls the connection's socket for `events` (none: stopped), following the socket when libpq changed it.
    private func watch(for events: Int32) {
        guard let connection else { return }
        let socket = PQsocket(connection)
        guard socket >= 0 else { return fail(PostgresError(operation: "poll", message: String(cString: PQerrorMessage(connection)))) }
        if socket != polledSocket, let old = poll {
            uv_poll_stop(old)
            closeOwnedHandle(old)
            poll = nil
        }
        if poll == nil {
            let handle = UnsafeMutablePointer<uv_poll_t>.allocate(capacity: 1)
            let initialised = uv_poll_init(loop.uvLoop, handle, socket)
            guard initialised == 0 else {
                handle.deallocate()
                return fail(PostgresError(operation: "poll", message: String(cString: uv_strerror(initialised))))
            }
            attach(self, to: handle)
            poll = handle
            polledSocket = socket
        }
        guard let poll else { return }
        guard events != 0 else { uv_poll_stop(poll); return }
        uv_poll_start(poll, events) { handle, status, events in
            owner(of: handle, as: PostgresConnection.self)?.ready(status: status, events: events)
        }
    }

    private func ready(status: Int32, events: Int32) {
        guard let connection else { return }
        if connecting != nil {
            // libpq may close and reopen the socket in its next step: the poll must not be watching it then.
            if let poll { uv_poll_stop(poll) }
            return advanceConnect(PQconnectPoll(connection))
        }
        guard status >= 0 else {
            let libpq = String(cString: PQerrorMessage(connection))
            return fail(PostgresError(operation: "poll", message: libpq.isEmpty ? String(cString: uv_strerror(status)) : libpq))
        }
        guard running != nil else { return idleInput() }
        if events & Int32(UV_WRITABLE.rawValue) != 0 { flush() }
        if events & Int32(UV_READABLE.rawValue) != 0 { read() }
    }

    /// Between queries the socket is watched too: a server that closed the connection (a restart,
    /// an idle timeout) is seen now, not by the next query.
    private func watchWhileIdle() { watch(for: Int32(UV_READABLE.rawValue)) }

    private func idleInput() {
        guard let connection else { return }
        if PQconsumeInput(connection) == 0 || PQstatus(connection) == CONNECTION_BAD {
            fail(PostgresError(operation: "read", message: String(cString: PQerrorMessage(connection)), sqlState: "08006"))
        }
    }

    private func startDeadline(_ operation: String) {
        let milliseconds = timeoutMilliseconds
        deadline?.close()
        deadline = loop.scheduleTimer(after: milliseconds) { [weak self] in
            self?.fail(PostgresError(operation: operation, message: "no answer from the server within \(milliseconds) ms", sqlState: "08006"))
        }
    }

    private func stopDeadline() {
        deadline?.close()
        deadline = nil
    }

    private func enqueue(_ query: Query) {
        if let broken { return query.done.resume(returning: .failure(broken)) }
        waiting.append(query)
        if connecting == nil, running == nil { startNext() }
    }

    private func startNext() {
        guard running == nil, connecting == nil, let connection, !waiting.isEmpty else { return }
        let query = waiting.removeFirst()
        running = query
        startDeadline("query")
        let sent: Int32 = query.parameters.isEmpty
            ? PQsendQuery(connection, query.sql)
            : withCStrings(query.parameters) { values in
                PQsendQueryParams(connection, query.sql, Int32(values.count), nil, values, nil, nil, 0)
            }
        guard sent == 1 else { return fail(PostgresError(operation: "send", message: String(cString: PQerrorMessage(connection)))) }
        flush()
    }

    /// Sends what libpq holds; reads meanwhile, as its documentation asks (the server may be waiting for us to read).
    private func flush() {
        guard let connection, running != nil else { return }
        switch PQflush(connection) {
        case 0: watch(for: Int32(UV_READABLE.rawValue))
        case 1: watch(for: Int32(UV_READABLE.rawValue | UV_WRITABLE.rawValue))
        default: fail(PostgresError(operation: "send", message: String(cString: PQerrorMessage(connection))))
        }
    }

    private func read() {
        guard let connection, running != nil else { return }
        guard PQconsumeInput(connection) == 1 else {
            return fail(PostgresError(operation: "read", message: String(cString: PQerrorMessage(connection)), sqlState: "08006"))
        }
        while PQisBusy(connection) == 0 {
            guard let result = PQgetResult(connection) else {
                // No more results: the query is done.
                let query = running
                running = nil
                stopDeadline()
                query?.done.resume(returning: query?.last ?? .failure(PostgresError(operation: "query", message: "no result")))
                watchWhileIdle()
                return startNext()
            }
            let status = PQresultStatus(result)
            let rows = Self.rows(of: result)
            PQclear(result)
            // COPY is not spoken here: it would keep the connection in its own sub-protocol.
            if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH {
                return fail(PostgresError(operation: "query", message: "COPY is not supported by this client"))
            }
            // The first error stands; rows are the last statement's.
            if case .failure = running?.last { continue }
            running?.last = rows
        }
    }

    private static func rows(of result: OpaquePointer) -> Result<PostgresRows, PostgresError> {
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            let columnCount = PQnfields(result)
            let columns = (0..<columnCount).map { String(cString: PQfname(result, $0)) }
            let rows = (0..<PQntuples(result)).map { row in
                (0..<columnCount).map { column in
                    PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
                }
            }
            return .success(PostgresRows(columns: columns, rows: rows, affected: Int(String(cString: PQcmdTuples(result))) ?? 0))
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            return .failure(PostgresError(operation: "query", message: String(cString: PQresultErrorMessage(result)), sqlState: state))
        }
    }

    /// Fails the connection attempt, the running query and those waiting, and closes the connection.
    private func fail(_ error: PostgresError) {
        broken = broken ?? error
        stopDeadline()
        connecting?.resume(returning: .failure(error))
        connecting = nil
        running?.done.resume(returning: .failure(error))
        running = nil
        waiting.forEach { $0.done.resume(returning: .failure(error)) }
        waiting = []
        if let poll {
            uv_poll_stop(poll)
            closeOwnedHandle(poll)
            self.poll = nil
        }
        if let connection { PQfinish(connection) }
        connection = nil
    }
}

/// `strings` as C strings (NULL for nil) for the length of `body`.
private func withCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { $0.map { strdup($0) } ?? nil }
    defer { copies.forEach { free($0) } }
    return body(copies.map { $0.map { UnsafePointer($0) } })
}
