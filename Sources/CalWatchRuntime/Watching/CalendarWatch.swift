public import CalWatchCore
public import Logging

/// The daemon's pipeline on a clock its caller drives (docs/design.md §1 and §9): calendar files → expansion →
/// classification → `PlanningLoop` → journal → bus → sinks.
///
/// The caller says what happened (files changed, time passed, the zone changed) and at which instant; each call
/// re-reads only what changed, plans at that instant and commits what is due before any sink sees it. Planning
/// at the real `now` is what applies the late policy after a restart or a suspend: a missed reminder whose anchor
/// has not passed comes once, marked late. Tests drive it on a manual clock; `WatchService` on the real one.
///
/// Its `bus` starts nothing by itself: the owner runs `bus.run()` as a child task for as long as the watch is in
/// use, and `finish` ends it.
public final class CalendarWatch {
    /// What one call did.
    public struct Report: Sendable {
        /// Events committed, by type.
        public var events: [EventType: Int] = [:]
        public var total = 0
        /// Problems not reported before (a file that stays broken is reported once).
        public var problems: [CalendarProblem] = []
        /// Files parsed, files whose occurrences changed, files gone.
        public var parsed = 0
        public var changed = 0
        public var removed = 0
        /// Files caught half-written: call `filesChanged` for them again after `CalendarFiles.settle`.
        public var unsettled: [String] = []
        /// Answers taken, with what became of each.
        public var answers: [(answer: JournalStore.Answer, outcome: String)] = []
    }

    /// How the daemon keeps its journal and window.
    public struct Options: Sendable {
        /// How long delivered events stay in the journal after they expire, and how often they are pruned.
        public var retention = PlanningLoop.Retention()
        /// How often the expansion window rolls forward (every file's occurrences expanded again, none re-parsed).
        public var rollEvery: Int64 = 86_400
        /// How long a half-written file is given to settle.
        public var settle: Duration = .seconds(2)

        public init() {}
    }

    public let configuration: Configuration
    public let files: CalendarFiles
    public private(set) var zone: ZoneRules
    private let options: Options
    private let classifier: Classifier
    private let journal: JournalStore
    /// Where committed events go; its owner runs it (`EventBus.run`).
    public let bus: EventBus
    private let sinkNames: [String]
    /// The occurrences held, which also join an event read back from the journal to its occurrence.
    let occurrences: WatchedOccurrences
    private let recordedTime: () -> Timestamp
    private var loop: PlanningLoop
    private var expansion: ExpansionOptions
    private var rolledAt: Instant
    /// Files changed or removed since freed memory was last given back (`FreedMemory`).
    private var churn = 0
    /// When each lapse's notice was last committed, for a day (`signInNeeded`).
    private var noticed: [EventID: Instant] = [:]
    /// What the local server answers from while the watch runs (`calwatch next`, the day, the event stream).
    public let nextSource: NextSource

    /// A watch continuing from `journal` at `now`; no calendar is read until `start`. Sink retries are slept on
    /// `clock`; sink failures are logged to `logger`. `handOver`: the calendars of a fleet this watcher takes over
    /// from others, with what those delivered about them, so that it is not delivered again.
    public init(
        configuration: Configuration, zone: ZoneRules, journal: JournalStore, sinks: [any EventSink], now: Instant,
        options: Options = Options(), clock: any Clock<Duration> = ContinuousClock(), routes: RouteCache? = nil,
        geocodes: GeocodeCache? = nil, weather: WeatherCache? = nil, statuses: FlightStatusCache? = nil,
        handOver: PlannerState.HandOver? = nil,
        recordedTime: @escaping () -> Timestamp, logger: Logger
    ) async throws {
        let asRead = configuration
        var configuration = configuration
        // The day's agenda is counted in the zone the watch runs in.
        configuration.planner.day?.zone = zone
        self.configuration = configuration
        self.zone = zone
        self.options = options
        self.journal = journal
        self.recordedTime = recordedTime
        files = CalendarFiles(roots: configuration.calendars, scopes: configuration.scopes, settle: options.settle)
        // Boarding passes as they are at each (re)start; the service follows their folders (`passesChanged`).
        passFolders = PassFolders(configuration.passes)
        let passes = await passFolders.read()
        for problem in passes.problems { logger.warning("passes: \(problem)") }
        let classifier = Classifier(
            configuration, routes: routes, geocodes: geocodes, weather: weather, passes: passes, statuses: statuses)
        self.classifier = classifier
        let occurrences = WatchedOccurrences(facts: classifier.facts(for:))
        self.occurrences = occurrences
        try await journal.verify(sinks)
        sinkNames = sinks.map(\.name)
        bus = EventBus(journal: journal, sinks: sinks, clock: clock, entry: occurrences.entry, logger: logger)
        // What another watcher of a fleet delivered about the calendars this one takes over counts as emitted.
        var state = try await journal.plannerState(from: now)
        // A fleet's calendars given to another watcher go on there: their live activities do not end here.
        if configuration.fleet { state.keep(scopes: Set(configuration.scopes.values)) }
        if let handOver { state.take(handOver) }
        loop = PlanningLoop(
            configuration: configuration.planner, facts: classifier.facts(for:), state: state,
            retention: options.retention)
        expansion = Self.expansion(configuration.planner, zone: zone, at: now, rollEvery: options.rollEvery)
        rolledAt = now
        nextSource = NextSource(
            configuration: asRead, occurrences: occurrences, facts: classifier.facts(for:), journal: journal)
    }

