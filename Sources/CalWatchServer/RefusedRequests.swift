import CalWatchRuntime
import Foundation
public import Logging
import Synchronization

/// Requests the server refused (no token, a wrong one, a bad answer signature, a malformed query): counted by reason
/// in `calwatch_server_refused_total`, and logged at most once a minute as a sum, so that a client hammering the
/// server cannot fill the log.
public final class RefusedRequests: Sendable {
    public enum Reason: String, Sendable, CaseIterable {
        case token, signature, malformed, origin
    }

    private struct Pending {
        var counts: [Reason: Int] = [:]
        var lastLogged: ContinuousClock.Instant?
    }

    private let pending = Mutex(Pending())
    private let logger: Logger
    private let interval: Duration

    public init(logger: Logger, interval: Duration = .seconds(60)) {
        self.logger = logger
        self.interval = interval
    }

    /// Counts one refusal; logs the sum when the last log is older than the interval.
    public func note(_ reason: Reason) {
        CalwatchMetrics.serverRefused(reason.rawValue)
        let now = ContinuousClock.now
        let sum: [Reason: Int]? = pending.withLock { pending in
            pending.counts[reason, default: 0] += 1
            if let last = pending.lastLogged, last + interval > now { return nil }
            defer { pending = Pending(counts: [:], lastLogged: now) }
            return pending.counts
        }
        guard let sum else { return }
        let text = Reason.allCases.compactMap { reason in sum[reason].map { "\($0) \(reason.rawValue)" } }
        let message =
            "the local server refused requests (" + text.joined(separator: ", ") + "); more are counted in "
            + "calwatch_server_refused_total and summed here at most once a minute"
        logger.warning("\(message)")
    }
}
