/// What a reminder is about: how long before which anchor, and whether it comes late.
public struct ReminderDetail: Hashable, Sendable {
    /// What the reminder counts back from.
    public enum Anchor: String, Sendable, CaseIterable { case start, leaveBy }
    /// Where the reminder comes from: an offset, a calendar alarm, or a snooze of an earlier reminder.
    public enum Source: String, Sendable { case offset, valarm, snooze }

    public var secondsBefore: Int64
    public var anchor: Anchor
    public var source: Source
    /// Delivered after its scheduled time (calwatch was not running then).
    public var late: Bool
    /// How late, in seconds (0 when on time).
    public var lateness: Int64
    /// Which snooze of the occurrence brought it (1, 2, …); 0 for a reminder that was not snoozed.
    public var snoozeCount: Int
    /// Held back by quiet hours from this instant to its `time`.
    public var deferredFrom: Instant?

    package init(
        secondsBefore: Int64, anchor: Anchor, source: Source, late: Bool, lateness: Int64, snoozeCount: Int = 0,
        deferredFrom: Instant? = nil
    ) {
        self.deferredFrom = deferredFrom
        self.secondsBefore = secondsBefore
        self.anchor = anchor
        self.source = source
        self.late = late
        self.lateness = lateness
        self.snoozeCount = snoozeCount
    }
}
