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

extension PostgresError {
    /// The connection is gone (its SQLSTATE class 08, the server shutting down 57P0x, or libpq's own
    /// failure without one): a new connection may succeed where this one failed.
    public var isConnectionLoss: Bool {
        guard let sqlState else { return true }
        return sqlState.hasPrefix("08") || sqlState.hasPrefix("57P0")
    }
}
