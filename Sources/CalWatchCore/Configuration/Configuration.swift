import Foundation

/// Everything `config.yml` sets (docs/design.md §8), typed, with the documented default for every key, so that no file is
/// needed to run.
public struct Configuration: Sendable {
    /// Calendar files, vdir roots, Radicale collections and CalDAV exports, with `~`, `$VARS` and relative paths
    /// already expanded.
    public var calendars: [String]
    /// Calendars on servers (`calendars: - url: …` or `- caldav: …`), read from calwatch's cache like files once
    /// fetched.
    public var sources: [SourceSettings] = []
    /// The kinds of calendar on a server the file was read with, to read it again the same way (the daemon
    /// working out what a `calwatch next` beside it read).
    public var sourceKinds = SourceKinds.none
    /// Whose calendar each path of `calendars` is, when a fleet's watcher holds several people's (path → the
    /// fleet's name for the calendar); empty outside a fleet.
    public var scopes: [String: String] = [:]
    /// Whether this is a fleet's watcher (`watch --fleet`): the calendars of `scopes` are all it holds, and what
    /// its journal knows of others was handed to other watchers, not removed.
    public var fleet = false
    /// Whose calendar each scope is, in a fleet (scope → the person's addresses): their own attendee entries, as
    /// `me` tells the user's apart (whether they declined, answered, organise).
    public var people: [String: [String]] = [:]
    /// What the rows of a fleet's database may name on this machine (`fleet:`): folders, credentials.
    public var fleetAccess = FleetAccess()
    /// The zone for floating and all-day values; `nil` means the system zone.
    public var timeZone: String?
    /// The user's own addresses (lowercased, without `mailto:`).
    public var me: [String] = []
    /// Reminders, live activities, horizon.
    public var planner = PlannerConfiguration()
    /// How leave-by is worked out for flights.
    public var flights = FlightLeads()
    /// The user's places (`places:`): where events are, and fixed times for the way there.
    public var places: [PlaceSettings] = []
    /// How the way to an event without a travel time of its own is worked out (`travel:`).
    public var travel = TravelSettings()
    /// Video-meeting services of the user's own (`meetings.providers:`), matched before calwatch's.
    public var meetingProviders: [MeetingProvider] = []
    /// `classify:`: entries that settle what an item is (flight, meeting, event) by summary, calendar or UID.
    public var kindRules: [KindRule] = []
    /// The journal of emitted events.
    public var statePath: String
    /// Folders of boarding passes (`passes:`); `calwatch pass add` writes into the first.
    public var passes: [String]
    /// The folders of `passes:` as calendar roots (`FOLDER/*.pkpass`): each wallet pass with a time is a flight of
    /// its own where no calendar has it (`WalletPassCalendar`).
    public var passRoots: [String] { passes.map { $0 + SourceDiscovery.walletPasses } }
    /// Metrics for operators (`metrics:`).
    public var metrics = MetricsSettings()
    /// The daemon's local server (`serve:`).
    public var serve = ServeSettings()
    /// This calwatch's name in a database that many share (`instance:`); the user and host by default.
    public var instance: String
    /// Where events go; when the file names none, the program's standard sinks (`SinkKinds.standard`: JSON Lines on
    /// standard output).
    public var sinks: [SinkSettings] = []
    /// The line of config.yml each sink's entry starts on, by the sink's name, for problems found later (`check`).
    public var sinkLines: [String: Int] = [:]
    /// The file the configuration was read from, when there was one.
    public var file: String?
    /// What the configuration was read from: the file's real path and text, then (`settleReadFrom`) the calendars,
    /// zone and journal once the command line is applied, hashed. A `calwatch next` and a daemon with the same read
    /// the same calendars the same way, so the daemon can answer for it.
    public var readFrom = ""
    /// Whether that file held no settings at all (empty, or only comments): all defaults at start, but on a
    /// reload more likely a file caught while an editor saves it.
    public var fileIsEmpty = false

    /// The defaults, with `~` resolved against `home`.
    public init(home: String) {
        calendars = [home + "/.calendars"]
        statePath = home + "/.local/state/calwatch/journal.db"
        passes = [home + "/.local/share/calwatch/passes"]
        instance = "calwatch"
    }
}

extension Configuration {
    /// Adds to `readFrom` where the paths led (`~` and variables resolved in this environment; one daemon's may
    /// differ) and what the command line changed: the calendars and those on servers, the zone, the journal.
    public mutating func settleReadFrom() {
        var hasher = EventID.Hasher()
        hasher.feed(readFrom)
        // The passes' roots follow from `passes:`, which a daemon asked for the same file reads alike.
        for path in calendars where !path.hasSuffix(SourceDiscovery.walletPasses) { hasher.feed(path) }
        for source in sources { hasher.feed(source.address + " " + (source.name ?? "")) }
        hasher.feed(timeZone ?? "system")
        hasher.feed(statePath)
        readFrom = hasher.id.description
    }
}

extension Sequence<String> {
    /// Whether a `calendars:` filter (a hook's, a rule's, `next --calendars`) names `calendar`. Names match without
    /// regard to case: one collection is `Work` in a vdir or Radicale folder and `work` in a CalDAV export named
    /// after its href.
    public func namesCalendar(_ calendar: String) -> Bool {
        contains { $0.lowercased() == calendar.lowercased() }
    }
}
