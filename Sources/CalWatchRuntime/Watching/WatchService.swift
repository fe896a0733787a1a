import Foundation
public import Logging
public import ServiceLifecycle
import UnixSignals
public import CalWatchCore

/// `calwatch watch` as a long-running service: a `CalendarWatch` driven by inotify, the real clock and signals.
///
/// - Changes: the watcher's notices are debounced per file, then only those files are looked at. A new or removed
///   folder, a collection's metadata, or a lost event queue makes it look at everything (unchanged files are
///   not re-parsed), and so does a slow safety-net timer.
/// - Time: it sleeps until the next wake in chunks of at most `chunk` on `ContinuousClock` (which counts time
///   suspended), and plans at the wall clock's `now` on waking, so a suspend or a restart gets the late policy. A
///   jump of the wall clock (`WallClockChanges`) re-plans at once; the system zone is compared on every wake.
/// - Signals: graceful shutdown (SIGTERM, SIGINT through `ServiceGroup`) lets every sink finish what was
///   committed, hooks in flight included; SIGHUP builds a new watch from the configuration read again, and keeps
///   the old one when that fails.
public final class WatchService: Service {
    /// How the service waits.
    public struct Options: Sendable {
        /// Quiet time after a file's last notice before it is read.
        public var debounce: Duration = .milliseconds(100)
        /// The safety net: everything is looked at this often.
        public var rescanEvery: Duration = .seconds(600)
        /// The longest single sleep.
        public var chunk: Duration = .seconds(60)

        public init() {}
    }

    /// Makes a watch from the configuration as it is now (read again on SIGHUP); throws a message for the log.
    public typealias Setup = @Sendable (_ now: Instant) throws -> CalendarWatch

    private let setup: Setup
    private let options: Options
    private let logger: Logger
    /// The system zone as it is now, for watches that follow it; `nil` when the zone is configured.
    private let systemZone: @Sendable () -> ZoneRules?

    public init(
        setup: @escaping Setup, options: Options = Options(), logger: Logger,
        systemZone: @escaping @Sendable () -> ZoneRules?
    ) {
        self.setup = setup
        self.options = options
        self.logger = logger
        self.systemZone = systemZone
    }

    private enum Input: Sendable { case files, clockSet, reload, tick, shutdown }

