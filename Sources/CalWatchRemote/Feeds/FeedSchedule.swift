import CalWatchCore
import CalWatchRuntime
import Foundation

/// When to poll a feed next: every `every`, spread by up to a tenth either way so that many feeds (and many
/// calwatch instances) do not ask at the same second; after failures, `every` doubled per failure in a row, up to
/// six hours; never sooner than a server's `Retry-After`. Pure, so it is tested without a clock.
public struct FeedSchedule: Sendable, Equatable {
    public var every: Duration
    /// Failures in a row.
    public private(set) var failures = 0
    public static let longest: Duration = .seconds(6 * 3600)

    public init(every: Duration) {
        self.every = every
    }

    /// The wait after a fetch that ended as `outcome`; `jitter` in -1...1 (random in the daemon, fixed in tests).
    public mutating func next(after outcome: FeedFetcher.Outcome, jitter: Double) -> Duration {
        var wait: Duration
        switch outcome {
        case .unchanged, .changed:
            failures = 0
            wait = every
        case .failed(_, let retryAfter):
            failures += 1
            wait = Backoff(first: every * 2, most: max(every, Self.longest)).delay(afterFailures: failures)
            if let retryAfter { wait = max(wait, min(retryAfter, Self.longest * 4)) }
        }
        return wait + wait * (max(-1, min(1, jitter)) / 10)
    }
}
