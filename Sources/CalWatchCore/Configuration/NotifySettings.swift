/// A sink that shows events as desktop notifications on the user's session bus (`type: notify`): one card per
/// reminder, one card per live activity replaced in place and closed at its end, with buttons that answer.
public struct NotifySettings: Sendable, Hashable {
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
