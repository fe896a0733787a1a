import CSQLite
import CalWatchCore
import Foundation

/// A failed SQLite call, with SQLite's own message.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// An SQLite primary result code (<https://sqlite.org/rescode.html>), named where calwatch makes one itself.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// `SQLITE_NOTFOUND`: a row calwatch has just written could not be read back.
        public static let notFound = Code(rawValue: SQLITE_NOTFOUND)
        /// `SQLITE_CANTOPEN`: the database file or its folder could not be made.
        public static let cannotOpen = Code(rawValue: SQLITE_CANTOPEN)
        public var description: String { String(rawValue) }
    }

    public var code: Code
    public var message: String
    public var description: String { "SQLite error \(code): \(message)" }

    init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// An error from a result code SQLite returned.
    init(code: Int32, message: String) { self.init(code: Code(rawValue: code), message: message) }
}

/// One open database. Owns its `sqlite3*` and closes it in `deinit`; explicitly not `Sendable`: a connection is
/// used from one task at a time, and the handle never leaves this file and `SQLiteStatement`.
package final class SQLiteConnection {
    fileprivate let handle: OpaquePointer

    /// The version of the SQLite library loaded at run time, `3.40.1` (`calwatch --version`).
    package static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    /// Opens (creating) the database at `path` with the given file mode for a new file.
    init(path: String) throws {
        _ = Self.configured
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open \(path)"
            // "Whether or not an error occurs when it is opened, resources associated with the database connection
            // handle should be released by passing it to sqlite3_close() when it is no longer required."
            sqlite3_close(handle)
            throw SQLiteError(code: result, message: message)
        }
        self.handle = handle
        sqlite3_busy_timeout(handle, 5000)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Process-wide settings, made once before the first connection opens.
    private static let configured: Void = { _ = calwatch_sqlite3_disable_memstatus() }()

    /// Creates an empty database file with mode 0600 (and its folders with 0700) when there is none, so that
    /// SQLite, whose -wal and -shm files copy the database's mode, never makes it readable to others.
    static func createPrivately(path: String) throws {
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw SQLiteError(
                    code: .cannotOpen,
                    message: "cannot create the folder \(folder) (\(SourceDiscovery.reasonText(error)))")
            }
        }
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            else { throw SQLiteError(code: .cannotOpen, message: "cannot create \(path)") }
        }
    }

    /// The layout (`PRAGMA user_version`) a database was written with when it is not `expected`; `nil` when it is,
    /// or when the database is new: no table at all, or, when `sharing` names one, no table of that name (the
    /// SQLite sink may add its tables to a database of the user's; the journal is calwatch's alone).
    func otherLayout(than expected: Int64, sharing table: String? = nil) throws -> Int64? {
        let version = try prepare("PRAGMA user_version")
        try version.step()
        let found = version.integer(0)
        let tables = try prepare("SELECT count(*) FROM sqlite_master WHERE ?1 IS NULL OR name = ?1")
        try tables.bind([table.map { .text($0) } ?? .null])
        try tables.step()
        return found == expected || (found == 0 && tables.integer(0) == 0) ? nil : found
    }

    /// Runs statements that take no values and return no rows (schema, pragmas, BEGIN/COMMIT).
    func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &error)
        guard result == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(error)
            // SQLite's message only: the statements are calwatch's schema, which tells a user nothing.
            throw SQLiteError(code: result, message: message)
        }
    }

    /// Prepares a statement; values are bound to it, never formatted into the SQL.
    func prepare(_ sql: String) throws -> SQLiteStatement { try SQLiteStatement(self, sql) }

    /// Runs `body` in one transaction, rolled back if it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    fileprivate func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// A prepared statement of a connection; finalized in `deinit`.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private let connection: SQLiteConnection

    fileprivate init(_ connection: SQLiteConnection, _ sql: String) throws {
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v2(connection.handle, sql, -1, &statement, nil)
        guard result == SQLITE_OK, let statement else { throw connection.error(result) }
        self.statement = statement
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(statement)
    }

    /// Binds values to `?1`, `?2`, … in order, after a reset.
    func bind(_ values: [SQLiteValue]) throws {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .integer(let number): result = sqlite3_bind_int64(statement, index, number)
            case .text(let text):
                // SQLITE_TRANSIENT: SQLite copies the text before this call returns.
                result = sqlite3_bind_text(
                    statement, index, text, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            case .null: result = sqlite3_bind_null(statement, index)
            }
            guard result == SQLITE_OK else { throw connection.error(result) }
        }
    }

    /// Binds `row` to `?1`, `?2`, … and steps once (an INSERT or UPDATE): `true` when it changed a row. The texts
    /// are bound from the row's buffer without a copy and unbound before this returns.
    @discardableResult
    func run(_ row: borrowing SQLRow) throws -> Bool {
        try withBound(row) {
            try step()
            return sqlite3_changes(connection.handle) > 0
        }
    }

    /// Binds `row` and returns the first column of the first result row, if any.
    func firstInteger(_ row: borrowing SQLRow) throws -> Int64? {
        try withBound(row) { try step() ? integer(0) : nil }
    }

    private func withBound<T>(_ row: borrowing SQLRow, _ body: () throws -> T) throws -> T {
        sqlite3_reset(statement)
        return try row.buffer.bytes.withUnsafeBufferPointer { bytes in
            defer {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            // The buffer always holds its leading byte, so the base address is never nil (nil binds NULL).
            let base = bytes.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bytes.count) { $0 }
            for (offset, value) in row.values.enumerated() {
                let index = Int32(offset + 1)
                let result: Int32
                switch value {
                case .integer(let number): result = sqlite3_bind_int64(statement, index, number)
                case .text(let range):
                    // A nil destructor is SQLITE_STATIC: SQLite reads the bytes in place until they are unbound.
                    result = sqlite3_bind_text(statement, index, base + range.lowerBound, Int32(range.count), nil)
                case .null: result = sqlite3_bind_null(statement, index)
                }
                guard result == SQLITE_OK else { throw connection.error(result) }
            }
            return try body()
        }
    }

    /// Steps once: `true` when a row is available.
    @discardableResult
    func step() throws -> Bool {
        let result = sqlite3_step(statement)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(result)
        }
    }

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }

    func text(_ column: Int32) -> String? {
        guard let pointer = sqlite3_column_text(statement, column) else { return nil }
        return String(cString: pointer)
    }

    /// The number of columns of a row.
    var columns: Int32 { sqlite3_column_count(statement) }

    /// The number of rows the last step changed.
    var changes: Int32 { sqlite3_changes(sqlite3_db_handle(statement)) }
}

/// A value bound to a statement.
enum SQLiteValue {
    case integer(Int64)
    case text(String)
    case null
}
