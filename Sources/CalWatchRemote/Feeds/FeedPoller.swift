public import CalWatchCore
import CalWatchRuntime
import Foundation
public import Logging
public import ServiceLifecycle

/// Keeps the configured feeds fresh while `calwatch watch` runs: each feed fetched at start, then on its
/// `FeedSchedule` (its interval with jitter, backing off on failure, honouring `Retry-After`), slept on an
/// injected clock. A fetch that changes a feed renames a new `calendar.ics` into its cache folder, which the
/// daemon's watcher sees like any file written there: only what changed is planned again. A failure is logged
/// once per change of state (failing, then fetched again), with the address and no credentials; the copy kept
/// stays in effect meanwhile.
public struct FeedPoller<WaitClock: Clock>: Service where WaitClock.Duration == Duration {
    let feeds: [SourceSettings]
    let root: String
    let clock: WaitClock
    let fetcher: FeedFetcher
    let logger: Logger
    /// In -1...1; random in the daemon, fixed in tests.
    let jitter: @Sendable () -> Double
    /// Shared by the pollers of a daemon: how many calendars are fetched at once.
    let fetching: Permits?
    /// Told of each failed poll of an account whose sign-in lapsed (the daemon's watch makes one event of a lapse);
    /// `nil` where no notice reaches a sink (`calwatch next`), so no device code is asked for there.
    let signInNeeded: (@Sendable (AccountNotice) -> Void)?

    public init(
        feeds: [SourceSettings], root: String = FeedCache.root(), clock: WaitClock,
        fetcher: FeedFetcher = FeedFetcher(),
        logger: Logger, jitter: @escaping @Sendable () -> Double = { Double.random(in: -1...1) }
    ) {
        self.init(
            feeds: feeds, root: root, clock: clock, fetcher: fetcher, logger: logger, jitter: jitter, fetching: nil,
            signInNeeded: nil)
    }

    init(
        feeds: [SourceSettings], root: String, clock: WaitClock, fetcher: FeedFetcher, logger: Logger,
        jitter: @escaping @Sendable () -> Double, fetching: Permits?,
        signInNeeded: (@Sendable (AccountNotice) -> Void)?
    ) {
        self.fetching = fetching
        self.signInNeeded = signInNeeded
        self.feeds = feeds
        self.root = root
        self.clock = clock
        self.fetcher = fetcher
        self.logger = logger
        self.jitter = jitter
    }

    /// The cache folders the feeds are read from, made (mode 0700) when missing, so the watcher follows them from
    /// the start.
    public static func folders(_ feeds: [SourceSettings], root: String = FeedCache.root()) -> [String] {
        feeds.compactMap { settings in
            guard let folder = settings.open(root: root)?.folder else { return nil }
            try? FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            return folder
        }
    }

    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            for settings in feeds {
                guard let remote = settings.open(root: root, fetcher: fetcher) else { continue }
                group.addTask { await poll(remote) }
            }
        }
    }

    /// The wait before the next poll. After a failure of a calendar signed in to, it is cut short when the sign-in
    /// changes: looked at every 5 s (a file's time), so a new `calwatch account add` is read at once.
    private func pause(_ wait: Duration, _ remote: any RemoteCalendar, _ outcome: FeedFetcher.Outcome) async throws {
        guard case .failed = outcome, let before = remote.signedIn else { return try await clock.sleep(for: wait) }
        var left = wait
        while left > .zero {
            let step = min(left, .seconds(5))
            try await clock.sleep(for: step)
            left -= step
            if remote.signedIn != before {
                logger.notice("\(remote.shownURL): signed in again; asking now")
                return
            }
        }
    }

    private func poll(_ remote: any RemoteCalendar) async {
        var schedule = FeedSchedule(every: remote.every)
        var failing: String?
        repeat {
            // In turn with the daemon's other calendars (waiting counts in neither the fetch's time nor its limits).
            await fetching?.acquire()
            // Stopping while it waited: the others waiting go as quickly.
            if Task.isCancelled || Task.isShuttingDownGracefully {
                fetching?.release()
                return
            }
            let before = remote.traffic
            let started = ContinuousClock.now
            // A shutdown ends a fetch in flight at once (the client stops its transfer); the copy from before stays.
            let outcome = await cancelWhenGracefulShutdown { await remote.fetch() }
            fetching?.release()
            FeedSync.noteAsked(remote)
            guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
            var polled: Logger.Metadata = [
                "feed.url": "\(remote.shownURL)",
                "feed.milliseconds": "\((ContinuousClock.now - started) / .milliseconds(1))",
            ]
            if let before, let after = remote.traffic {
                polled["feed.requests"] = "\(after.requests - before.requests)"
                polled["feed.bytes"] = "\(after.bytes - before.bytes)"
            }
            logger.debug("polled: \(outcome.word)", metadata: polled)
            if let signInNeeded, remote.signInNeeded != nil, let notice = await remote.signInNotice() {
                signInNeeded(notice)
            }
            switch outcome {
            case .failed(let reason, _):
                if failing != reason {
                    logger.warning(
                        "\(reason); retrying with a growing delay",
                        metadata: ["feed.url": "\(remote.shownURL)"])
                }
                failing = reason
            case .changed(let bytes):
                if failing != nil { logger.notice("\(remote.shownURL): fetched again") }
                failing = nil
                logger.info("feed changed", metadata: ["feed.url": "\(remote.shownURL)", "feed.bytes": "\(bytes)"])
                if bytes >= FreedMemory.largeFetch { FreedMemory.giveBack(logger: logger) }
            case .unchanged:
                if failing != nil { logger.notice("\(remote.shownURL): fetched again") }
                failing = nil
            }
            let wait = schedule.next(after: outcome, jitter: jitter())
            guard (try? await cancelWhenGracefulShutdown({ try await pause(wait, remote, outcome) })) != nil else {
                return
            }
        } while !Task.isCancelled
    }
}

