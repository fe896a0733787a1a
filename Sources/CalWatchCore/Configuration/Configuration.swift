import Foundation

/// Everything `config.yml` sets (docs/design.md §8), typed, with the documented default for every key, so that no file is
/// needed to run.
public struct Configuration: Sendable {
    /// Calendar files, vdir roots, Radicale collections and CalDAV exports, with `~`, `$VARS` and relative paths
    /// already expanded.
    public var calendars: [String]
    /// Calendars on servers (`calendars: - url: …` or `- caldav: …`), read from calwatch's cache like files once
    /// fetched.
    public var feeds: [FeedSettings] = []
    /// The zone for floating and all-day values; `nil` means the system zone.
    public var timeZone: String?
    /// The user's own addresses (lowercased, without `mailto:`).
    public var me: [String] = []
    /// Reminders, live activities, horizon.
    public var planner = PlannerConfiguration()
    /// How leave-by is worked out for flights.
    public var flights = FlightLeads()
    /// Video-meeting services of the user's own (`meetings.providers:`), matched before calwatch's.
    public var meetingProviders: [MeetingProvider] = []
    /// The journal of emitted events.
    public var statePath: String
    /// Metrics for operators (`metrics:`).
    public var metrics = MetricsSettings()
    /// This calwatch's name in a database that many share (`instance:`); the user and host by default.
    public var instance: String
    /// Where events go; standard output as JSON Lines when the file names none.
    public var sinks: [SinkSettings] = [SinkSettings(name: "jsonl:-", output: .jsonLines(path: nil))]
    /// The file the configuration was read from, when there was one.
    public var file: String?
    /// Whether that file held no settings at all (empty, or only comments): all defaults at start, but on a
    /// reload more likely a file caught while an editor saves it.
    public var fileIsEmpty = false

    /// The defaults, with `~` resolved against `home`.
    public init(home: String) {
        calendars = [home + "/.calendars"]
        statePath = home + "/.local/state/calwatch/journal.db"
        instance = "calwatch"
    }
}

/// Leave-by for a flight: departure − airport lead − travel time (docs/design.md §4).
public struct FlightLeads: Sendable, Hashable {
    /// Seconds to be at the airport before a domestic departure.
    public var domestic: Int64 = 7200
    /// Seconds to be at the airport before an international departure.
    public var international: Int64 = 10_800
    /// Seconds to get to the airport.
    public var travelTime: Int64 = 2700

    public init() {}
}

/// One configured sink.
public struct SinkSettings: Sendable, Hashable {
    /// What the sink writes.
    public enum Output: Sendable, Hashable {
        /// JSON Lines to a file, or to standard output when `path` is `nil` (`path: "-"`).
        case jsonLines(path: String?)
        /// The user-facing SQLite database; events older than `keep` seconds (before the newest one) are
        /// deleted, `nil`: kept for ever.
        case sqlite(path: String, keep: Int64? = nil)
        /// A program run for each event.
        case hook(HookSettings)
        /// A PostgreSQL database shared by many watchers.
        case postgres(PostgresSettings)
    }

    /// The sink's cursor name in the journal and its name in messages. Renaming a sink starts it from the
    /// beginning of what the journal holds.
    public var name: String
    public var output: Output

    public init(name: String, output: Output) {
        self.name = name
        self.output = output
    }
}

/// A calendar on a server as `calendars:` names it: a subscribed ICS feed (`url:`) or a CalDAV account or
/// collection (`caldav:`).
public struct FeedSettings: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// One `.ics` file fetched whole (`https://…`, `http://…`, `webcal://…`).
        case ics
        /// A CalDAV server root, principal or collection, with the account to sign in as.
        case caldav(username: String?, passwordCommand: [String]?)
    }

    /// The address, as written.
    public var address: String
    public var kind: Kind = .ics
    /// The calendar's name in events and filters; the feed's own when `nil` (for CalDAV, each collection's).
    public var name: String?
    /// Seconds between polls.
    public var every: Int64 = 600

    public init(address: String, kind: Kind = .ics, name: String? = nil, every: Int64 = 600) {
        self.address = address
        self.kind = kind
        self.name = name
        self.every = every
    }

    /// The address without a password, for every message and log.
    public var shownAddress: String { ConnectionString(address).redacted }

    /// Whether the address is this machine (`localhost`, `127.0.0.1`, `[::1]`), which may be polled more often
    /// than once a minute.
    public var isLoopback: Bool {
        guard let host = URLComponents(string: address)?.host?.lowercased() else { return false }
        return ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host)
    }
}

/// Settings are printed whole by reflection (swift-service-lifecycle logs each service at debug level): without
/// their passwords.
extension FeedSettings: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "FeedSettings(\(shownAddress))" }
    public var debugDescription: String { description }
}

extension PostgresSettings: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "PostgresSettings(\(redactedURL))" }
    public var debugDescription: String { description }
}

/// Where calwatch's metrics go (`metrics:`).
public struct MetricsSettings: Sendable, Hashable {
    /// A file in Prometheus' text format for node_exporter's textfile collector; `nil`: no metrics.
    public var textfile: String?
    /// Seconds between rewrites of the file while `watch` runs (`replay` writes it at its end).
    public var every: Int64 = 15

    public init() {}
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

    public init(url: String, channel: String? = nil, passwordCommand: [String]? = nil, watcher: String) {
        self.url = url
        self.channel = channel
        self.passwordCommand = passwordCommand
        self.watcher = watcher
    }

    /// The URL without a password in it (`postgres://me@db/calwatch`), for names, messages and logs.
    public var redactedURL: String { ConnectionString(url).redacted }

    /// A libpq message with the URL's password taken out wherever libpq quoted it back.
    public func scrubbed(_ message: String) -> String { ConnectionString(url).scrubbed(message) }
}

/// A shell hook (docs/design.md §6): which events it wants and how it is run.
public struct HookSettings: Sendable, Hashable {
    /// The program and its arguments; `{field}` arguments are replaced whole by the event's fields.
    public var run: [String]
    /// Event types to run for; `nil` means all.
    public var events: Set<EventType>?
    /// Kinds of occurrence to run for; `nil` means all.
    public var kinds: Set<PlanningFacts.Kind>?
    /// Reminder offsets (seconds) to run for; other events pass. `nil` means all.
    public var offsets: Set<Int64>?
    /// Calendars (their display names) to run for; `nil` means all.
    public var calendars: Set<String>?
    /// How long one run may take before its process group is stopped.
    public var timeout: Duration = .seconds(10)
    /// Runs at the same time, at most.
    public var concurrency = 4

    public init(run: [String]) {
        self.run = run
    }

    /// The `{field}` names a `run` argument can be, in the order docs/sinks/hooks.md lists them; the runtime's hook sink
    /// gives each its value.
    public static let placeholders = [
        "id", "type", "time", "subject", "source", "event", "summary", "location", "calendar", "uid", "kind", "start",
        "end", "startLocal", "minutesBefore", "joinURL", "service", "meetingId", "passcode", "dialIn", "flight",
        "origin", "destination", "leaveBy",
    ]
}

extension Sequence<String> {
    /// Whether a `calendars:` filter (a hook's, a rule's, `next --calendars`) names `calendar`. Names match without
    /// regard to case: one collection is `Work` in a vdir or Radicale folder and `work` in a CalDAV export named
    /// after its href.
    public func namesCalendar(_ calendar: String) -> Bool {
        contains { $0.lowercased() == calendar.lowercased() }
    }
}
