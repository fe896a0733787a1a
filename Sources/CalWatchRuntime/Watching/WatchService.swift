public import CalWatchCore
import Foundation
public import Logging
public import ServiceLifecycle
import UnixSignals

/// `calwatch watch` as a long-running service: a `CalendarWatch` driven by inotify, a clock and signals.
///
/// - Changes: a file renamed into place or deleted (how vdirsyncer, khal and Radicale write) is atomic and read at
///   once; a file written in place is read once it has been quiet for `debounce`. A new or removed folder, a
///   collection's metadata, or a lost event queue makes it look at everything (unchanged files are not
///   re-parsed), and so does a slow safety-net timer. What is due goes first: the files noticed are read in slices
///   that end before the next wake (`UnreadFiles`), and each wake is timed against its instant (`WakeLateness`).
/// - Time: it sleeps on `clock` until the next wake, in chunks of at most `chunk` (`ContinuousClock` counts time
///   suspended), and plans at the wall clock's `now` on waking, so a suspend or a restart gets the late policy. A
///   jump of the wall clock (`WallClockChanges`) re-plans at once; the system zone is compared on every wake.
/// - Tasks: the bus of the watch in use and the SIGHUP listener are children of the service's task group; nothing
///   outlives `run`.
/// - Signals: graceful shutdown (SIGTERM, SIGINT through `ServiceGroup`) lets every sink finish what was
///   committed, hooks in flight included. SIGHUP (or `reload()`) reads the configuration again; when it has
///   problems the one in use stays. Otherwise the old watch's bus finishes what was committed before the new one
///   reads the journal, so no event reaches a sink twice.
public final class WatchService<WaitClock: Clock>: Service where WaitClock.Duration == Duration {
    /// How the service waits.
    public struct Options: Sendable {
        /// Quiet time after a file's last write in place before it is read.
        public var debounce: Duration = .milliseconds(100)
        /// The safety net: everything is looked at this often.
        public var rescanEvery: Duration = .seconds(600)
        /// The longest single sleep.
        public var chunk: Duration = .seconds(60)
        /// How long no file must change after many did before the memory reading them freed is given back.
        public var quiet: Duration = .seconds(1)
        /// Whether SIGHUP reloads (tests call `reload()` instead).
        public var reloadsOnHangup = true

        public init() {}
    }

    /// How the service makes its watch, first and on every reload.
    public struct Setup: Sendable {
        /// Reads the configuration as it is now; throws, worded for the log, when it has problems.
        public var load: @Sendable () throws -> Configuration
        /// Opens the journal and sinks of a configuration and makes a watch continuing at `now`.
        public var open: @Sendable (Configuration, Instant) async throws -> CalendarWatch
        /// Changes the calendars of the watch in use at `now` (`CalendarWatch.calendarsChanged`) when asked to
        /// (`calendarsChanged()`): a fleet's watcher taking or giving calendars. `nil`: nothing changed.
        public var changeCalendars: (@Sendable (CalendarWatch, Instant) async throws -> CalendarWatch.Report?)?
        /// Told of the problems each call found, with the calendars' roots and whose each is (a fleet records them).
        public var problems: (@Sendable ([CalendarProblem], [String: String]) -> Void)?

        public init(
            load: @escaping @Sendable () throws -> Configuration,
            open: @escaping @Sendable (Configuration, Instant) async throws -> CalendarWatch,
            changeCalendars: (@Sendable (CalendarWatch, Instant) async throws -> CalendarWatch.Report?)? = nil,
            problems: (@Sendable ([CalendarProblem], [String: String]) -> Void)? = nil
        ) {
            self.load = load
            self.open = open
            self.changeCalendars = changeCalendars
            self.problems = problems
        }
    }

    private let setup: Setup
    private let options: Options
    private let clock: WaitClock
    private let wallClock: @Sendable () -> Timestamp
    private let logger: Logger
    /// The system zone as it is now, for watches that follow it; `nil` when the zone is configured.
    private let systemZone: @Sendable () -> ZoneRules?
    /// What wakes `run`'s wait: made here, so that a `reload()` before the wait begins is kept for it.
    private let wakeups = Wakeups<FolderWait<WaitClock>.Signal>()
    /// The watch in use's answer for `calwatch next`, for the local server (other threads).
    private let inUse = Locked<NextSource?>(nil)

