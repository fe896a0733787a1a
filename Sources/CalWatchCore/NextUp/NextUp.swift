/// What matters now, for a status bar or a prompt (`calwatch next`): the occurrence running now, or else the next
/// one within a horizon, with its countdown, and the rest of today.
///
/// A pure function of (occurrences, facts, options, now, zone), so every answer can be tested on a manual clock.
/// Declined, cancelled and dismissed occurrences and all-day ones are never "next": a status bar is for what needs you at a
/// time of day.
public struct NextUp: Sendable {
    /// Where the chosen occurrence stands.
    public enum Phase: String, Sendable, Hashable {
        /// Running: between its start and its end (a flight in the air).
        case live
        /// What it counts down to (its start, a flight's leave-by) is within `soon`.
        case soon
        /// Further off, within the horizon.
        case upcoming
    }

    /// What the countdown counts to.
    public enum Target: String, Sendable, Hashable {
        /// The start (a meeting, an event, a flight whose leave-by has passed or is not known).
        case start
        /// The time to leave (a flight's for the airport, a placed event's).
        case leaveBy
        /// The time to get ready before leaving (`prep:`).
        case prepareBy
        /// The end of a running occurrence.
        case end
    }

    /// Which occurrences count, and how far ahead to look.
    public struct Options: Sendable {
        /// Kinds shown (`nil`: all).
        public var kinds: Set<OccurrenceFacts.Kind>?
        /// Calendars shown, compared without regard to case (`nil`: all).
        public var calendars: [String]?
        /// How far ahead the next one may be, in seconds.
        public var horizon: Int64 = 86_400
        /// How close its countdown must be for the phase `soon`: the live activity's lead by default.
        public var soon: Int64 = 900
        /// Occurrences dismissed with `calwatch dismiss`: never shown.
        public var dismissed: Set<OccurrenceKey> = []
        /// What counts as a conflict (`day:`; its defaults when not configured), marked in the tooltip; with
        /// `travelZone`, times are shown where the user will be.
        public var day = DaySettings()
        /// The configuration's rules: one saying `conflicts: false` keeps its items out of the tooltip's conflicts.
        public var rules: [ReminderRule] = []

        /// How far back to read: two days, or a month on a trip, to find the flight that took the user there.
        public var lookBehind: Int64 { day.travelZone ? 31 * 86_400 : 2 * 86_400 }

        public init(kinds: Set<OccurrenceFacts.Kind>? = nil, calendars: [String]? = nil) {
            self.kinds = kinds
            self.calendars = calendars
        }

        func admits(_ occurrence: Occurrence, _ facts: OccurrenceFacts) -> Bool {
            if !dismissed.isEmpty && dismissed.contains(OccurrenceKey(occurrence)) { return false }
            if let kinds, !kinds.contains(facts.kind) { return false }
            if let calendars, !calendars.namesCalendar(occurrence.calendar) {
                return false
            }
            return true
        }
    }

    /// One occurrence as the status shows it.
    public struct Item: Sendable {
        public var occurrence: Occurrence
        public var facts: OccurrenceFacts
        public var phase: Phase
        public var target: Target
        /// The instant counted down to.
        public var targetTime: Instant
        /// Seconds from now to `targetTime` (never negative).
        public var seconds: Int64
        /// A running one's progress from its start to its end, 0…1 (`nil` before it starts).
        public var progress: Double?
    }

    /// When this was worked out.
    public var now: Instant
    /// The zone times of day are shown in.
    public var zone: ZoneRules
    public var options: Options
    /// The occurrence that matters now: the live one that started last, else the one whose countdown ends first.
    public var current: Item?
    /// What is left of today (in `zone`), by start, the current one included (also when it is tomorrow's).
    public var today: [Item]

    /// The class a status bar styles by: `live`, `flight` (a flight not yet in the air), `soon`, `upcoming`, `none`.
    public var state: String {
        guard let current else { return "none" }
        if current.phase == .live { return "live" }
        if current.facts.kind == .flight { return "flight" }
        return current.phase.rawValue
    }