    /// The next instant at which something is due or the window rolls; sleep until then (in chunks).
    public var nextWake: Instant? {
        let roll = rolledAt.adding(seconds: options.rollEvery)
        return loop.nextInstant.map { min($0, roll) } ?? roll
    }

    /// Occurrences held in the window.
    public var occurrenceCount: Int { occurrences.count }

    /// Whether so many files changed since `returnFreedMemory` that it is worth calling once they stop changing
    /// (a first sync, a start, a vdir rewritten whole).
    public var holdsFreedMemory: Bool { churn >= FreedMemory.largeChange }

    /// Gives the memory that reading and planning those files freed back to the system (`FreedMemory`).
    public func returnFreedMemory(logger: Logger) {
        churn = 0
        FreedMemory.giveBack(logger: logger)
    }

    /// Reads every file and plans at `now`: what was missed while calwatch was not running comes now, by the
    /// late policy, and activities whose occurrence is gone end.
    public func start(at now: Instant) async throws -> Report {
        var report = Report()
        apply(files.rescan(), at: now, into: &report)
        nextSource.read(zone: zone, expansion: expansion)
        try await takeAnswers(at: now, into: &report)
        return try await commit(at: now, into: report, cause: .start)
    }

    /// A fleet's watcher took or gave calendars: only the files of those taken are read, those of calendars given
    /// are forgotten without ending what goes on at the watcher that takes them, and what was delivered about the
    /// ones taken (`handOver`) counts as emitted; `people` says whose each calendar is. Plans at `now`.
    public func calendarsChanged(
        roots: [String], scopes: [String: String], people: [String: [String]], handOver: PlannerState.HandOver?,
        at now: Instant
    ) async throws -> Report {
        classifier.follow(people: people)
        loop.keep(scopes: Set(scopes.values))
        if let handOver { loop.take(handOver) }
        files.follow(roots: roots, scopes: scopes)
        var report = Report()
        apply(files.rescan(), at: now, into: &report)
        return try await commit(at: now, into: report, cause: .change)
    }

    /// The folder `calwatch snooze`, `dismiss` and `ack` rename a file into after recording an answer in the
    /// journal: a watcher on it wakes the daemon, whose next `advance` takes the answer. A folder of its own, so
    /// that nothing else written beside the journal (in /tmp, say) wakes the daemon.
    public var answerBell: String { journal.answerBell }

    /// Each waiting answer becomes an event about its occurrence (one the journal's events name, or a subject),
    /// or is settled with why not: an occurrence no longer held or already over, a snooze past its end.
    private func takeAnswers(at now: Instant, into report: inout Report) async throws {
        for answer in try await journal.pendingAnswers() {
            let outcome: String
            do {
                outcome = try await take(answer, at: now)
            } catch {
                outcome = "not applied: \(error)"
            }
            try await journal.settleAnswer(answer.id, outcome: outcome)
            report.answers.append((answer, outcome))
        }
    }

