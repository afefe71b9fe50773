import CSQLite

/// A failed SQLite call: what was being done, SQLite's result code and its message.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let code: Int32
    public let message: String

    public var description: String { "\(operation): \(message) (SQLite \(code))" }
    /// The disk or the database's page limit is full: a write is lost, the store goes on.
    public var isFull: Bool { code & 0xFF == SQLITE_FULL }
}

/// One connection to a database file: the thin layer the archive needs, no more. Not
/// thread-safe; its owner confines it to one thread or one lock.
final class SQLiteConnection {
    private var handle: OpaquePointer?

    init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        let flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let result = sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard result == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            handle = nil
            throw SQLiteError(operation: "open \(path)", code: result, message: message)
        }
        // A reader waits for a writer's commit rather than failing at once.
        sqlite3_busy_timeout(handle, 5_000)
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs statements without results (schema, pragmas, BEGIN/COMMIT).
    func execute(_ sql: String) throws(SQLiteError) {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), sql)
    }

    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil), "prepare \(sql)")
        return SQLiteStatement(statement, connection: self)
    }

    /// A single integer (`PRAGMA user_version`, `SELECT count(*)`).
    func integer(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { return 0 }
        return statement.integer(0)
    }

    /// Rows the last INSERT, UPDATE or DELETE changed.
    var changes: Int64 { sqlite3_changes64(handle) }

    func check(_ result: Int32, _ operation: String) throws(SQLiteError) {
        guard result == SQLITE_OK || result == SQLITE_DONE || result == SQLITE_ROW else {
            throw SQLiteError(operation: operation, code: sqlite3_extended_errcode(handle), message: String(cString: sqlite3_errmsg(handle)))
        }
    }
}

/// A prepared statement; reset and re-bound for each use.
final class SQLiteStatement {
    private let statement: OpaquePointer?
    private let connection: SQLiteConnection

    fileprivate init(_ statement: OpaquePointer?, connection: SQLiteConnection) {
        self.statement = statement
        self.connection = connection
    }

    deinit { sqlite3_finalize(statement) }

    /// Clears the last run and binds `values` to ?1, ?2, ...
    func bind(_ values: SQLiteValue...) throws(SQLiteError) {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32 = switch value {
            case .integer(let number): sqlite3_bind_int64(statement, index, number)
            case .text(let text): sqlite3_bind_text(statement, index, text, -1, threeds_sqlite_transient())
            case .blob(let bytes): bytes.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), threeds_sqlite_transient()) }
            }
            try connection.check(result, "bind")
        }
    }

    /// Runs one step: true when a row is there to read.
    func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(statement)
        try connection.check(result, "step")
        return result == SQLITE_ROW
    }

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func text(_ column: Int32) -> String {
        sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
    }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}

enum SQLiteValue {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
}
