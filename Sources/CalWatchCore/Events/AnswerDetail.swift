/// An answer to a reminder, as `reminderSnoozed`, `reminderDismissed` and `reminderAcknowledged` carry it.
public struct AnswerDetail: Hashable, Sendable {
    /// The event answered (a reminder's id, as hooks get it in `CE_ID`); `nil` when the occurrence was named.
    public var answered: EventID?
    /// A snooze's reminder instant.
    public var until: Instant?
    /// Which snooze of the occurrence this is (1, 2, …); 0 for a dismiss or an acknowledgement.
    public var count: Int

    package init(answered: EventID?, until: Instant?, count: Int) {
        self.answered = answered
        self.until = until
        self.count = count
    }
}
