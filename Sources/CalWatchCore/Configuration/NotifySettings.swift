/// A sink that shows events as desktop notifications on the user's session bus (`type: notify`): one card per
/// reminder, one card per live activity replaced in place and closed at its end, with buttons that answer.
public struct NotifySettings: Sendable, Hashable {
    /// The Snooze buttons' durations (seconds), in order.
    public var snooze: [Int64] = [600]
    /// At most this many reminder cards from one batch (a burst on the hour); the rest are summed up in one more.
    public var maxCards = 5
    /// Whether live activities get a card (reminders always do).
    public var liveActivities = true
    /// The bus to use instead of the session bus (`unix:path=…`), for tests and unusual set-ups.
    public var bus: String?

    public init() {}
}
