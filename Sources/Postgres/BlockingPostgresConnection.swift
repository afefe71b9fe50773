import CLibPQ
import Foundation

/// A blocking libpq connection: a schema at start, and reads on the caller's thread, for a caller that
/// holds it under a lock (hence `@unchecked`).
public final class BlockingPostgresConnection: @unchecked Sendable {
    private var connection: OpaquePointer?

    public init(url: String) throws(PostgresError) {
        let connection = PQconnectdb(url)
        guard let connection, PQstatus(connection) == CONNECTION_OK else {
            let message = connection.map { String(cString: PQerrorMessage($0)) } ?? "out of memory"
            PQfinish(connection)
            throw PostgresError(operation: "connect", message: message)
        }
        self.connection = connection
    }

    /// The rows of `sql` (several statements when there are no parameters), as text.
    public func query(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> [[String?]] {
        guard let connection else { throw PostgresError(operation: "query", message: "the connection is closed") }
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        let values = copies.map { $0.map { UnsafePointer($0) } }
        guard let result = parameters.isEmpty ? PQexec(connection, sql) : PQexecParams(connection, sql, Int32(values.count), nil, values, nil, nil, 0) else {
            throw PostgresError(operation: "query", message: String(cString: PQerrorMessage(connection)))
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
            throw PostgresError(operation: "query", message: String(cString: PQresultErrorMessage(result)),
                                sqlState: PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) })
        }
        return (0..<PQntuples(result)).map { row in
            (0..<PQnfields(result)).map { column in PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column)) }
        }
    }

    public func close() {
        PQfinish(connection)
        connection = nil
    }

    deinit { PQfinish(connection) }
}