    /// How late the loop served its wakes, and what held the latest (`WakeLateness`).
    private let lateness = Locked(WakeLateness())

    /// How late the loop served its wakes so far.
    public var wakes: WakeLateness { lateness.withLock { $0 } }

    /// What `calwatch next` is answered from now: the watch in use's, `nil` before the first one opened.
    public var nextSource: NextSource? { inUse.withLock { $0 } }

    /// A service that sleeps on `clock` and plans at `wallClock` (the real ones in the daemon, manual ones in tests).
    public init(
        setup: Setup, options: Options = Options(), clock: WaitClock, wallClock: @escaping @Sendable () -> Timestamp,
        logger: Logger, systemZone: @escaping @Sendable () -> ZoneRules?
    ) {
        self.setup = setup
        self.options = options
        self.clock = clock
        self.wallClock = wallClock
        self.logger = logger
        self.systemZone = systemZone
    }

    /// Reads the configuration again, as SIGHUP does.
    public func reload() { wakeups.signal(.reload) }

    /// The calendars held changed (`Setup.changeCalendars` says how).
    public func calendarsChanged() { wakeups.signal(.calendars) }

    /// Plans again the occurrences whose time to leave a routing engine's answers may have changed (`RoutePoller`).
    public func travelTimesChanged() { wakeups.signal(.travelTimes) }

    /// Accounts whose sign-in lapsed, waiting for the loop.
    private let lapsed = Locked<[AccountNotice]>([])

    /// An account's sign-in lapsed (a poller saw it): the loop commits its `accountSignInNeeded` event.
    public func signInNeeded(_ notice: AccountNotice) {
        lapsed.withLock { $0.append(notice) }
        wakeups.signal(.accounts)
    }

    public func run() async throws {
        let wakeups = wakeups
        let wait = try FolderWait(
            clock: clock, wallClock: wallClock, debounce: options.debounce, chunk: options.chunk, wakeups: wakeups)
        if !wait.followsClockChanges {
            logger.warning("cannot follow changes of the wall clock; caught within a minute")
        }
        var configuration = try setup.load()
        var watch = try await setup.open(configuration, now)
        inUse.withLock { $0 = watch.nextSource }

        try await withThrowingTaskGroup(of: Void.self) { group in
            if options.reloadsOnHangup {
                group.addTask {
                    for await _ in await UnixSignalsSequence(trapping: .sighup) { wakeups.signal(.reload) }
                }
            }
            group.addTask { [bus = watch.bus] in await bus.run() }
            defer { group.cancelAll() }
            do {
                try await withGracefulShutdownHandler {
                    try await follow(&watch, configuration: &configuration, wait: wait, group: &group)
                } onGracefulShutdown: {
                    wakeups.signal(.shutdown)
                }
            } catch {
                _ = await watch.finish()
                throw error
            }
            logger.info("stopping: sinks finish what was committed")
            log(await watch.finish())
        }
    }

