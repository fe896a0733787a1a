public import CalWatchCore
import Foundation

/// `calwatch next --follow`: the status line printed once a minute, and at once when it changes (a calendar file
/// written, a meeting starting or ending, a countdown turning `soon`, the wall clock or the system zone set).
///
/// It reads the calendars itself, as the daemon does (`CalendarFiles`: a file is parsed again only when it
/// changed), and sleeps between prints: inotify and a `timerfd` wake it, so an idle follower costs no CPU. Every
/// minute's line is printed even when it reads the same (a bar shows that the process is alive); a change prints
/// only when the line differs.
public final class NextFollower<WaitClock: Clock> where WaitClock.Duration == Duration {
    /// What to show and from where.
    public struct Setup: Sendable {
        public var configuration: Configuration
        public var options: NextUp.Options
        public var format: NextUpFormat
        public var style: NextUpFormat.Style
        /// The zone times are shown in, and floating times read in.
        public var zone: ZoneRules
        /// Whether the system zone is followed (no zone configured): `/etc/localtime` is watched too.
        public var followsSystemZone: Bool
        /// The daemon's journal, for what was dismissed (`calwatch dismiss`); its answer folder is watched.
        public var journal: JournalStore?

        public init(
            configuration: Configuration, options: NextUp.Options, format: NextUpFormat, style: NextUpFormat.Style,
            zone: ZoneRules, followsSystemZone: Bool, journal: JournalStore? = nil
        ) {
            self.journal = journal
            self.configuration = configuration
            self.options = options
            self.format = format
            self.style = style
            self.zone = zone
            self.followsSystemZone = followsSystemZone
        }
    }

    private let setup: Setup
    private let clock: WaitClock
    private let wallClock: @Sendable () -> Timestamp
    private let systemZone: @Sendable () -> ZoneRules?
    private let problems: ([CalendarProblem]) -> Void
    private let output: (String) -> Bool
    /// A file written in place is read once it has been quiet this long (a rename into place at once).
    var debounce: Duration = .milliseconds(100)

    private var zone: ZoneRules
    private var options: NextUp.Options
    private let files: CalendarFiles
    private var classifier: Classifier
    private var byOrigin: [PlanningLoop.Origin: [Occurrence]] = [:]
    /// The expansion window in use, re-centred as time goes on.
    private var expansion: ExpansionOptions
    private var expandedAt = Instant(secondsSinceEpoch: .min)
    private var expandedOnce = false

    /// A follower that sleeps on `clock`, reads the time from `wallClock` and hands each line to `output`, which
    /// returns `false` when its reader has gone (the follower then returns). Calendar problems go to `problems`,
    /// each once.
    public init(
        setup: Setup, clock: WaitClock, wallClock: @escaping @Sendable () -> Timestamp,
        systemZone: @escaping @Sendable () -> ZoneRules?, problems: @escaping ([CalendarProblem]) -> Void,
        output: @escaping (String) -> Bool
    ) {
        self.setup = setup
        self.clock = clock
        self.wallClock = wallClock
        self.systemZone = systemZone
        self.problems = problems
        self.output = output
        zone = setup.zone
        options = setup.options
        files = CalendarFiles(roots: setup.configuration.calendars)
        classifier = Classifier(setup.configuration, passes: .read(folders: setup.configuration.passes))
        expansion = ExpansionOptions(
            window: InstantWindow(start: Instant(secondsSinceEpoch: 0), end: Instant(secondsSinceEpoch: 1)),
            defaultZone: setup.zone)
    }