    /// The status at `now`. `occurrences` must cover `[now − longest duration, now + horizon]`.
    public init(
        _ occurrences: [Occurrence], facts: (Occurrence) -> OccurrenceFacts, options: Options, now: Instant,
        zone: ZoneRules
    ) {
        var occurrences = occurrences
        var zone = zone
        if options.day.travelZone {
            let travel = TravelZones(home: zone, flights: TravelZones.flights(in: occurrences, facts: facts))
            occurrences = travel.placing(occurrences)
            // Today is the day where the user is.
            zone = travel.zone(at: now)
        }
        self.now = now
        self.zone = zone
        self.options = options
        let horizonEnd = now.adding(seconds: options.horizon)
        var candidates: [Item] = []
        var seen = Set<OccurrenceKey>()
        for occurrence in occurrences where !occurrence.allDay && occurrence.end > now {
            // An invitation in two calendars is one occurrence (see `OccurrenceKey`).
            guard occurrence.status != .cancelled, seen.insert(OccurrenceKey(occurrence)).inserted else { continue }
            let facts = facts(occurrence)
            guard !facts.declined, options.admits(occurrence, facts) else { continue }
            let item = Self.item(occurrence, facts: facts, now: now, soon: options.soon)
            guard item.phase == .live || item.targetTime <= horizonEnd else { continue }
            candidates.append(item)
        }
        let chosen =
            candidates.filter { $0.phase == .live }.max(by: Self.startedEarlier) ?? candidates.min(by: Self.comesFirst)
        current = chosen
        let tomorrow = zone.instant(for: LocalDateTime(date: zone.wallClock(at: now).date.adding(days: 1)))
        var today = candidates.filter { $0.occurrence.start < tomorrow }
            .sorted { ($0.occurrence.start, $0.occurrence.uid) < ($1.occurrence.start, $1.occurrence.uid) }
        if let chosen, !today.contains(where: { Self.same($0, chosen) }) { today.insert(chosen, at: 0) }
        self.today = today
    }

    static func item(_ occurrence: Occurrence, facts: OccurrenceFacts, now: Instant, soon: Int64) -> Item {
        let start = occurrence.start
        if start <= now {
            let length = Double(occurrence.end.secondsSinceEpoch - start.secondsSinceEpoch)
            let elapsed = Double(now.secondsSinceEpoch - start.secondsSinceEpoch)
            return Item(
                occurrence: occurrence, facts: facts, phase: .live, target: .end, targetTime: occurrence.end,
                seconds: occurrence.end.secondsSinceEpoch - now.secondsSinceEpoch,
                progress: length > 0 ? min(1, elapsed / length) : 1)
        }
        let (target, time): (Target, Instant) =
            if let prepareBy = facts.leave?.prepareBy, prepareBy > now {
                (.prepareBy, prepareBy)
            } else if let leaveBy = facts.leaveBy, leaveBy > now {
                (.leaveBy, leaveBy)
            } else {
                (.start, start)
            }
        let seconds = time.secondsSinceEpoch - now.secondsSinceEpoch
        return Item(
            occurrence: occurrence, facts: facts, phase: seconds <= soon ? .soon : .upcoming, target: target,
            targetTime: time, seconds: seconds, progress: nil)
    }

    /// Of two running ones, the one that started later wins (you are in the meeting that began last); then the one
    /// ending first.
    static func startedEarlier(_ a: Item, _ b: Item) -> Bool {
        let (sa, sb) = (a.occurrence.start, b.occurrence.start)
        if sa != sb { return sa < sb }
        if a.occurrence.end != b.occurrence.end { return a.occurrence.end > b.occurrence.end }
        return a.occurrence.uid > b.occurrence.uid
    }

    /// Of two coming ones, the one whose countdown ends first (a flight's leave-by can come before a meeting's
    /// start), then the earlier start, then the uid.
    static func comesFirst(_ a: Item, _ b: Item) -> Bool {
        if a.targetTime != b.targetTime { return a.targetTime < b.targetTime }
        if a.occurrence.start != b.occurrence.start { return a.occurrence.start < b.occurrence.start }
        return a.occurrence.uid < b.occurrence.uid
    }

    static func same(_ a: Item, _ b: Item) -> Bool {
        a.occurrence.uid == b.occurrence.uid && a.occurrence.start == b.occurrence.start
            && a.occurrence.calendar == b.occurrence.calendar
    }

    /// The next instant after `now` at which the status changes by itself (a countdown reaching `soon`, a start,
    /// a leave-by, an end), or `nil`: `--follow` wakes then as well as every minute.
    public static func nextChange(
        _ occurrences: [Occurrence], facts: (Occurrence) -> OccurrenceFacts, options: Options, now: Instant
    ) -> Instant? {
        var next: Instant?
        func consider(_ instant: Instant) {
            if instant > now && (next == nil || instant < next!) { next = instant }
        }
        for occurrence in occurrences where !occurrence.allDay && occurrence.end > now {
            let facts = facts(occurrence)
            guard options.admits(occurrence, facts) else { continue }
            consider(occurrence.start)
            consider(occurrence.end)
            consider(occurrence.start.adding(seconds: -options.soon))
            for moment in [facts.leaveBy, facts.leave?.prepareBy].compactMap({ $0 }) {
                consider(moment)
                consider(moment.adding(seconds: -options.soon))
            }
            consider(occurrence.start.adding(seconds: -options.horizon))
        }
        return next
    }
}

extension NextUp.Options {
    /// The options `calwatch next` takes from `configuration` (the live activity's lead as `soon`, `day:`, the rules),
    /// with what it was asked for.
    public init(
        _ configuration: Configuration, kinds: Set<OccurrenceFacts.Kind>?, calendars: [String]?, horizon: Int64
    ) {
        self.init(kinds: kinds, calendars: calendars)
        self.horizon = horizon
        soon = configuration.planner.liveActivityLead
        if let day = configuration.planner.day { self.day = day }
        rules = configuration.planner.rules
    }
}
