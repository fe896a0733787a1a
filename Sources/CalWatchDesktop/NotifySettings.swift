public import CalWatchCore
public import CalWatchRuntime

/// A sink that shows events as desktop notifications on the user's session bus (`type: notify`): one card per
/// reminder, one card per live activity replaced in place and closed at its end, with buttons that answer.
public struct NotifySettings: SinkDriver {
    public static let type = "notify"
    public static let keys = ["snooze", "maxCards", "liveActivities", "repeat", "bus"]
    /// The Snooze buttons' durations (seconds), in order.
    public var snooze: [Int64] = [600]
    /// At most this many reminder cards from one batch (a burst on the hour); the rest are summed up in one more.
    public var maxCards = 5
    /// Whether live activities get a card (reminders always do).
    public var liveActivities = true
    /// How an unanswered reminder card comes back on a server that does not keep cards (no `persistence`
    /// capability: it drops a card once it has timed out): `nil`, never.
    public var repeats: Repeat?
    /// The bus to use instead of the session bus (`unix:path=…`), for tests and unusual set-ups.
    public var bus: String?

    public init() {}

    /// `repeat: until answered`: a reminder card the server let expire unanswered is shown again `every` seconds
    /// after it was last shown, at most `times` more, while its occurrence has not ended.
    public struct Repeat: Sendable, Hashable {
        public var every: Int64 = 300
        public var times = 3

        public init(every: Int64 = 300, times: Int = 3) {
            self.every = every
            self.times = times
        }
    }
}

extension NotifySettings {
    public init?(_ entry: ConfigurationSection) {
        self.init()
        if let value = entry["snooze"] {
            let durations = value.list().compactMap {
                $0.duration(positive: true, atMost: ConfigurationLimits.reminderOffset)
            }
            if durations.count > 3 {
                value.note("gives \(durations.count) buttons; a notification shows at most 3")
            } else {
                snooze = durations
            }
        }
        if let count = entry["maxCards"]?.integer(in: 1...50) { maxCards = count }
        if let on = entry["liveActivities"]?.bool() { liveActivities = on }
        if let value = entry["repeat"] { repeats = Self.repeats(value) }
        if let value = entry["bus"] { bus = value.string() }
    }

    /// `repeat: until answered` (every 5m, at most 3 times), `repeat: never`, or
    /// `repeat: {until: answered, every: 10m, times: 2}`.
    private static func repeats(_ value: ConfigurationValue) -> Repeat? {
        if value.isScalar {
            switch value.string() {
            case "until answered": return Repeat()
            case "never": return nil
            default:
                value.note("should be `until answered`, `never`, or {until: answered, every: 5m, times: 3}")
                return nil
            }
        }
        guard let section = value.section(known: ["until", "every", "times"]) else { return nil }
        var repeats = Repeat()
        if let until = section["until"], let text = until.string(), text != "answered" {
            until.note("can only be `answered`")
        }
        if let every = section["every"],
            let seconds = every.duration(positive: true, atMost: ConfigurationLimits.reminderOffset)
        {
            if seconds < 60 {
                every.note("should be at least 1m: a card every few seconds is a siren")
            } else {
                repeats.every = seconds
            }
        }
        if let count = section["times"]?.integer(in: 1...20) { repeats.times = count }
        return repeats
    }

    public var defaultName: String { "notify" }

    /// Its cards are kept beside the journal.
    public func open(named name: String, in environment: SinkEnvironment) throws -> any EventSink {
        NotifySink(
            settings: self, name: name, cardsPath: environment.journal + ".notify-cards", logger: environment.logger)
    }

    /// The notification server, what it is and can do. None (a server, an SSH session) is a warning: the sink waits
    /// for one, and the others go on.
    public func check(named name: String, in environment: SinkEnvironment) async -> [SinkFinding] {
        switch await NotifySink.probe(self) {
        case .success(let server): [.found(server)]
        case .failure(let error): [.warning("\(error)")]
        }
    }

    public func delivery(of row: JournalStore.Journaled, sink name: String, in lookup: DeliveryLookup) async throws
        -> DecisionTrace.Delivery
    {
        DecisionTrace.Delivery(state: "delivered", sink: name, detail: "shown on the desktop")
    }
}