    /// Prints the status now, then follows until the reader goes away or the task is cancelled.
    public func run() async throws {
        let wait = try FolderWait(clock: clock, wallClock: wallClock, debounce: debounce)
        problems(files.rescan().problems)
        watch(with: wait.watcher)
        reexpand(at: now)
        try await readDismissed()
        var last: String?
        var nextMinute = Self.minuteAfter(wallClock())
        var first = true

        while !Task.isCancelled {
            let instant = now
            if instant.secondsSinceEpoch - expandedAt.secondsSinceEpoch >= 6 * 3600 { reexpand(at: instant) }
            let all = occurrences
            let status = NextUp(all, facts: classifier.facts(for:), options: options, now: instant, zone: zone)
            let line = setup.format.render(status, style: setup.style)
            let minute = wallClock().millisecondsSinceEpoch >= nextMinute.millisecondsSinceEpoch
            if first || minute || line != last {
                guard output(line) else { return }
                last = line
                first = false
            }
            if minute {
                nextMinute = Self.minuteAfter(wallClock())
                try await readDismissed()
            }

            // Sleep until the next minute, the next change of the status, or a written file turning quiet.
            let change = NextUp.nextChange(all, facts: classifier.facts(for:), options: options, now: instant)
            let turn = await wait.next(untilWall: min(nextMinute, change.map(Timestamp.init) ?? nextMinute))
            if Task.isCancelled { break }
            if turn.signals.contains(.clockSet) { nextMinute = Self.minuteAfter(wallClock()) }
            if !turn.files.isEmpty || turn.rescan {
                // An answer rang the daemon: it takes it within a moment, and the journal says so.
                if let bell = setup.journal.map({ $0.path + ".answers/" }),
                    turn.files.contains(where: { $0.hasPrefix(bell) })
                {
                    try await Task.sleep(for: .milliseconds(300))
                    try await readDismissed()
                }
                read(.init(files: turn.files, rescan: turn.rescan), watcher: wait.watcher)
            }
            if setup.followsSystemZone, let current = systemZone(), current.identifier != zone.identifier {
                zone = current
                reexpand(at: now)
            }
        }
    }

    /// The occurrences held, file by file in the order they were first read.
    private var occurrences: [Occurrence] { byOrigin.keys.sorted().flatMap { byOrigin[$0]! } }

    /// Reads what the watcher named: the files, or everything after a folder change or lost events.
    private func read(_ notices: DirectoryWatcher.Notices, watcher: DirectoryWatcher) {
        let changes = notices.rescan ? files.rescan() : files.refresh(notices.files)
        problems(changes.problems)
        if notices.rescan { watch(with: watcher) }
        for (_, origin) in changes.removed { forget(origin) }
        for (source, origin, calendars) in changes.changed {
            forget(origin)
            var expanded: [Occurrence] = []
            problems(CalendarScan.expand(calendars, of: source, options: expansion, into: &expanded))
            if !expanded.isEmpty { byOrigin[origin] = expanded }
            classifier.noteStops(of: expanded, origin: origin)
        }
    }

    private func forget(_ origin: PlanningLoop.Origin) {
        guard byOrigin.removeValue(forKey: origin) != nil else { return }
        classifier.noteStops(of: [], origin: origin)
    }

    /// Expands every file again around `now` (at start, every six hours, on a zone change).
    private func reexpand(at now: Instant) {
        var options = ExpansionOptions(
            window: InstantWindow(start: now, end: now.adding(seconds: setup.options.horizon + 7 * 3600)),
            defaultZone: zone, includeTodos: setup.configuration.planner.includeTodos)
        options.lookBehind = setup.options.lookBehind
        expansion = options
        expandedAt = now
        byOrigin = [:]
        classifier = Classifier(setup.configuration, passes: .read(folders: setup.configuration.passes))
        var reported: [CalendarProblem] = []
        for (source, origin, calendars) in files.all {
            var expanded: [Occurrence] = []
            reported += CalendarScan.expand(calendars, of: source, options: options, into: &expanded)
            if !expanded.isEmpty { byOrigin[origin] = expanded }
            classifier.noteStops(of: expanded, origin: origin)
        }
        // Reported once: a later expansion finds the same problems in the same files.
        if !expandedOnce { problems(reported) }
        expandedOnce = true
    }

    /// The occurrences the daemon's journal says were dismissed.
    private func readDismissed() async throws {
        guard let journal = setup.journal else { return }
        options.dismissed = try await journal.dismissed(at: now)
    }

    /// Follows the calendar folders, the daemon's answer folder (when it has made one), and `/etc` for a change
    /// of `/etc/localtime` when following the system zone.
    private func watch(with watcher: DirectoryWatcher) {
        var folders = files.directories
        if let bell = setup.journal.map({ $0.path + ".answers" }), FileManager.default.fileExists(atPath: bell) {
            folders.append(bell)
        }
        if setup.followsSystemZone { folders.append("/etc") }
        watcher.follow(folders)
    }

    private var now: Instant { wallClock().instant }

    /// The next whole minute of the wall clock after `timestamp`.
    static func minuteAfter(_ timestamp: Timestamp) -> Timestamp {
        Timestamp(millisecondsSinceEpoch: (timestamp.millisecondsSinceEpoch / 60_000 + 1) * 60_000)
    }
}