/// As swift-service-lifecycle logs it at start and stop: how many, not where (addresses may hold passwords).
extension FeedPoller: CustomStringConvertible {
    public var description: String { "FeedPoller(\(feeds.count) calendars on servers)" }
}

/// The calendars on servers the daemon polls, which change when a reload names others or a fleet's watcher takes and
/// gives back calendars: each polled by a `FeedPoller` of its own while named, stopped when no longer named (one
/// named again with the same settings is not fetched anew), and all stopped on a graceful shutdown. Each poller is
/// a child of `run`'s task group, so none outlives the service. At most `fetchingAtOnce` are fetched at once: a
/// watcher given hundreds of accounts at start asks their servers in turn, not with hundreds of transfers (each a
/// thread of its own) at the same moment.
public actor PolledCalendars: Service {
    private let logger: Logger
    private let root: String
    private let fetching: Permits
    /// The stop of each feed polled now.
    private var polling: [SourceSettings: Outcome<Void>] = [:]
    /// The feeds to start polling, each with its stop, for `run` to take.
    private let starts: AsyncStream<(SourceSettings, Outcome<Void>)>
    private let startInput: AsyncStream<(SourceSettings, Outcome<Void>)>.Continuation
    /// Who is told of an account's lapsed sign-in (`onSignInNeeded`).
    private nonisolated let noticed = Locked<@Sendable (AccountNotice) -> Void>({ _ in })
    /// Where the pollers' steps run: copies written and synced, tokens saved, pages parsed, none of it on the
    /// cooperative pool that wakes the reminders. Kept here for as long as the pollers prefer it.
    private let executor = BlockingTaskExecutor(name: "calwatch-remote")

    public init(logger: Logger, root: String = FeedCache.root(), fetchingAtOnce: Int = 8) {
        self.logger = logger
        self.root = root
        fetching = Permits(fetchingAtOnce)
        (starts, startInput) = AsyncStream.makeStream()
    }

    /// Tells `tell` of each failed poll of an account whose sign-in lapsed (the daemon's watch).
    public nonisolated func onSignInNeeded(_ tell: @escaping @Sendable (AccountNotice) -> Void) {
        noticed.withLock { $0 = tell }
    }

    /// Polls exactly `feeds` from now on: a new one is fetched at once.
    public func follow(_ feeds: [SourceSettings]) {
        let wanted = Set(feeds)
        for (feed, stop) in polling where !wanted.contains(feed) {
            stop.set()
            polling[feed] = nil
        }
        for feed in wanted where polling[feed] == nil {
            let stop = Outcome<Void>()
            polling[feed] = stop
            startInput.yield((feed, stop))
        }
    }

    public func run() async throws {
        let (logger, root, fetching, noticed) = (logger, root, fetching, noticed)
        await withDiscardingTaskGroup { group in
            for await (feed, stop) in starts.cancelOnGracefulShutdown() {
                group.addTask(executorPreference: executor) {
                    let poller = FeedPoller(
                        feeds: [feed], root: root, clock: ContinuousClock(), fetcher: FeedFetcher(), logger: logger,
                        jitter: { Double.random(in: -1...1) }, fetching: fetching,
                        signInNeeded: { notice in noticed.withLock { $0 }(notice) })
                    // Until it is no longer named, or the watch stops.
                    await withTaskGroup(of: Void.self) { one in
                        one.addTask { try? await poller.run() }
                        one.addTask { _ = await stop.wait() }
                        await one.next()
                        one.cancelAll()
                    }
                }
            }
            group.cancelAll()
        }
    }
}
