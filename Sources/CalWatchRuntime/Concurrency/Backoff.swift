/// How long to wait after failures in a row: `first`, then doubled each time, never more than `most`. The bus's
/// retries of a sink, a hook's retries of a run and a feed's polls after failures all wait this way.
public struct Backoff: Sendable, Hashable {
    public var first: Duration
    public var most: Duration

    public init(first: Duration, most: Duration) {
        self.first = first
        self.most = most
    }

    /// The wait after one more failure, when the last wait was `previous` (`.zero`: none yet).
    public func delay(after previous: Duration) -> Duration {
        previous == .zero ? min(first, most) : min(previous * 2, most)
    }

    /// The wait after `failures` failures in a row (at least 1).
    public func delay(afterFailures failures: Int) -> Duration {
        // Doubling past 2^16 only ever reaches `most`, and would overflow on the way.
        min(first * (1 << min(max(failures, 1) - 1, 16)), most)
    }
}