    /// The loop: waits for the earliest of a notice, a signal, a settled file, a rescan and the next wake, then
    /// does what is due. Returns on shutdown.
    private func follow(
        _ watch: inout CalendarWatch, configuration: inout Configuration, wait: FolderWait<WaitClock>,
        group: inout ThrowingTaskGroup<Void, any Error>
    ) async throws {
        log(try await watch.start(at: now), "start", in: watch)
        let listAgain = follow(watch, with: wait.watcher)
        logger.info(
            "watching",
            metadata: [
                "calendar.files": "\(watch.files.count)", "calendar.folders": "\(wait.watcher.watchedCount)",
                "calendar.occurrences": "\(watch.occurrenceCount)",
                "watch.next_wake": "\(watch.nextWake.map { "\($0)" } ?? "none")",
            ])
        // Folders newly watched are listed again at once (the rescan is cheap when nothing changed).
        var safetyRescanAt = listAgain ? clock.now : clock.now.advanced(by: options.rescanEvery)
        var zone = watch.zone
        var unread = UnreadFiles()
        /// A look at everything was asked for (a lost queue, a new folder) and waits for its moment.
        var rescanWanted = false
        defer { logger.info("wakes served", metadata: ["watch.wakes": "\(wakes)"]) }

        while true {
            // After many files changed, a quiet moment gives what reading them freed back (`returnFreedMemory`).
            let quietBy = watch.holdsFreedMemory ? min(clock.now.advanced(by: options.quiet), safetyRescanAt) : nil
            // Files still unread are read on at once, and a rescan due is made once they are, unless the next wake
            // is too near: then the loop waits for it first.
            let rescanDue = rescanWanted || safetyRescanAt <= clock.now
            let readNow = unread.slice(before: watch.nextWake, now: wallClock()) > 0
            let rescanNow = rescanDue && unread.isEmpty && roomForRescan(before: watch.nextWake)
            let deadline = readNow || rescanNow ? clock.now : rescanDue ? nil : quietBy ?? safetyRescanAt
            lateness.withLock { $0.waiting(for: watch.nextWake, now: milliseconds) }
            let turn = await wait.next(untilWall: watch.nextWake.map(Timestamp.init), orUntil: deadline)
            lateness.withLock { $0.woke(now: milliseconds) }
            // A graceful shutdown, or the task running the service cancelled.
            if turn.signals.contains(.shutdown) || Task.isCancelled { return }
            if turn.signals.contains(.clockSet) {
                logger.notice("the wall clock was set; planning again", metadata: ["watch.now": "\(now)"])
            }
            if turn.signals.contains(.reload) {
                let before = ObjectIdentifier(watch)
                let added = try await timed("a reload", plans: false) { _ in
                    try await reload(&watch, configuration: &configuration, watcher: wait.watcher, group: &group)
                }
                if added { safetyRescanAt = clock.now }
                // A new watch read every file.
                if ObjectIdentifier(watch) != before { unread = UnreadFiles() }
                zone = watch.zone
            }

            if turn.signals.contains(.calendars), let change = setup.changeCalendars,
                let report = try await timed("a change of the calendars held", { try await change(watch, $0) })
            {
                log(report, "calendars", in: watch)
                if follow(watch, with: wait.watcher) { safetyRescanAt = clock.now }
            }
            if turn.signals.contains(.travelTimes) {
                log(
                    try await timed("planning new travel times") { try await watch.travelTimesChanged(at: $0) },
                    "travel", in: watch)
            }
            if turn.signals.contains(.accounts) {
                let notices = lapsed.withLock { lapsed in
                    defer { lapsed = [] }
                    return lapsed
                }
                log(
                    try await timed("an account's notice", plans: false) {
                        try await watch.signInNeeded(notices, at: $0)
                    },
                    "accounts", in: watch)
            }
            let instant = clock.now
            if let current = systemZone(), current.identifier != zone.identifier {
                logger.notice("the system zone changed from \(zone.identifier) to \(current.identifier)")
                zone = current
                log(
                    try await timed("a change of zone") { try await watch.zoneChanged(to: current, at: $0) }, "zone",
                    in: watch)
            }
            // A boarding pass came or went: every flight is planned with the passes as they are now.
            let passFolders = watch.passFolderPaths.map { $0 + "/" }
            let passes = turn.files.filter { file in passFolders.contains { file.hasPrefix($0) } }
            if passes.contains(where: { BoardingPasses.isPass(($0 as NSString).lastPathComponent) }) {
                let (report, problems) = try await timed("reading boarding passes") {
                    try await watch.passesChanged(at: $0)
                }
                for problem in problems { logger.warning("passes: \(problem)") }
                log(report, "passes", in: watch)
            }
            // An answer rang: the `advance` below takes it.
            let bell = watch.answerBell + "/"
            // A wallet pass is also a calendar's item (`Configuration.passRoots`): read like one.
            unread.add(
                turn.files.filter { file in
                    !file.hasPrefix(bell) && (!passes.contains(file) || file.hasSuffix(".pkpass"))
                })
            if turn.rescan { rescanWanted = true }
            // Not while files noticed wait to be read (the rescan would read them all at once), nor just before a
            // wake.
            if rescanWanted || safetyRescanAt <= instant, unread.isEmpty, roomForRescan(before: watch.nextWake) {
                rescanWanted = false
                safetyRescanAt = instant.advanced(by: options.rescanEvery)
                let report = try await timed("a rescan") { try await watch.filesChanged(.init(rescan: true), at: $0) }
                unread = UnreadFiles()
                for path in report.unsettled { wait.read(path, at: instant.advanced(by: watch.files.settle)) }
                if follow(watch, with: wait.watcher) { safetyRescanAt = clock.now }
                log(report, "rescan", in: watch)
            }
            // What is due goes before files still unread; they are read in slices that end before the next wake.
            log(try await timed("planning") { try await watch.advance(to: $0) }, "time", in: watch)
            let count = unread.slice(before: watch.nextWake, now: wallClock())
            if count > 0 {
                let files = unread.take(count)
                let began = ContinuousClock.now
                let report = try await timed("reading changed files") {
                    try await watch.filesChanged(.init(files: Set(files)), at: $0)
                }
                unread.took(count, in: ContinuousClock.now - began)
                for path in report.unsettled { wait.read(path, at: instant.advanced(by: watch.files.settle)) }
                log(report, "change", in: watch)
            }
            CalwatchMetrics.planned(at: wallClock())
            // Not just before something is due: giving a large heap back takes a few milliseconds.
            if turn.files.isEmpty && !rescanWanted && unread.isEmpty, let quietBy, clock.now >= quietBy,
                watch.nextWake.map({ $0 > now.adding(seconds: 1) }) ?? true
            {
                await timed("giving freed memory back", plans: false) { _ in watch.returnFreedMemory(logger: logger) }
            }
        }
    }

