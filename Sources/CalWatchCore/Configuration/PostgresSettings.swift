import Foundation

extension PostgresSettings: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "PostgresSettings(\(redactedURL))" }
    public var debugDescription: String { description }
}

/// A PostgreSQL sink: where the database is, how to get its password, and the watcher's name in it.
public struct PostgresSettings: Sendable, Hashable {
    /// A `postgres://` URI or libpq `key=value` pairs (a Unix socket is `?host=/run/postgresql`).
    public var url: String
    /// The channel notified after each stored batch; `nil`: none.
    public var channel: String?
    /// A program and its arguments whose first line of output is the password (never run through a shell).
    public var passwordCommand: [String]?
    /// The instance this calwatch is (`instance:` in config.yml), kept in every row it writes.
    public var watcher: String
    /// Whether the watcher is one of a fleet's (`calwatch watch --fleet`): its events are then kept under their
    /// calendar's record (`fleet:<name>`), which every watcher that holds the calendar writes to, so an event is
    /// stored once however many watchers send it; `sender` names the one that did.
    public var fleet = false

    public init(url: String, channel: String? = nil, passwordCommand: [String]? = nil, watcher: String) {
        self.url = url
        self.channel = channel
        self.passwordCommand = passwordCommand
        self.watcher = watcher
    }

    /// Where a fleet keeps the events of one of its calendars: `event_log.watcher` and `occurrences.watcher`.
    public static func fleetRecord(_ calendar: String) -> String { "fleet:" + calendar }

    /// The URL without a password in it (`postgres://me@db/calwatch`), for names, messages and logs.
    public var redactedURL: String { ConnectionString(url).redacted }

    /// A libpq message with the URL's password taken out wherever libpq quoted it back.
    public func scrubbed(_ message: String) -> String { ConnectionString(url).scrubbed(message) }
}
