/// The typed events calwatch emits (docs/design.md §5).
public enum EventType: String, Sendable, CaseIterable, Hashable {
    case flightDetected, reminderDue, liveActivityStart, liveActivityUpdate, liveActivityEnd
    /// Answers to a reminder (`calwatch snooze`, `dismiss`, `ack`), on the stream like the events they answer.
    case reminderSnoozed, reminderDismissed, reminderAcknowledged
    /// The day as a whole (`day:`): two occurrences overlap, one runs on into the next, an invitation is not
    /// answered, the day's agenda.
    case conflictDetected, overrunDetected, invitationPending, agendaDue

    /// The CloudEvents `type`: `calwatch.` and the event name.
    public var cloudEventType: String { "calwatch." + rawValue }
}
