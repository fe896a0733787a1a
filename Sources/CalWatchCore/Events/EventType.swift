/// The typed events calwatch emits (docs/design.md §5).
public enum EventType: String, Sendable, CaseIterable, Hashable {
    case flightDetected, reminderDue, liveActivityStart, liveActivityUpdate, liveActivityEnd
    /// Answers to a reminder (`calwatch snooze`, `dismiss`, `ack`), on the stream like the events they answer.
    case reminderSnoozed, reminderDismissed, reminderAcknowledged
    /// The day as a whole (`day:`): two occurrences overlap, one runs on into the next, an invitation is not
    /// answered, the day's agenda.
    case conflictDetected, overrunDetected, invitationPending, agendaDue
    /// Time to get ready: the time to leave less `prep:` (a wake-up, a home scene).
    case prepareDue
    /// The flight-status service says a flight's departure, gate or terminal changed, or that it is cancelled or
    /// diverted.
    case flightChanged
    /// An account's sign-in lapsed: its calendars are not read until the user signs in again (`AccountNotice`).
    case accountSignInNeeded

    /// The CloudEvents `type`: `calwatch.` and the event name.
    public var cloudEventType: String { "calwatch." + rawValue }
}

extension EventType {
    /// Adds how many of `items` are of each type (`type` says which) to `counts`, a run of one type at a time: a
    /// step is mostly one type (a minute's updates), and hashing the type of every event was a measurable part of a
    /// replay. Items are read in place: a lazy map copied each planned event (and retained its strings).
    public static func tally<Item>(_ items: [Item], type: (Item) -> EventType, into counts: inout [EventType: Int]) {
        var current: EventType?
        var run = 0
        for index in items.indices {
            let type = type(items[index])
            if type == current {
                run += 1
                continue
            }
            if let current { counts[current, default: 0] += run }
            current = type
            run = 1
        }
        if let current { counts[current, default: 0] += run }
    }
}
