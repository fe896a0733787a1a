/// The requests a service sent in the last hour, for one that may send at most `limit` an hour (a routing engine,
/// a weather forecast): how long the next must wait.
struct HourlyBudget {
    let limit: Int
    private var sent: [ContinuousClock.Instant] = []

    init(limit: Int) {
        self.limit = limit
    }

    /// How long until a request may go again; `nil` when one may go now.
    mutating func wait() -> Duration? {
        sent.removeAll { ContinuousClock.now - $0 > .seconds(3600) }
        guard sent.count >= limit, let oldest = sent.first else { return nil }
        return .seconds(3600) - (ContinuousClock.now - oldest)
    }

    /// A request goes now.
    mutating func spend() { sent.append(.now) }
}