    /// Finds the occurrence an answer names (through the journal's record of the event it names by id, or by
    /// subject or UID) and hands the answer to the planning loop.
    private func take(_ answer: JournalStore.Answer, at now: Instant) async throws -> String {
        var answered: (id: EventID, type: EventType?)?
        let key: OccurrenceKey?
        if let id = EventID(hex: answer.target) {
            let journaled = try await journal.event(id: id)?.event
            answered = (id, journaled?.type)
            key = journaled?.key
        } else {
            key = occurrences.key(forSubject: answer.target) ?? occurrences.key(forUID: answer.target, at: now)
        }
        guard let key, let occurrence = occurrences.occurrence(for: key) else {
            return "not applied: the calendars hold no occurrence for \(answer.target) now"
        }
        let given: Planner.Answer =
            switch answer.kind {
            case .snooze: .snooze(seconds: answer.seconds ?? 300)
            case .dismiss: .dismiss
            case .ack: .ack
            }
        switch loop.answer(given, target: answer.target, answered: answered, occurrence: occurrence, at: now) {
        case .success: return "applied at \(now)"
        case .failure(let refused): return refused.description
        }
    }

    /// Looks at what a watcher noticed (or everything, on a rescan) and plans the changes at `now`.
    public func filesChanged(_ notices: DirectoryWatcher.Notices, at now: Instant) async throws -> Report {
        var report = Report()
        apply(notices.rescan ? files.rescan() : files.refresh(notices.files), at: now, into: &report)
        return try await commit(at: now, into: report, cause: .change)
    }

    /// Plans everything due by `now`: the wake the caller slept until, or a later instant after a suspend or a
    /// jump of the wall clock. Rolls the window forward when its time has come, and takes the answers given since
    /// the last call.
    public func advance(to now: Instant) async throws -> Report {
        var report = Report()
        if now.secondsSinceEpoch - rolledAt.secondsSinceEpoch >= options.rollEvery || now < rolledAt {
            reexpand(at: now, into: &report)
        }
        try await takeAnswers(at: now, into: &report)
        return try await commit(at: now, into: report, cause: .timer)
    }

    /// Accounts whose sign-in lapsed (`FeedPoller` notices it on each failed poll): each lapse becomes one
    /// `accountSignInNeeded` event, committed at `now` unless one was within `AccountNotice.useful` (the next failed
    /// poll, a restart): a lapse that lasts is told again a day after. Looked up in memory, and in the journal (by
    /// time, through its index) only the first time a lapse is seen: the loop that serves reminders waits on it.
    public func signInNeeded(_ notices: [AccountNotice], at now: Instant) async throws -> Report {
        var report = Report()
        var due: [PlanningLoop.Emitted] = []
        // Told within the last day (a day to the second after one, it is told again).
        let recent = now.adding(seconds: 1 - AccountNotice.useful)
        noticed = noticed.filter { $0.value >= recent }
        for notice in notices {
            let event = notice.event(at: now)
            if noticed[event.id] == nil, let told = try await journal.event(id: event.id, since: recent) {
                noticed[event.id] = told.event.time
            }
            guard noticed[event.id] == nil else { continue }
            noticed[event.id] = now
            due.append(PlanningLoop.Emitted(event: event, occurrence: nil, facts: .event))
            report.events[.accountSignInNeeded, default: 0] += 1
        }
        report.total = due.count
        let recorded = recordedTime()
        try await bus.publish(due, committingTo: journal, recorded: recorded)
        CalwatchMetrics.emitted(due.lazy.map(\.event), at: recorded, cause: .change)
        return report
    }

    /// The zone for floating and all-day values changed: every file's occurrences are expanded again in it.
    public func zoneChanged(to zone: ZoneRules, at now: Instant) async throws -> Report {
        self.zone = zone
        var report = Report()
        reexpand(at: now, into: &report)
        return try await commit(at: now, into: report, cause: .change)
    }

    /// The folders of `passes:`, which the service follows.
    public var passFolderPaths: [String] { passFolders.folders }
    private let passFolders: PassFolders

    /// A pass was added to or removed from `passFolders`: the passes are read again and every occurrence is planned
    /// with them (a flight that gains a pass is detected again, with its seat). Returns the files left out, each
    /// with why.
    public func passesChanged(at now: Instant) async throws -> (Report, problems: [String]) {
        let passes = await passFolders.read()
        classifier.follow(passes: passes)
        var report = Report()
        reexpand(at: now, into: &report)
        return (try await commit(at: now, into: report, cause: .change), passes.problems)
    }

    /// A routing engine's answers came (`RouteCache`): every file's occurrences are planned again with the times to
    /// leave they give (none is parsed again).
    public func travelTimesChanged(at now: Instant) async throws -> Report {
        var report = Report()
        reexpand(at: now, into: &report)
        return try await commit(at: now, into: report, cause: .change)
    }

    /// Waits until every sink has handled what was committed (hooks in flight get their timeout).
    public func finish() async -> [EventBus.SinkReport] {
        await bus.finish()
    }

