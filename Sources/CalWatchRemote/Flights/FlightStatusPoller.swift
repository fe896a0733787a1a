public import CalWatchCore
import CalWatchRuntime
import Foundation
public import Logging
public import ServiceLifecycle

/// The flight-status service's answers in a file beside the journal, `<journal>.flights.json`, mode 0600, with the
/// month's count of requests: a restart neither asks again what it knows nor forgets what the budget has left.
public enum FlightStatusFile {
    /// The most a file may be: 500 flights of a few answers each are far less.
    static let largest = 4 << 20

    public static func path(journal: String) -> String { journal + ".flights.json" }

    /// The answers the file keeps (none when it is missing, too large or unreadable).
    public static func load(journal: String) -> FlightStatusCache {
        guard let handle = FileHandle(forReadingAtPath: path(journal: journal)),
            let data = try? handle.read(upToCount: largest + 1), data.count <= largest
        else { return FlightStatusCache() }
        try? handle.close()
        return FlightStatusCache(data: data)
    }
}

/// Asks `flights.status`'s service about each flight planning has (`FlightStatusCache.tracked`): hourly from a day
/// before it leaves, every 10 minutes in the last 3 hours, until it leaves, within the month's budget. An answer
/// that changes something is planned at once (`changed`): a departure moved by more than `travel.replanAfter` moves
/// the time to leave and the reminders; a new gate or terminal, a cancellation or a diversion is a `flightChanged`.
/// A service that fails, or a budget spent, leaves the calendar's times in force and is said once. The file and the
/// key file are read and written on a thread of its own.
public actor FlightStatusPoller: Service {
    private let executor = BlockingExecutor(name: "calwatch-flights")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let settings: FlightStatusSettings
    private let cache: FlightStatusCache
    private let file: String
    private let replanAfter: Int64
    private let logger: Logger
    private let now: @Sendable () -> Instant
    private let changed: @Sendable () -> Void
    /// How long one request may take.
    private let deadline: Duration
    /// When each flight was last asked, answered or not: a failing service is not asked every minute.
    private var tried: [FlightStatusCache.Key: Instant] = [:]
    /// What the service last failed with, said once.
    private var failing: String?
    /// The month whose spent budget has been said.
    private var spentSaid: String?

    public init(
        settings: FlightStatusSettings, cache: FlightStatusCache, journal: String, replanAfter: Int64,
        logger: Logger, now: @escaping @Sendable () -> Instant = RoutePoller.wallClock,
        deadline: Duration = .seconds(15),
        changed: @escaping @Sendable () -> Void
    ) {
        self.deadline = deadline
        self.settings = settings
        self.cache = cache
        self.file = FlightStatusFile.path(journal: journal)
        self.replanAfter = replanAfter
        self.logger = logger
        self.now = now
        self.changed = changed
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully {
            await askDue()
            guard (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: .seconds(60)) })) != nil else {
                return
            }
        }
    }

    /// Asks about every flight that is due; returns the flights whose answer changed what planning sees.
    @discardableResult public func askDue() async -> [FlightStatusCache.Key] {
        let instant = now()
        var news: [FlightStatusCache.Key] = []
        var skipped: [FlightStatusCache.Key] = []
        var asked = false
        for (flight, live) in cache.tracked(before: instant) {
            let departure = live?.departure ?? flight.scheduled
            guard let interval = FlightStatusCache.interval(departure: departure, now: instant) else { continue }
            let last = [tried[flight.key], live?.status.asked].compactMap { $0 }.max()
            if let last, instant.secondsSinceEpoch - last.secondsSinceEpoch < interval { continue }
            guard cache.spend(at: instant, budget: settings.budget) else {
                skipped.append(flight.key)
                continue
            }
            asked = true
            tried[flight.key] = instant
            switch await FlightStatusClient.status(
                of: flight, settings: settings, at: instant, deadline: deadline)
            {
            case .success(let status):
                if cache.store(status, for: flight.key, threshold: replanAfter) {
                    news.append(flight.key)
                    if let change = cache.live(for: flight.key)?.changes.last, change.asked == instant {
                        logger.notice(
                            "flight \(flight.key): \(change.text)", metadata: ["provider": "\(settings.provider.name)"])
                    }
                }
                if failing != nil {
                    logger.notice("\(settings.provider.name) answers again", metadata: ["url": "\(settings.shownURL)"])
                    failing = nil
                }
            case .failure(let failure):
                if failing != failure.reason {
                    logger.warning(
                        "\(settings.provider.name) gave no status for \(flight.key): \(failure.reason); the calendar's time stays in force",
                        metadata: ["url": "\(settings.shownURL)"])
                    failing = failure.reason
                }
            }
        }
        let month = String(instant.description.prefix(7))
        if !skipped.isEmpty, spentSaid != month {
            let flights = skipped.map(\.description).joined(separator: ", ")
            logger.warning(
                "the flight-status budget is spent (\(settings.budget) requests in \(month)): \(flights) not asked; the calendar's times stay in force until the month ends"
            )
            spentSaid = month
        }
        if asked { save() }
        if !news.isEmpty { changed() }
        return news
    }

    private func save() {
        do {
            try AtomicFile.replace(file, with: cache.encoded(), mode: 0o600)
        } catch {
            logger.error("cannot keep the flight-status answers in \(file): \(error)")
        }
    }
}
