import CLibPQ
import CLibUV
public import EventLoops
import Foundation

/// What a query returned, as text (libpq's text format): rows of columns, NULL as nil.
public struct PostgresRows: Sendable {
    public let columns: [String]
    public let rows: [[String?]]
    /// Rows an INSERT, UPDATE or DELETE touched (`PQcmdTuples`); 0 for other commands.
    public let affected: Int
}

/// One PostgreSQL connection driven by libpq's asynchronous API on a libuv poll handle of one
/// loop: nothing blocks the loop. Queries run one at a time in the order they were asked for;
/// they may be asked for from any thread (each hops to the loop, where all its state lives).
/// A connection the server dropped fails its queries from then on: make a new one.
public final class PostgresConnection: Sendable {
    public let loop: EventLoop
    private let core: LoopBound<Core>

    private init(loop: EventLoop, timeoutMilliseconds: UInt64) {
        self.loop = loop
        core = LoopBound(Core(loop: loop, timeoutMilliseconds: timeoutMilliseconds), on: loop)
    }

    /// Connects to `url` (`postgresql://user@host:port/database`, or libpq's `key=value` form) on `loop`.
    /// `timeoutMilliseconds` bounds the connection and each query (libpq's own connect_timeout does not act here).
    public static func connect(_ url: String, on loop: EventLoop, timeoutMilliseconds: UInt64 = 30_000) async throws(PostgresError) -> PostgresConnection {
        let connection = PostgresConnection(loop: loop, timeoutMilliseconds: timeoutMilliseconds)
        let core = connection.core
        let result = await LoopReply<Result<Void, PostgresError>>.awaiting(abandoned: .failure(.loopStopped("connect"))) { done in
            loop.execute { core.value.start(url, done) }
        }
        try result.get()
        return connection
    }

    /// Runs `sql` with `parameters` ($1, $2… as text; nil is NULL); without parameters `sql` may hold
    /// several statements (the last one's rows are returned). Fails with the first error.
    public func query(_ sql: String, _ parameters: [String?] = []) async throws(PostgresError) -> PostgresRows {
        let core = core
        let result = await LoopReply<Result<PostgresRows, PostgresError>>.awaiting(abandoned: .failure(.loopStopped("query"))) { done in
            loop.execute { core.value.ask(.init(sql: sql, parameters: parameters, reply: done)) }
        }
        return try result.get()
    }

    /// Fails what waits and closes the connection; idempotent. On the loop at once (a loop that is
    /// stopping runs no job handed to it later).
    public func close() {
        let core = core
        if loop.inLoop { core.value.close() } else { loop.execute { core.value.close() } }
    }
}

/// The connection on its loop: libpq's connection, the poll handle on its socket, the time limit, and the state machine
/// that orders the work. The poll handle holds it (``LoopHandleOwner``) while it is open.
private final class Core: LoopHandleOwner {
    typealias StateMachine = PostgresConnectionStateMachine<LoopReply<Result<Void, PostgresError>>, LoopReply<Result<PostgresRows, PostgresError>>>

    let loop: EventLoop
    private var machine = StateMachine()
    private var connection: OpaquePointer?
    private var poll: UnsafeMutablePointer<uv_poll_t>?
    private var polledSocket: Int32 = -1
    /// The connection attempt's or the running query's time limit: a server that does not answer fails it, not hangs it.
    private var deadline: LoopTimer?
    private let timeoutMilliseconds: UInt64

    init(loop: EventLoop, timeoutMilliseconds: UInt64) {
        self.loop = loop
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    func start(_ url: String, _ done: LoopReply<Result<Void, PostgresError>>) {
        perform(machine.startConnecting(done))
        guard machine.isConnecting else { return }
        connection = PQconnectStart(url)
        guard let connection, PQstatus(connection) != CONNECTION_BAD else {
            return fail(PostgresError(operation: "connect", message: connection.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"))
        }
        PQsetnonblocking(connection, 1)
        startDeadline("connect")
        // libpq's sequence starts as if its poll had asked to write.
        advanceConnect(PGRES_POLLING_WRITING)
    }

    func ask(_ query: StateMachine.Query) {
        perform(machine.asked(query))
    }

    func close() {
        fail(PostgresError(operation: "close", message: "the connection was closed"))
    }

    /// Does what the state machine says.
    private func perform(_ action: StateMachine.Action) {
        switch action {
        case .none:
            break
        case .send(let query):
            send(query)
        case .reportConnected(let reply, let next):
            stopDeadline()
            watchWhileIdle()
            reply.resume(returning: .success(()))
            if let next { send(next) }
        case .reportResult(let reply, let result, let next):
            stopDeadline()
            reply.resume(returning: result)
            watchWhileIdle()
            if let next { send(next) }
        case .refuse(let reply, let error):
            reply.resume(returning: .failure(error))
        case .failAndClose(let connect, let queries, let error):
            stopDeadline()
            connect?.resume(returning: .failure(error))
            queries.forEach { $0.resume(returning: .failure(error)) }
            if let poll {
                uv_poll_stop(poll)
                closeOwnedHandle(poll)
                self.poll = nil
            }
            if let connection { PQfinish(connection) }
            connection = nil
        }
    }

    private func fail(_ error: PostgresError) {
        perform(machine.failed(error))
    }

    private func advanceConnect(_ state: PostgresPollingStatusType) {
        guard let connection else { return }
        switch state {
        case PGRES_POLLING_OK: perform(machine.connected())
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
            owner(of: handle, as: Core.self)?.ready(status: status, events: events)
        }
    }

    private func ready(status: Int32, events: Int32) {
        guard let connection else { return }
        if machine.isConnecting {
            // libpq may close and reopen the socket in its next step: the poll must not be watching it then.
            if let poll { uv_poll_stop(poll) }
            return advanceConnect(PQconnectPoll(connection))
        }
        guard status >= 0 else {
            let libpq = String(cString: PQerrorMessage(connection))
            return fail(PostgresError(operation: "poll", message: libpq.isEmpty ? String(cString: uv_strerror(status)) : libpq))
        }
        guard machine.isRunning else { return idleInput() }
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

    private func send(_ query: StateMachine.Query) {
        guard let connection else { return fail(PostgresError(operation: "send", message: "the connection is closed")) }
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
        guard let connection, machine.isRunning else { return }
        switch PQflush(connection) {
        case 0: watch(for: Int32(UV_READABLE.rawValue))
        case 1: watch(for: Int32(UV_READABLE.rawValue | UV_WRITABLE.rawValue))
        default: fail(PostgresError(operation: "send", message: String(cString: PQerrorMessage(connection))))
        }
    }

    private func read() {
        guard let connection, machine.isRunning else { return }
        guard PQconsumeInput(connection) == 1 else {
            return fail(PostgresError(operation: "read", message: String(cString: PQerrorMessage(connection)), sqlState: "08006"))
        }
        while PQisBusy(connection) == 0 {
            guard let result = PQgetResult(connection) else {
                // No more results: the query is done.
                return perform(machine.queryDone())
            }
            let status = PQresultStatus(result)
            let rows = Self.rows(of: result)
            PQclear(result)
            // COPY is not spoken here: it would keep the connection in its own sub-protocol.
            if status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH {
                return fail(PostgresError(operation: "query", message: "COPY is not supported by this client"))
            }
            machine.received(rows)
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
}

/// `strings` as C strings (NULL for nil) for the length of `body`.
private func withCStrings<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { $0.map { strdup($0) } ?? nil }
    defer { copies.forEach { free($0) } }
    return body(copies.map { $0.map { UnsafePointer($0) } })
}