    public func run() async throws {
        let (inputs, input) = AsyncStream.makeStream(of: Input.self)
        let watcher = try DirectoryWatcher { input.yield(.files) }
        let clockChanges = try? WallClockChanges { input.yield(.clockSet) }
        if clockChanges == nil { logger.warning("cannot follow changes of the wall clock; caught within a minute") }
        let hangups = Task {
            for await _ in await UnixSignalsSequence(trapping: .sighup) { input.yield(.reload) }
        }
        defer { hangups.cancel() }

        var watch = try setup(Self.now)
        log(try await watch.start(at: Self.now), "start")
        follow(watch, with: watcher)
        logger.info(
            "watching",
            metadata: [
                "files": "\(watch.files.count)", "folders": "\(watcher.watchedCount)",
                "occurrences": "\(watch.occurrenceCount)", "nextWake": "\(watch.nextWake.map { "\($0)" } ?? "none")",
            ])

        let clock = ContinuousClock()
        var waitingFiles: [String: ContinuousClock.Instant] = [:]
        var rescanAt: ContinuousClock.Instant?
        var safetyRescanAt = clock.now + options.rescanEvery
        var zone = watch.zone
        var iterator = inputs.makeAsyncIterator()

        try await withGracefulShutdownHandler {
            while true {
                var deadline = clock.now + options.chunk
                if let wake = watch.nextWake {
                    let seconds = Double(wake.secondsSinceEpoch) - Date().timeIntervalSince1970
                    deadline = min(deadline, clock.now + .milliseconds(Int64(max(0, seconds) * 1000) + 5))
                }
                for instant in waitingFiles.values { deadline = min(deadline, instant) }
                deadline = min(deadline, rescanAt ?? safetyRescanAt, safetyRescanAt)
                let timer = Task {
                    try await Task.sleep(until: deadline, clock: clock)
                    input.yield(.tick)
                }
                let next = await iterator.next()
                timer.cancel()

                switch next {
                case .shutdown, nil:
                    return
                case .files:
                    let notices = watcher.take()
                    let settled = clock.now + options.debounce
                    for path in notices.files { waitingFiles[path] = settled }
                    if notices.rescan { rescanAt = settled }
                case .clockSet:
                    logger.notice("the wall clock was set; planning again at \(Self.now)")
                case .reload:
                    do {
                        let fresh = try setup(Self.now)
                        let reports = await watch.finish()
                        log(reports)
                        watch = fresh
                        log(try await watch.start(at: Self.now), "reload")
                        follow(watch, with: watcher)
                        zone = watch.zone
                        logger.notice("configuration read again", metadata: ["files": "\(watch.files.count)"])
                    } catch {
                        logger.error("configuration not reloaded, the one in use stays: \(error)")
                    }
                case .tick:
                    break
                }

                let now = clock.now
                if let current = systemZone(), current.identifier != zone.identifier {
                    logger.notice("the system zone changed from \(zone.identifier) to \(current.identifier)")
                    zone = current
                    log(try await watch.zoneChanged(to: current, at: Self.now), "zone")
                }
                let due = waitingFiles.filter { $0.value <= now }.map(\.key)
                if !due.isEmpty {
                    for path in due { waitingFiles[path] = nil }
                    let report = try await watch.filesChanged(.init(files: Set(due)), at: Self.now)
                    for path in report.unsettled { waitingFiles[path] = now + watch.files.settle }
                    log(report, "change")
                }
                if min(rescanAt ?? safetyRescanAt, safetyRescanAt) <= now {
                    rescanAt = nil
                    safetyRescanAt = now + options.rescanEvery
                    let report = try await watch.filesChanged(.init(rescan: true), at: Self.now)
                    for path in report.unsettled { waitingFiles[path] = now + watch.files.settle }
                    follow(watch, with: watcher)
                    log(report, "rescan")
                }
                log(try await watch.advance(to: Self.now), "time")
            }
        } onGracefulShutdown: {
            input.yield(.shutdown)
        }
        logger.info("stopping: sinks finish what was committed")
        log(await watch.finish())
    }

    /// The wall clock, to the second.
    static var now: Instant { Instant(secondsSinceEpoch: Int64(Date().timeIntervalSince1970.rounded(.down))) }

    private func follow(_ watch: CalendarWatch, with watcher: DirectoryWatcher) {
        for failure in watcher.follow(watch.files.directories) {
            logger.warning("cannot watch \(failure.path): \(failure.reason); changes there are seen by the rescan")
        }
    }

    private func log(_ report: CalendarWatch.Report, _ cause: Logger.Message) {
        for problem in report.problems {
            if problem.severity == .error { logger.error("\(problem)") } else { logger.warning("\(problem)") }
        }
        guard report.total > 0 || report.parsed > 0 || report.removed > 0 else { return }
        let counts = EventType.allCases.compactMap { type in report.events[type].map { "\(type.rawValue) \($0)" } }
        logger.info(
            cause,
            metadata: [
                "events": "\(report.total)\(counts.isEmpty ? "" : " (" + counts.joined(separator: ", ") + ")")",
                "parsed": "\(report.parsed)", "changed": "\(report.changed)", "removed": "\(report.removed)",
            ])
    }

    private func log(_ reports: [EventBus.SinkReport]) {
        for sink in reports {
            var metadata: Logger.Metadata = ["delivered": "\(sink.delivered)"]
            if sink.failures > 0 { metadata["failures"] = "\(sink.failures)" }
            if sink.undelivered > 0 { metadata["undelivered"] = "\(sink.undelivered), kept in the journal" }
            logger.info("sink \(sink.name)", metadata: metadata)
        }
    }
}
