public import CalWatchCore
import Foundation
public import Logging
public import ServiceLifecycle

/// Asks the routing engine the ways planning found no answer for (`RouteCache`), and again those whose departure
/// nears (`askAgainBefore`), within `requestsPerHour`, and says when answers came or moved a time to leave
/// (`changed`), so the watch plans their occurrences again. It sleeps until planning asks or a way is due again: no
/// polling. An engine that fails is said once per change of state; its ways keep their last answer, or without one
/// an estimate (`TravelTimes.way`), and are asked again after 30 s, 1 min, … up to 15 min.
public final class RoutePoller: Service {
    private let routing: TravelSettings.Routing
    private let replanAfter: Int64
    private let cache: RouteCache
    private let logger: Logger
    private let now: @Sendable () -> Instant
    private let changed: @Sendable () -> Void
    /// Where the answers are kept as the ways' history (the estimate while the engine fails).
    private let history: RouteHistoryFile?

    public init(
        routing: TravelSettings.Routing, replanAfter: Int64 = TravelSettings().replanAfter, cache: RouteCache,
        logger: Logger, now: @escaping @Sendable () -> Instant = RoutePoller.wallClock,
        history: RouteHistoryFile? = nil, changed: @escaping @Sendable () -> Void
    ) {
        self.history = history
        self.routing = routing
        self.replanAfter = replanAfter
        self.cache = cache
        self.logger = logger
        self.now = now
        self.changed = changed
    }

    /// The system's time, to the second.
    public static let wallClock: @Sendable () -> Instant = { Timestamp.now.instant }

    public func run() async throws {
        let (bells, bell) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        cache.onWanted { bell.yield() }
        bell.yield()  // what was wanted before the poller started
        let again = routing.askAgainBefore
        await withDiscardingTaskGroup { group in
            // Rings when an answered way's departure comes within `askAgainBefore`, or a failed way's retry comes: at
            // most 30 s late, so an answer or a failure stored meanwhile needs no word to the timer.
            group.addTask { [cache, now] in
                while !Task.isCancelled {
                    let wait = cache.nextDueAgain(before: again).map { $0.secondsSinceEpoch - now().secondsSinceEpoch }
                    if let wait, wait <= 0 { bell.yield() }
                    guard (try? await Task.sleep(for: .seconds(min(max(wait ?? 30, 1), 30)))) != nil else { return }
                }
            }
            await ask(on: bells)
            group.cancelAll()
        }
    }

    private func ask(on bells: AsyncStream<Void>) async {
        var budget = HourlyBudget(limit: routing.requestsPerHour)
        var failing: String?
        var historyFailing = false
        for await _ in bells.cancelOnGracefulShutdown() {
            var planAgain = false
            var keys = (cache.takeWanted() + cache.takeDueAgain(at: now(), before: routing.askAgainBefore))[...]
            while let key = keys.first {
                if let wait = budget.wait() {
                    logger.warning(
                        "routing budget spent (\(routing.requestsPerHour) requests an hour); \(keys.count) ways wait")
                    cache.giveBack(Array(keys))
                    // What came before the budget ran out is planned now, not after the wait.
                    if planAgain {
                        changed()
                        planAgain = false
                    }
                    guard (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: wait) })) != nil else {
                        return
                    }
                    keys = cache.takeWanted()[...]
                    continue
                }
                keys.removeFirst()
                budget.spend()
                let result = await cancelWhenGracefulShutdown {
                    await RoutingClient.seconds(key, routing: self.routing)
                }
                guard !Task.isShuttingDownGracefully else { return }
                switch result {
                case .success(let seconds):
                    switch cache.store(seconds, for: key, at: now(), threshold: replanAfter) {
                    case .new: planAgain = true
                    case .kept: break
                    case .moved(let from):
                        planAgain = true
                        logger.notice(
                            """
                            the way to \(key.destination) (\(key.mode.rawValue)) now takes \
                            \(DurationText.text(seconds)), not \(DurationText.text(from)): \
                            its time to leave and reminders move
                            """,
                            metadata: ["routing.engine": "\(routing.engine)"])
                    }
                    if failing != nil {
                        logger.notice(
                            "the routing engine answers again", metadata: ["routing.engine": "\(routing.engine)"])
                        failing = nil
                    }
                case .failure(let failure):
                    cache.unanswered(key, at: now())
                    if failing != failure.reason {
                        logger.warning(
                            """
                            the routing engine gave no way: \(failure.reason); ways keep their last answer, \
                            and those without one an estimated time to leave
                            """,
                            metadata: ["routing.engine": "\(routing.engine)"])
                        failing = failure.reason
                    }
                }
            }
            if planAgain {
                logger.debug("routed")
                changed()
            }
            do {
                try await history?.save(cache)
                historyFailing = false
            } catch {
                // Said once until it works again: the poller wakes for every way.
                if !historyFailing { logger.warning("cannot keep the routing engine's answers: \(error)") }
                historyFailing = true
            }
        }
    }
}