    /// Whether a rescan fits before `wake`: it lists every folder and stats every file (tens of milliseconds for
    /// 10,000 files on a busy machine), and reads those changed unnoticed, which are few.
    private func roomForRescan(before wake: Instant?) -> Bool {
        guard let wake else { return true }
        return wake.secondsSinceEpoch * 1000 - milliseconds >= 250
    }

    /// `work` at the wall clock's `now`, timed against the wake due (`WakeLateness`); a wake it served later than
    /// `WakeLateness.lateAfter` is logged with what held it.
    /// `plans`: whether `work` plans at the instant it is given (else it only holds the loop).
    private func timed<Result>(
        _ what: String, plans: Bool = true, _ work: (Instant) async throws -> Result
    ) async rethrows -> Result {
        let start = wallClock()
        let result = try await work(start.instant)
        let end = milliseconds
        let late = lateness.withLock {
            $0.did(what, from: start.millisecondsSinceEpoch, to: end, plannedAt: plans ? start.instant : nil)
        }
        if let late, late.milliseconds > WakeLateness.lateAfter {
            logger.notice("a wake came late", metadata: ["watch.late": "\(late)"])
        }
        return result
    }

    /// The wall clock in milliseconds since 1970.
    private var milliseconds: Int64 { wallClock().millisecondsSinceEpoch }

    /// Reads the configuration again. When it has no problems, the old watch's bus finishes what was committed
    /// before the new watch opens the journal and sinks, so no event reaches a sink twice.
    /// Returns whether folders are watched that were not (to be listed again).
    private func reload(
        _ watch: inout CalendarWatch, configuration: inout Configuration, watcher: DirectoryWatcher,
        group: inout ThrowingTaskGroup<Void, any Error>
    ) async throws -> Bool {
        let fresh: Configuration
        do {
            fresh = try setup.load()
        } catch {
            logger.error("configuration not reloaded, the one in use stays: \(error)")
            return false
        }
        if let reason = Self.doubtful(fresh, replacing: configuration) {
            logger.error("configuration not reloaded, the one in use stays: \(reason)")
            return false
        }
        log(await watch.finish())
        do {
            watch = try await setup.open(fresh, now)
            configuration = fresh
        } catch {
            logger.error("configuration not reloaded (\(error)); the one in use is opened again")
            watch = try await setup.open(configuration, now)
        }
        group.addTask { [bus = watch.bus] in await bus.run() }
        inUse.withLock { $0 = watch.nextSource }
        log(try await watch.start(at: now), "reload", in: watch)
        let added = follow(watch, with: watcher)
        logger.notice("configuration read again", metadata: ["calendar.files": "\(watch.files.count)"])
        return added
    }

