import CalWatchCore

/// The wait of a loop that follows calendar folders, shared by `watch` (`WatchService`) and `next --follow`
/// (`NextFollower`): inotify and a `timerfd` wake it, and it sleeps on an injected clock until a wall-clock
/// instant, in chunks of at most `chunk` (a clock that counts suspended time notices a suspend within one).
///
/// Files renamed into place or deleted (how vdirsyncer, khal and Radicale write) are complete at once; a file
/// written in place is due once it has been quiet for `debounce`, and so is a look at everything after a folder came
/// or went, a collection's metadata changed or events were lost.
final class FolderWait<WaitClock: Clock> where WaitClock.Duration == Duration {
    /// Why the loop woke, besides time.
    enum Signal: Hashable, Sendable {
        case files, clockSet, reload, shutdown
        /// A routing engine's answers came: the times to leave they give are planned again.
        case travelTimes
        /// The calendars held changed (a fleet's watcher took or gave some).
        case calendars
        /// An account's sign-in lapsed (`WatchService.signInNeeded`).
        case accounts
    }

    /// What one wait brought.
    struct Turn {
        /// What was signalled (`.files` included when the watcher noticed something).
        var signals: Set<Signal>
        /// Files to read now: renamed into place or deleted, or written in place and quiet since.
        var files: Set<String> = []
        /// Everything to be looked at again, its notice quiet since.
        var rescan = false
    }

    /// The inotify watcher; the loop says which folders it follows.
    let watcher: DirectoryWatcher
    private let clockChanges: WallClockChanges?
    private let wakeups: Wakeups<Signal>
    private let clock: WaitClock
    private let wallClock: @Sendable () -> Timestamp
    private let debounce: Duration
    private let chunk: Duration
    private var quietAt: [String: WaitClock.Instant] = [:]
    private var rescanAt: WaitClock.Instant?

    /// A wait on `clock` for instants of `wallClock`; a file written in place is read once quiet for `debounce`.
    /// `wakeups` may be made before the wait, so that what is signalled before it begins is kept for it.
    init(
        clock: WaitClock, wallClock: @escaping @Sendable () -> Timestamp, debounce: Duration,
        chunk: Duration = .seconds(60), wakeups: Wakeups<Signal> = Wakeups()
    ) throws {
        self.wakeups = wakeups
        watcher = try DirectoryWatcher { wakeups.signal(.files) }
        clockChanges = try? WallClockChanges { wakeups.signal(.clockSet) }
        self.clock = clock
        self.wallClock = wallClock
        self.debounce = debounce
        self.chunk = chunk
    }

    /// Whether a change of the wall clock wakes the wait at once (else it is seen within one chunk).
    var followsClockChanges: Bool { clockChanges != nil }

    /// Wakes the wait (SIGHUP's reload, a graceful shutdown), from any thread.
    func signal(_ signal: Signal) { wakeups.signal(signal) }

    /// Makes `path` due again at `instant` (a file caught half-written, given time to settle).
    func read(_ path: String, at instant: WaitClock.Instant) { quietAt[path] = instant }

    /// Waits for the first of: a signal, a notice of a renamed file, a written file turning quiet, a rescan coming
    /// due, `wallWake` on the wall clock, `deadline` on the wait's clock, and one chunk from now.
    func next(untilWall wallWake: Timestamp?, orUntil deadline: WaitClock.Instant? = nil) async -> Turn {
        let start = clock.now
        var until = start.advanced(by: chunk)
        if let wallWake {
            let milliseconds = wallWake.millisecondsSinceEpoch - wallClock().millisecondsSinceEpoch
            until = min(until, start.advanced(by: .milliseconds(max(0, milliseconds))))
        }
        for instant in [deadline, rescanAt].compactMap({ $0 }) + quietAt.values { until = min(until, instant) }
        var turn = Turn(signals: await wakeups.next(orUntil: until, on: clock))
        if turn.signals.contains(.files) {
            let notices = watcher.take()
            let quiet = clock.now.advanced(by: debounce)
            for path in notices.files {
                if notices.replaced.contains(path) {
                    // Renamed into place or deleted: complete now, and no earlier write needs waiting for.
                    quietAt[path] = nil
                    turn.files.insert(path)
                }
                if notices.written.contains(path) { quietAt[path] = quiet }
            }
            if notices.rescan { rescanAt = quiet }
        }
        let now = clock.now
        for (path, quiet) in quietAt where quiet <= now {
            quietAt[path] = nil
            turn.files.insert(path)
        }
        if let due = rescanAt, due <= now {
            rescanAt = nil
            turn.rescan = true
        }
        return turn
    }
}
