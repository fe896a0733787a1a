import Foundation

/// A shell hook (docs/design.md §6): which events it wants and how it is run.
public struct HookSettings: Sendable, Hashable, EventFilters {
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
        "origin", "destination", "leaveBy", "travelMinutes", "place", "directions", "travelMode", "leaveFrom",
        "prepareBy", "leaveEstimated", "otherSummary", "otherStart", "otherJoinURL",
    ]
}
