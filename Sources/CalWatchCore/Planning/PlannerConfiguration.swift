/// What the planner needs from the configuration (docs/design.md §5 and §8), with the documented defaults.
public struct PlannerConfiguration: Sendable, Hashable {
    /// Reminder offsets before the anchor, in seconds (default 30, 15 and 5 minutes).
    public var reminderOffsets: [Int64] = [1800, 900, 300]
    /// Whether all-day occurrences get reminders and live activities.
    public var includeAllDay = false
    /// Whether cancelled occurrences still get reminders.
    public var includeCancelled = false
    /// Whether occurrences the user declined still get reminders.
    public var includeDeclined = false
    /// What reminders and live activities count back from, per kind (a flight's `leaveBy` when it has one).
    public var anchors: [OccurrenceFacts.Kind: ReminderDetail.Anchor] = [
        .flight: .leaveBy, .meeting: .start, .event: .start,
    ]
    /// How far ahead a flight is detected (`flightDetected`), in seconds (default 60 days).
    public var horizon: Int64 = 60 * 86_400
    /// Whether to-dos (VTODO) are occurrences, at their DUE or else their DTSTART (`todos: true`): off by default, a
    /// task list of hundreds would otherwise remind of each.
    public var includeTodos = false
    /// Whether the calendar's own VALARM DISPLAY/AUDIO triggers become reminders (`source: valarm`).
    public var calendarAlarms = true
    /// A reminder delivered more than this after its time is marked `late`.
    public var lateGrace: Int64 = 60
    /// How long before the anchor a live activity starts.
    public var liveActivityLead: Int64 = 900
    /// How often a running live activity is updated.
    public var liveActivityUpdateInterval: Int64 = 60
    /// A live activity ends at the latest this long after it started (`expired`).
    public var liveActivityMaxDuration: Int64 = 8 * 3600
    /// Reminder rules, first match wins (config.yml `rules:`).
    public var rules: [ReminderRule] = []
    /// When reminders are held back (config.yml `quietHours:`).
    public var quietHours: QuietHours?
    /// Conflicts, overruns, unanswered invitations, the agenda (config.yml `day:`); `nil`: none of it.
    public var day: DaySettings?

    /// The defaults.
    public init() {}

    /// The earliest an event can come before its occurrence starts: how far ahead the planner must see.
    public var lookAhead: Int64 {
        max(
            liveActivityLead, (reminderOffsets + rules.flatMap { $0.offsets ?? [] }).max() ?? 0, allDayLead,
            day?.pendingInvitations.max() ?? 0)
    }

    /// How far before an all-day occurrence's midnight a rule's clock-time reminder can come.
    var allDayLead: Int64 {
        rules.compactMap(\.allDay).map { Int64($0.daysBefore) * 86_400 + 86_400 }.max() ?? 0
    }
}