    /// Why a configuration read on a reload is not taken, when it looks like a file caught mid-save rather than
    /// what the user meant: an empty file, or the file in use gone. Both would silently mean "all defaults", and
    /// drop every hook and sink.
    static func doubtful(_ fresh: Configuration, replacing current: Configuration) -> String? {
        if fresh.fileIsEmpty, let file = fresh.file {
            return "\(file) holds no settings (caught while being saved?); write `{}` in it for all the defaults"
        }
        if let file = current.file, fresh.file == nil {
            return "\(file) is gone; put it back, or restart calwatch to run on the defaults"
        }
        return nil
    }

    /// The wall clock, to the second, for planning.
    private var now: Instant { wallClock().instant }

    /// Watches the folders the last read found. Returns whether a calendar folder is watched that was not: a file
    /// renamed into it after it was listed and before its watch began (a sync filling a new collection) is seen
    /// only by listing it again, which the caller does at once.
    @discardableResult
    private func follow(_ watch: CalendarWatch, with watcher: DirectoryWatcher) -> Bool {
        try? FileManager.default.createDirectory(
            atPath: watch.answerBell, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // The first folder of passes is where `calwatch pass add` writes: made so that it can be followed from the
        // start; the others are followed where they exist.
        if let first = watch.passFolderPaths.first {
            try? FileManager.default.createDirectory(
                atPath: first, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let passFolders = watch.passFolderPaths.filter { FileManager.default.fileExists(atPath: $0) }
        let followed = watcher.follow(watch.files.directories + [watch.answerBell] + passFolders)
        for failure in followed.failures {
            logger.warning(
                "cannot watch \(failure.path): \(failure.reason); changes there are seen by the rescan",
                metadata: ["calendar.path": "\(failure.path)"])
        }
        return followed.added.contains { $0 != watch.answerBell && !passFolders.contains($0) }
    }

    private func log(_ report: CalendarWatch.Report, _ cause: Logger.Message, in watch: CalendarWatch) {
        CalwatchMetrics.read(files: report.parsed, problems: report.problems)
        if !report.problems.isEmpty { setup.problems?(report.problems, watch.files.scopes) }
        for problem in CalendarProblem.shown(report.problems) {
            let metadata: Logger.Metadata = ["calendar.path": "\(problem.path)"]
            if problem.severity == .error {
                logger.error("\(problem)", metadata: metadata)
            } else {
                logger.warning("\(problem)", metadata: metadata)
            }
        }
        guard report.total > 0 || report.parsed > 0 || report.removed > 0 else { return }
        let counts = EventType.allCases.compactMap { type in report.events[type].map { "\(type.rawValue) \($0)" } }
        logger.info(
            cause,
            metadata: [
                "watch.events": "\(report.total)\(counts.isEmpty ? "" : " (" + counts.joined(separator: ", ") + ")")",
                "calendar.parsed": "\(report.parsed)", "calendar.changed": "\(report.changed)",
                "calendar.removed": "\(report.removed)",
            ])
    }

    private func log(_ reports: [EventBus.SinkReport]) {
        for sink in reports {
            var metadata: Logger.Metadata = ["sink.name": "\(sink.name)", "sink.delivered": "\(sink.delivered)"]
            if sink.failures > 0 { metadata["sink.failures"] = "\(sink.failures)" }
            if sink.undelivered > 0 { metadata["sink.undelivered"] = "\(sink.undelivered), kept in the journal" }
            logger.info("sink finished", metadata: metadata)
        }
    }
}
