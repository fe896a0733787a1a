public import CalWatchCore
public import CalWatchRuntime
import Foundation

extension PostgresSettings: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "PostgresSettings(\(redactedURL))" }
    public var debugDescription: String { description }
}

/// A PostgreSQL sink: where the database is, how to get its password, and the watcher's name in it.
public struct PostgresSettings: SinkDriver {
    public static let type = "postgres"
    public static let keys = ["url", "channel", "passwordCommand"]
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

extension PostgresSettings {
    public init?(_ entry: ConfigurationSection) {
        guard let value = entry["url"] else {
            entry.note(
                "has no `url:`; write the database's address, such as postgres://calwatch@db.example.org/calwatch")
            return nil
        }
        guard let url = value.string() else { return nil }
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") || url.contains("=") else {
            value.note(
                "'\(url)' is not a PostgreSQL address; write postgres://user@host/database, or "
                    + "postgres:///database?host=/run/postgresql for a Unix socket")
            return nil
        }
        self.init(url: url, watcher: "")
        if let value = entry["channel"], let channel = value.string() {
            let letters = channel.unicodeScalars
            if channel.isEmpty || channel.utf8.count > 63
                || !letters.allSatisfy({
                    $0.isASCII && ($0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0))
                })
                || ("0"..."9").contains(letters.first!)
            {
                value.note(
                    "'\(channel)' is not a channel name; use letters, digits and _ (up to 63, not starting with a digit)"
                )
            } else {
                self.channel = channel
            }
        }
        if let value = entry["passwordCommand"] {
            guard
                let argv = value.argv(
                    example: "[pass, show, calwatch/db]", empty: "name the program that prints the password")
            else { return nil }
            passwordCommand = argv
        }
    }

    public var defaultName: String { "postgres:" + redactedURL }

    /// Every row it writes names this instance, wherever `instance:` stands in the file.
    public mutating func settle(in configuration: Configuration, entry: ConfigurationSection) {
        watcher = configuration.instance
    }

    public func open(named name: String, in environment: SinkEnvironment) throws -> any EventSink {
        PostgresSink(settings: self, name: name)
    }

    /// The server's version and calwatch's layout in the database.
    public func check(named name: String, in environment: SinkEnvironment) async -> [SinkFinding] {
        do {
            return [.found(try await PostgresSink(settings: self, name: name).inspect())]
        } catch {
            return [.error((error as? SinkError)?.reason ?? "\(error)")]
        }
    }

    public func delivery(of row: JournalStore.Journaled, sink name: String, in lookup: DeliveryLookup) async throws
        -> DecisionTrace.Delivery
    {
        DecisionTrace.Delivery(state: "delivered", sink: name, detail: "committed to \(redactedURL)")
    }
}
