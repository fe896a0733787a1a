import CLibPQ
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A failed PostgreSQL call, with the server's (or libpq's) message and, for a server error, its SQLSTATE.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// A five-character SQLSTATE (PostgreSQL's appendix A, "Error Codes"), named where calwatch acts on one.
    public struct State: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// `unique_violation`: a row with that key is already stored (a batch delivered again after a crash).
        public static let uniqueViolation = State(rawValue: "23505")
    }

    public var message: String
    /// The server's SQLSTATE (`42P01`, `08006`, …), `nil` when libpq failed before the server answered.
    public var state: State?

    public var description: String { message }
}

/// One libpq connection, used by one owner at a time (the PostgreSQL sink's actor, on a thread of its own: every
/// libpq call here blocks). Statements without values go as simple queries, several at once; values are bound
/// (`$1`, `$2`, …), never formatted into SQL; bulk rows go through COPY. It may move between threads (libpq allows
/// that) but is never used by two at once, which its owner ensures: hence `@unchecked Sendable`.
public final class PostgresConnection: @unchecked Sendable {
    private let connection: OpaquePointer

    /// Connects to `url` (a `postgres://` URI or `key=value` pairs; a Unix socket is `?host=/run/postgresql`).
    /// `password`, when given, overrides one in the URL; otherwise libpq reads `PGPASSWORD` or `PGPASSFILE`.
    /// Connecting gives up after `timeout` seconds.
    public init(url: String, password: String? = nil, applicationName: String = "calwatch", timeout: Int = 10) throws {
        var keywords = ["dbname", "application_name", "connect_timeout", "keepalives_idle"]
        var values = [url, applicationName, String(timeout), "30"]
        if let password {
            keywords.append("password")
            values.append(password)
        }
        let connection = Self.withCStrings(keywords) { keywords in
            Self.withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else { throw PostgresError(message: "libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(message: message, state: nil)
        }
        // libpq prints the server's notices ("relation … already exists, skipping") on standard error; calwatch
        // reports what matters itself.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        self.connection = connection
    }

    deinit {
        PQfinish(connection)
    }

    /// libpq's version, `15.18`.
    public static var libraryVersion: String {
        let version = Int(PQlibVersion())
        return "\(version / 10_000).\(version % 10_000)"
    }

    /// Whether the connection still works as far as libpq knows (a server that went away is seen on the next call).
    public var isUsable: Bool { PQstatus(connection) == CONNECTION_OK }

    /// The server's version, `150018` for 15.18.
    public var serverVersion: Int { Int(PQserverVersion(connection)) }

    /// The server's version as people write it: `15.18`.
    public var serverVersionText: String {
        let version = serverVersion
        return version >= 100_000
            ? "\(version / 10_000).\(version % 10_000)" : "\(version / 10_000).\(version / 100 % 100)"
    }

    /// Runs statements that take no values (several, separated by `;`) and returns the rows of the last one, each
    /// value as text or `nil` for NULL.
    @discardableResult
    public func execute(_ sql: String) throws -> [[String?]] {
        try rows(of: PQexec(connection, sql), for: sql)
    }

    /// Runs one statement with `values` bound to `$1`, `$2`, … as text, and returns its rows.
    @discardableResult
    public func execute(_ sql: String, _ values: [String?]) throws -> [[String?]] {
        let result = Self.withCStrings(values) { bound in
            PQexecParams(connection, sql, Int32(values.count), nil, bound, nil, nil, 0)
        }
        return try rows(of: result, for: sql)
    }

    /// Sends `data`, lines of COPY text, through `copy` (`COPY table (columns) FROM STDIN`).
    public func copy(_ copy: String, data: [UInt8]) throws {
        let started = PQexec(connection, copy)
        defer { PQclear(started) }
        guard PQresultStatus(started) == PGRES_COPY_IN else {
            throw error(started, for: copy)
        }
        let sent = data.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { PQputCopyData(connection, $0.baseAddress, Int32($0.count)) }
        }
        guard sent == 1, PQputCopyEnd(connection, nil) == 1 else {
            throw PostgresError(message: Self.message(PQerrorMessage(connection)))
        }
        var failure: PostgresError?
        while let result = PQgetResult(connection) {
            if PQresultStatus(result) != PGRES_COMMAND_OK, failure == nil { failure = error(result, for: copy) }
            PQclear(result)
        }
        if let failure { throw failure }
    }

    /// Quotes `text` as an SQL string literal for this connection's encoding.
    public func literal(_ text: String) throws -> String {
        guard let quoted = PQescapeLiteral(connection, text, text.utf8.count) else {
            throw PostgresError(message: Self.message(PQerrorMessage(connection)))
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// A notification received after `LISTEN`.
    public struct Notification: Sendable, Equatable {
        public var channel: String
        public var payload: String
    }

    /// The notifications that arrived, waiting up to `timeout` milliseconds for the first when none has.
    public func notifications(waitingUpTo timeout: Int32) throws -> [Notification] {
        var received = takeNotifications()
        if received.isEmpty {
            var descriptor = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, timeout) > 0 {
                guard PQconsumeInput(connection) == 1 else {
                    throw PostgresError(message: Self.message(PQerrorMessage(connection)))
                }
                received = takeNotifications()
            }
        }
        return received
    }

    private func takeNotifications() -> [Notification] {
        _ = PQconsumeInput(connection)
        var received: [Notification] = []
        while let notification = PQnotifies(connection) {
            received.append(
                Notification(
                    channel: String(cString: notification.pointee.relname),
                    payload: String(cString: notification.pointee.extra)))
            PQfreemem(notification)
        }
        return received
    }

    // MARK: Results

    private func rows(of result: OpaquePointer?, for sql: String) throws -> [[String?]] {
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK: return []
        case PGRES_TUPLES_OK:
            return (0..<PQntuples(result)).map { row in
                (0..<PQnfields(result)).map { column in
                    PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
                }
            }
        default: throw error(result, for: sql)
        }
    }

    private func error(_ result: OpaquePointer?, for sql: String) -> PostgresError {
        guard let result else { return PostgresError(message: Self.message(PQerrorMessage(connection))) }
        let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map {
            PostgresError.State(rawValue: String(cString: $0))
        }
        var message = Self.message(PQresultErrorMessage(result))
        if message.isEmpty { message = Self.message(PQerrorMessage(connection)) }
        return PostgresError(message: message, state: state)
    }

    /// libpq's message on one line, without its `ERROR:  ` prefix.
    private static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "" }
        var message = String(cString: text)
        if message.hasPrefix("ERROR:  ") { message.removeFirst(8) }
        return message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: "; ")
    }

    /// Runs `body` with `strings` as C strings (`nil` stays NULL).
    private static func withCStrings<T>(
        _ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T
    ) -> T {
        let copies = strings.map { $0.map { strdup($0) } ?? nil }
        defer { for copy in copies { free(copy) } }
        let pointers = copies.map { $0.map { UnsafePointer<CChar>($0) } } + [nil]
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
