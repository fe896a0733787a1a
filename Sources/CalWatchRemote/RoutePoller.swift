public import CalWatchCore
public import Logging
public import ServiceLifecycle

/// Asks the routing engine the ways planning found no answer for (`RouteCache`), within `requestsPerHour`, and
/// says when answers came (`changed`), so the watch plans their occurrences again. It sleeps until planning asks:
/// no polling. An engine that fails is said once per change of state; its ways keep no time to leave (reminders
/// count from the start) until it answers, when they are asked again on the next change.
public final class RoutePoller: Service {
    private let routing: TravelSettings.Routing
    private let cache: RouteCache
    private let logger: Logger
    private let changed: @Sendable () -> Void

    public init(
        routing: TravelSettings.Routing, cache: RouteCache, logger: Logger, changed: @escaping @Sendable () -> Void
    ) {
        self.routing = routing
        self.cache = cache
        self.logger = logger
        self.changed = changed
    }

    public func run() async throws {
        let (bells, bell) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        cache.onWanted { bell.yield() }
        bell.yield()  // what was wanted before the poller started
        var sent: [ContinuousClock.Instant] = []
        var failing: String?
        for await _ in bells.cancelOnGracefulShutdown() {
            var stored = 0
            var keys = cache.takeWanted()[...]
            while let key = keys.first {
                sent.removeAll { ContinuousClock.now - $0 > .seconds(3600) }
                if sent.count >= routing.requestsPerHour {
                    logger.warning(
                        "routing budget spent (\(routing.requestsPerHour) requests an hour); \(keys.count) ways wait")
                    cache.giveBack(Array(keys))
                    // What came before the budget ran out is planned now, not after the wait.
                    if stored > 0 {
                        changed()
                        stored = 0
                    }
                    let wait = .seconds(3600) - (ContinuousClock.now - sent[0])
                    guard (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: wait) })) != nil else {
                        return
                    }
                    keys = cache.takeWanted()[...]
                    continue
                }
                keys.removeFirst()
                sent.append(.now)
                let result = await cancelWhenGracefulShutdown {
                    await RoutingClient.seconds(key, routing: self.routing)
                }
                guard !Task.isShuttingDownGracefully else { return }
                switch result {
                case .success(let seconds):
                    cache.store(seconds, for: key)
                    stored += 1
                    if failing != nil {
                        logger.notice(
                            "the routing engine answers again", metadata: ["routing.engine": "\(routing.engine)"])
                        failing = nil
                    }
                case .failure(let failure):
                    cache.unanswered(key)
                    if failing != failure.reason {
                        logger.warning(
                            "the routing engine gave no way: \(failure.reason); reminders count from the start",
                            metadata: ["routing.engine": "\(routing.engine)"])
                        failing = failure.reason
                    }
                }
            }
            if stored > 0 {
                logger.debug("routed", metadata: ["routing.answers": "\(stored)"])
                changed()
            }
        }
    }
}
