import Foundation

/// Reminder rules (config.yml `rules:`): the first whose conditions an occurrence meets sets its reminders.
public struct ReminderRule: Sendable, Hashable {
    /// Calendars it applies to, compared without regard to case (`nil`: any).
    public var calendars: [String]?
    public var kinds: Set<OccurrenceFacts.Kind>?
    /// Meeting services (`zoom`, `teams`, …) (`nil`: any, meeting or not).
    public var services: Set<String>?
    /// A regular expression the summary must contain a match of.
    public var summary: SummaryPattern?
    /// How the time shows (out of office, focus time, working location, …) (`nil`: any).
    public var showAs: Set<CalendarComponent.ShowAs>?

    /// Offsets before the anchor instead of `reminders.offsets`.
    public var offsets: [Int64]?
    /// All-day occurrences reminded at a clock time (and so reminded at all, whatever `reminders.allDay` says).
    public var allDay: ClockTimeReminder?
    /// `false`: no live activity.
    public var liveActivity: Bool?
    /// Your answers (PARTSTAT, upper case: ACCEPTED, TENTATIVE, NEEDS-ACTION, DECLINED) that get reminders; an
    /// occurrence you have no answer on (your own, or one without attendees) always does.
    public var attendance: Set<String>?
    /// Whether quiet hours hold back its reminders (default: yes, except a flight's time to leave).
    public var quietHours: Bool?
    /// What its reminders and live activity count back from (`leaveBy` falls back to the start when the occurrence
    /// has no time to leave); `nil`: `reminders.anchor` for its kind.
    public var anchor: ReminderDetail.Anchor?
    /// How the user gets to its occurrences, when a routing engine is asked (`nil`: `travel.mode`).
    public var travelMode: TravelSettings.Mode?
    /// A fixed time for the way to its occurrences (seconds), after the item's own travel time and its place's.
    public var travelTime: Int64?
    /// Time to get ready before leaving for its occurrences (seconds): `prepareBy` = time to leave − prep.
    public var prep: Int64?
    /// An agenda of its own at this time of day (minutes after midnight): the occurrences it is the first match of
    /// leave `day.agendaAt`'s for it.
    public var agendaAt: Int?
    /// `false`: its occurrences stay in the home zone on a trip (`day.travelZone`).
    public var travelZone: Bool?
    /// `false`: its occurrences take no part in conflicts and overruns (`day:`), a shared calendar's, say.
    public var conflicts: Bool?
    /// The rule's line in config.yml, for messages.
    public var line: Int?

    public init() {}

    /// Whether the rule applies to the occurrence.
    public func matches(_ occurrence: Occurrence, facts: OccurrenceFacts) -> Bool {
        if let calendars, !calendars.namesCalendar(occurrence.calendar) {
            return false
        }
        if let kinds, !kinds.contains(facts.kind) { return false }
        if let services, !services.contains(facts.meeting?.service ?? "") { return false }
        if let summary, !summary.matches(occurrence.summary ?? "") { return false }
        if let showAs, !showAs.contains(occurrence.source.component.showAs) { return false }
        return true
    }

    /// A rule without conditions: every rule after it can never apply.
    public var matchesEverything: Bool {
        calendars == nil && kinds == nil && services == nil && summary == nil && showAs == nil
    }
}

/// A regular expression, compared and hashed by its text.
public struct SummaryPattern: Sendable, Hashable {
    public let pattern: String
    private let regex: NSRegularExpression

    /// `nil` when `pattern` is not a regular expression (ICU syntax).
    public init?(_ pattern: String) {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return nil }
        self.pattern = pattern
        self.regex = regex
    }

    /// Whether the summary contains a match; only its first 4 KiB are looked at, so a hostile summary costs little.
    public func matches(_ text: String) -> Bool {
        let text = String(text.prefix(4096))
        return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    public static func == (a: SummaryPattern, b: SummaryPattern) -> Bool { a.pattern == b.pattern }
    public func hash(into hasher: inout Hasher) { hasher.combine(pattern) }
}

/// A reminder at a clock time some days before (`allDay: { at: 18:00, daysBefore: 1 }`).
public struct ClockTimeReminder: Sendable, Hashable {
    public var hour: Int
    public var minute: Int
    public var daysBefore: Int

    public init(hour: Int, minute: Int, daysBefore: Int) {
        self.hour = hour
        self.minute = minute
        self.daysBefore = daysBefore
    }

    /// The instant for an occurrence starting on `date`, on the wall clock of `zone`.
    func instant(before date: CalendarDate, in zone: ZoneRules) -> Instant {
        zone.instant(for: LocalDateTime(date: date.adding(days: -daysBefore), hour: hour, minute: minute))
    }
}

/// Quiet hours (`quietHours: { from: 22:00, to: 07:00, then: defer }`): a reminder due inside comes at the end,
/// marked deferred, or not at all.
public struct QuietHours: Sendable, Hashable {
    /// Minutes after midnight; `from > to` spans midnight.
    public var from: Int
    public var to: Int
    public var deferToEnd: Bool

    public init(from: Int, to: Int, deferToEnd: Bool) {
        self.from = from
        self.to = to
        self.deferToEnd = deferToEnd
    }

    /// The end of the quiet hours `instant` falls in, on the wall clock of `zone`; `nil` when it is not quiet then.
    public func end(containing instant: Instant, in zone: ZoneRules) -> Instant? {
        let local = zone.wallClock(at: instant)
        let minute = local.hour * 60 + local.minute
        let quiet = from <= to ? (minute >= from && minute < to) : (minute >= from || minute < to)
        guard quiet, from != to else { return nil }
        // The end is today when the quiet hours began yesterday evening (or today, not spanning midnight).
        let endsToday = from <= to || minute < to
        let date = endsToday ? local.date : local.date.adding(days: 1)
        return zone.instant(for: LocalDateTime(date: date, hour: to / 60, minute: to % 60))
    }
}