    private func reexpand(at now: Instant, into report: inout Report) {
        expansion = Self.expansion(configuration.planner, zone: zone, at: now, rollEvery: options.rollEvery)
        rolledAt = now
        var changes = CalendarFiles.Changes()
        changes.changed = files.all
        apply(changes, at: now, into: &report)
        nextSource.read(zone: zone, expansion: expansion)
    }

    private func apply(_ changes: CalendarFiles.Changes, at now: Instant, into report: inout Report) {
        report.parsed += changes.parsed
        report.changed += changes.changed.count
        report.removed += changes.removed.count
        report.problems += changes.problems
        report.unsettled += changes.unsettled
        var stopsMoved = false
        for (_, origin) in changes.removed {
            loop.remove(origin: origin)
            replace(origin, with: [], at: now)
            stopsMoved = classifier.noteStops(of: [], origin: origin) || stopsMoved
        }
        // Each file is expanded and its items classified on its own, on all cores when many changed.
        let expansions = ParallelRuns.map(changes.changed) { [expansion, classifier] run in
            run.map { source, _, calendars in
                var expanded: [Occurrence] = []
                let problems = CalendarScan.expand(calendars, of: source, options: expansion, into: &expanded)
                classifier.prepare(expanded)
                return (expanded, problems)
            }
        }
        // Every changed file's places are noted before any is planned: the way to an event in one can start at an
        // event in another.
        var changed: [(PlanningLoop.Origin, [Occurrence])] = []
        for ((_, origin, _), (expanded, problems)) in zip(changes.changed, expansions.joined()) {
            report.problems += problems
            stopsMoved = classifier.noteStops(of: expanded, origin: origin) || stopsMoved
            changed.append((origin, expanded))
        }
        if changed.count >= ParallelRuns.runLength, occurrences.holdNone(of: changed.lazy.map(\.0)) {
            // Files not held before (all of them at start): filing their occurrences forgets nothing and lets no
            // other file take a key over, so they are filed while they are planned; and the loop holds nothing of
            // them to remove.
            ParallelRuns.both {
                occurrences.reserve(adding: changed.reduce(0) { $0 + $1.1.count })
                for (origin, expanded) in changed { _ = occurrences.replace(origin, with: expanded, at: now) }
            } _: {
                for (origin, expanded) in changed { loop.add(expanded, origin: origin, now: now) }
            }
        } else {
            for (origin, expanded) in changed {
                loop.remove(origin: origin)
                replace(origin, with: expanded, at: now)
                loop.add(expanded, origin: origin, now: now)
            }
        }
        if stopsMoved {
            // Where the day's ways start moved: the other files' occurrences are planned again from what is held.
            let done = Set(changed.map(\.0))
            for (origin, held) in occurrences.all where !done.contains(origin) {
                loop.remove(origin: origin)
                loop.add(held, origin: origin, now: now)
            }
        }
        if !changes.isEmpty { loop.endRemovedActivities(at: now) }
    }

    /// Hands one file's occurrences to `occurrences`, and admits again those of other files that now stand alone
    /// for a key this file gave up.
    private func replace(_ origin: PlanningLoop.Origin, with expanded: [Occurrence], at now: Instant) {
        let takenOver = occurrences.replace(origin, with: expanded, at: now)
        for (other, occurrences) in takenOver { loop.add(occurrences, origin: other, now: now) }
    }

    private func commit(at now: Instant, into report: Report, cause: CalwatchMetrics.Cause) async throws -> Report {
        var report = report
        let step = loop.step(at: now)
        // The `removed` end of a deleted occurrence is planned without it: it gets the occurrence as last read.
        let due = step.events.map(occurrences.lastKnown)
        for item in due { report.events[item.event.type, default: 0] += 1 }
        report.total += due.count
        let recorded = recordedTime()
        try await bus.publish(due, committingTo: journal, recorded: recorded)
        CalwatchMetrics.emitted(due.lazy.map(\.event), at: recorded, cause: cause)
        if let cutOff = step.pruneBefore { try await journal.prune(expiredBefore: cutOff, sinks: sinkNames) }
        churn += report.changed + report.removed
        return report
    }

    /// Occurrences whose events can be due before the next roll.
    private static func expansion(
        _ planner: PlannerConfiguration, zone: ZoneRules, at now: Instant, rollEvery: Int64
    ) -> ExpansionOptions {
        PlanningLoop.expansion(
            for: InstantWindow(start: now, end: now.adding(seconds: max(rollEvery, 1))), zone: zone,
            configuration: planner)
    }
}
