public import CalWatchCore
import Foundation
public import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program for each event (docs/design.md §6): argv from the configuration and never a shell, the event's JSON on
/// standard input, its fields in the environment and in `{field}` arguments.
///
/// Calendar text reaches the program only as data: whole arguments, environment values and standard input,
/// never a command line, so `$(…)`, backticks, `;` or a leading `-` in a summary stay text. A run that outlasts its
/// timeout is stopped with its process group. Exit 0 is done; any status other than 75 is a failure, logged with
/// the end of the program's standard error, and not retried.
///
/// Exit 75 (EX_TEMPFAIL), or a program that cannot start, asks for a retry: the event is recorded in the journal
/// and tried again after a growing delay, until it expires, while the hook's later events go on meanwhile. So a
/// hook sees events in journal order, except that an event it asked to retry comes again after later ones, and
/// that reminders and live activities overtake the day's events (conflicts, overruns, agendas, invitations): those
/// are kept in the journal as retries are and run beside later batches, so a slow hook with a crowded day never
/// holds a reminder back; a reminder also takes the next free run before them. A retry still waiting when the bus
/// stops the sink is kept in the journal and tried first at the next start. Up to `concurrency` runs go at once,
/// first runs and retries together.
public actor HookSink: EventSink {
    /// How runs that ask for a retry (exit 75), or that cannot start, are retried.
    public struct RetryPolicy: Sendable {
        public var firstDelay: Duration = .seconds(1)
        public var maxDelay: Duration = .seconds(60)
        /// Attempts made even when the event has already expired (a replay delivers events long past).
        public var minimumAttempts = 3

        public init() {}
    }

    /// What the sink's runs did, for the summary.
    public struct Counts: Sendable, Equatable {
        public var succeeded = 0
        public var failed = 0
        public var retried = 0
        public var timedOut = 0
        /// Events the filters left out.
        public var skipped = 0
    }

    /// An event to run again once `delay` has passed; `held`: kept in the journal (a day's event set aside).
    private struct Retry: Sendable {
        var entry: JournalStore.Entry
        var attempt: Int
        var delay: Duration
        var held = false
    }

    public nonisolated let name: String
    private let settings: HookSettings
    private let retry: RetryPolicy
    private let clock: any Clock<Duration>
    private let now: @Sendable () -> Instant
    private let logger: Logger
    /// calwatch's own environment, which a hook gets with the event's fields added.
    private let inherited: [String]
    private let permits: Permits
    private let retries: AsyncStream<Retry>
    private let retryInput: AsyncStream<Retry>.Continuation
    /// What the bus lent `run`: the journal that keeps retries waiting, and the stop.
    private let context = Outcome<SinkContext>()
    public private(set) var counts = Counts()
    /// Runs finished and not yet recorded in the journal (it comes with `run`, which may start after the first
    /// deliveries).
    private var finishedRuns: [(sequence: Int64, attempt: Int, outcome: HookOutcome, finished: Instant)] = []

    /// A hook sink. Timeouts and retry delays are measured on `clock`; `now` is the wall clock (for expiry);
    /// failed runs are logged with `hook.exit_code`, `event.id` and `sink.name`.
    public init(
        settings: HookSettings, name: String? = nil, retry: RetryPolicy = RetryPolicy(),
        clock: any Clock<Duration> = ContinuousClock(), now: @escaping @Sendable () -> Instant, logger: Logger
    ) {
        self.settings = settings
        self.name = name ?? "hook:" + settings.run.joined(separator: " ")
        self.retry = retry
        self.clock = clock
        self.now = now
        self.logger = logger
        permits = Permits(settings.concurrency)
        (retries, retryInput) = AsyncStream.makeStream(of: Retry.self)
        // Variables the sink sets itself are dropped from the inherited ones, so an event never carries stale values;
        // CALWATCH_STATE (the daemon's journal, for `calwatch snooze` in a hook) is the daemon's own.
        inherited = ProcessInfo.processInfo.environment
            .filter { !$0.key.hasPrefix("CE_") && (!$0.key.hasPrefix("CALWATCH_") || $0.key == "CALWATCH_STATE") }
            .map { $0.key + "=" + $0.value }
        signal(SIGPIPE, SIG_IGN)  // a hook that does not read its input must not kill calwatch
    }

    /// Runs the hook for every event of the batch the filters accept, at most `concurrency` at a time, and returns
    /// when each has run once: those that asked for a retry wait in `run`, not here.
    public func deliver(_ batch: [JournalStore.Entry]) async {
        let wanted = batch.filter { settings.accepts($0) }
        counts.skipped += batch.count - wanted.count
        // The day's events go aside (kept in the journal) once `run` has the journal; reminders run now, first.
        var urgent: [JournalStore.Entry] = []
        var aside: [JournalStore.Entry] = []
        for entry in wanted {
            if Self.canWait(entry.event.type) { aside.append(entry) } else { urgent.append(entry) }
        }
        if let context = context.value, !aside.isEmpty {
            do {
                try await context.journal.holdRetries(aside.map(\.sequence), for: name)
                for entry in aside { retryInput.yield(Retry(entry: entry, attempt: 1, delay: .zero, held: true)) }
                aside = []
            } catch {
                logger.error(
                    "\(name): cannot set the day's events aside in the journal (\(error)); running them in turn",
                    metadata: ["sink.name": "\(name)"])
            }
        }
        await withDiscardingTaskGroup { group in
            for entry in urgent + aside {
                await permits.acquire(urgent: !Self.canWait(entry.event.type))
                group.addTask {
                    await self.attempt(entry, number: 1, delay: self.retry.firstDelay)
                    self.permits.release()
                }
            }
        }
    }

    /// Whether the day's events are set aside in the journal (once `run` has lent it), rather than run in turn.
    var setsDayEventsAside: Bool { context.value != nil }

    /// The day's events, which lose nothing by coming after a reminder due now.
    static func canWait(_ type: EventType) -> Bool {
        switch type {
        case .conflictDetected, .overrunDetected, .agendaDue, .invitationPending: true
        default: false
        }
    }

    /// Runs the retries: first those an earlier run left in the journal, then each as its delay passes, until the
    /// bus stops the sink. A retry whose delay has not passed by then stays in the journal for the next start.
    public func run(_ context: SinkContext) async {
        self.context.set(context)
        await recordRuns()
        do {
            for journaled in try await context.journal.heldRetries(for: name) {
                retryInput.yield(Retry(entry: context.entry(journaled), attempt: 2, delay: .zero))
            }
        } catch {
            logger.error(
                "\(name): cannot read the retries left from the last run: \(error)", metadata: ["sink.name": "\(name)"])
        }
        await withDiscardingTaskGroup { group in
            group.addTask { [retryInput] in
                await context.stopped()
                retryInput.finish()
            }
            for await waiting in retries {
                group.addTask { await self.retryWhenDue(waiting, stop: context) }
            }
        }
        await recordRuns()
    }

    private func retryWhenDue(_ waiting: Retry, stop context: SinkContext) async {
        // The delay, cut short by a stop.
        let due = await withTaskGroup(of: Bool.self) { race in
            race.addTask { [clock] in (try? await clock.sleep(for: waiting.delay)) != nil }
            race.addTask {
                await context.stopped()
                return false
            }
            let due = await race.next() ?? false
            race.cancelAll()
            return due
        }
        guard due, !context.isStopped else { return }
        // A retry left from the last run comes at once, then waits the first delay again if it must.
        let next = Backoff(first: retry.firstDelay, most: retry.maxDelay).delay(after: waiting.delay)
        await permits.withPermit {
            await attempt(waiting.entry, number: waiting.attempt, delay: next, held: waiting.held)
        }
    }

    /// Runs the hook once for an event and settles what follows: done, failed, or a retry scheduled after `delay`.
    /// `held`: the event is already kept in the journal (set aside), and let go of once settled.
    private func attempt(_ entry: JournalStore.Entry, number: Int, delay: Duration, held: Bool = false) async {
        let fields = HookFields(entry)
        let process = HookProcess(
            arguments: settings.run.map { fields.substitute($0) },
            environment: inherited + fields.environment,
            input: Array((entry.json + "\n").utf8),
            timeout: settings.timeout)
        let started = ContinuousClock.now
        let result = await process.run(clock: clock)
        CalwatchMetrics.hookRan(sink: name, outcome: result.outcome, took: started.duration(to: .now))
        finishedRuns.append((entry.sequence, number, result.outcome, now()))
        await recordRuns()
        var metadata: Logger.Metadata = [
            "sink.name": "\(name)", "event.id": "\(entry.event.id)", "event.type": "\(entry.event.type.rawValue)",
        ]
        if !result.standardErrorTail.isEmpty { metadata["hook.stderr"] = "\(result.standardErrorTail)" }
        let detail = result.standardErrorTail.isEmpty ? "" : "; it said: " + result.standardErrorTail
        let what = "\(name): \(entry.event.type.rawValue) \(entry.event.id)"
        let reason: String
        switch result.outcome {
        case .exited(0):
            counts.succeeded += 1
            return await settled(entry, number: number, held: held)
        case .exited(HookOutcome.retryStatus):
            metadata["hook.exit_code"] = "\(HookOutcome.retryStatus)"
            reason = "asked to be retried (exit \(HookOutcome.retryStatus))"
        case .notStarted(let problem):
            reason = "could not start \(settings.run[0]): \(problem)"
        case .exited(let status):
            counts.failed += 1
            metadata["hook.exit_code"] = "\(status)"
            logger.warning("\(what) failed with exit status \(status)\(detail)", metadata: metadata)
            return await settled(entry, number: number, held: held)
        case .signaled(let signal):
            counts.failed += 1
            metadata["hook.signal"] = "\(signal)"
            logger.warning("\(what) was killed by signal \(signal)\(detail)", metadata: metadata)
            return await settled(entry, number: number, held: held)
        case .timedOut:
            counts.failed += 1
            counts.timedOut += 1
            logger.warning(
                "\(what) took longer than its timeout of \(settings.timeout); stopped it and its children\(detail)",
                metadata: metadata)
            return await settled(entry, number: number, held: held)
        }
        let seconds = delay.components.seconds
        guard now().adding(seconds: seconds) < entry.event.expiry || number < retry.minimumAttempts else {
            counts.failed += 1
            logger.warning(
                "\(what) \(reason) after \(number) attempts; giving up as the event has expired\(detail)",
                metadata: metadata)
            return await settled(entry, number: number, held: held)
        }
        if number == 1 && !held {
            logger.warning("\(what) \(reason); retrying\(detail)", metadata: metadata)
            await journal { try await $0.holdRetry(entry.sequence, for: name) }
        }
        counts.retried += 1
        retryInput.yield(Retry(entry: entry, attempt: number + 1, delay: delay, held: true))
    }

    /// Records in the journal how the finished runs ended, for `calwatch why`, once the journal is known.
    private func recordRuns() async {
        guard !finishedRuns.isEmpty, context.value != nil else { return }
        let runs = finishedRuns
        finishedRuns = []
        await journal { journal in
            for run in runs {
                try await journal.recordHookRun(
                    run.sequence, sink: name, attempt: run.attempt, outcome: run.outcome, at: run.finished)
            }
        }
    }

    /// An event is done with: a retry waiting for it, or the event set aside, is no longer kept.
    private func settled(_ entry: JournalStore.Entry, number: Int, held: Bool = false) async {
        guard number > 1 || held else { return }
        await journal { try await $0.releaseRetry(entry.sequence, for: name) }
    }

    /// A change to the retries kept in the journal; a failure is logged (a retry lost only on a crash).
    private func journal(_ change: (JournalStore) async throws -> Void) async {
        guard let context = await context.wait() else { return }
        do {
            try await change(context.journal)
        } catch {
            logger.error("\(name): cannot record a retry in the journal: \(error)", metadata: ["sink.name": "\(name)"])
        }
    }
}

extension EventFilters {
    /// Whether the filters let an event through. An offset filter applies to reminders only; an account's notice
    /// passes `kinds`, and `calendars` when one of them is the account's.
    public func accepts(_ entry: JournalStore.Entry) -> Bool { rejection(entry) == nil }

    /// Which filter leaves an event out, in words (`calwatch why` prints it); `nil` when the sink takes it.
    public func rejection(_ entry: JournalStore.Entry) -> String? {
        func list(_ values: some Sequence<String>) -> String { values.sorted().joined(separator: ", ") }
        if let events, !events.contains(entry.event.type) {
            return "its on: takes \(list(events.map(\.rawValue))), not \(entry.event.type.rawValue)"
        }
        // An account's notice is about no occurrence, so it has no kind; it is about the account's calendars.
        if let notice = entry.event.account {
            if let calendars,
                !calendars.contains(where: { $0.lowercased().hasPrefix(notice.account.lowercased() + "/") })
            {
                return "its calendars: takes \(list(calendars)), none of them account \(notice.account)'s"
            }
            return nil
        }
        if let kinds, !kinds.contains(entry.facts.kind) {
            return "its kinds: takes \(list(kinds.map(\.rawValue))), and this is a \(entry.facts.kind.rawValue)"
        }
        if let calendars, !calendars.namesCalendar(entry.event.key.calendar) {
            return "its calendars: takes \(list(calendars)), and this is in \(entry.event.key.calendar)"
        }
        if let offsets, let reminder = entry.event.reminder, !offsets.contains(reminder.secondsBefore) {
            return "its offsets: take \(list(offsets.map { DurationText.text($0) })), and this reminder is "
                + DurationText.text(reminder.secondsBefore) + " before"
        }
        return nil
    }
}

/// An event's fields as a hook sees them: `{name}` arguments and `CE_*` / `CALWATCH_*` environment variables.
/// All of it is calendar text, untrusted: a hook must treat it as data.
struct HookFields {
    /// Placeholder, environment variable, and how to get the value.
    static let table: [(placeholder: String, variable: String, value: @Sendable (JournalStore.Entry) -> String?)] = [
        ("id", "CE_ID", { $0.event.id.description }),
        ("type", "CE_TYPE", { $0.event.type.cloudEventType }),
        ("time", "CE_TIME", { $0.event.time.description }),
        ("subject", "CE_SUBJECT", { $0.event.subject }),
        ("source", "CE_SOURCE", { "calwatch:" + $0.event.key.calendar }),
        ("event", "CALWATCH_EVENT", { $0.event.type.rawValue }),
        ("summary", "CALWATCH_SUMMARY", { $0.occurrence?.summary }),
        ("location", "CALWATCH_LOCATION", { $0.occurrence?.location }),
        ("calendar", "CALWATCH_CALENDAR", { $0.event.key.calendar }),
        ("uid", "CALWATCH_UID", { $0.event.key.uid }),
        ("kind", "CALWATCH_KIND", { $0.facts.kind.rawValue }),
        ("start", "CALWATCH_START", { $0.event.occurrenceStart.description }),
        ("end", "CALWATCH_END", { $0.event.occurrenceEnd.description }),
        ("startLocal", "CALWATCH_START_LOCAL", { $0.occurrence?.startLocal.description }),
        ("minutesBefore", "CALWATCH_MINUTES_BEFORE", { $0.event.reminder.map { String($0.secondsBefore / 60) } }),
        ("joinURL", "CALWATCH_JOIN_URL", { $0.facts.joinURL }),
        ("service", "CALWATCH_SERVICE", { $0.facts.meeting?.service }),
        ("meetingId", "CALWATCH_MEETING_ID", { $0.facts.meeting?.meetingID }),
        ("passcode", "CALWATCH_PASSCODE", { $0.facts.meeting?.passcode }),
        ("dialIn", "CALWATCH_DIAL_IN", { $0.facts.meeting?.dialIn }),
        ("flight", "CALWATCH_FLIGHT", { $0.facts.flightCode }),
        ("origin", "CALWATCH_ORIGIN", { $0.facts.flight?.origin?.code }),
        ("destination", "CALWATCH_DESTINATION", { $0.facts.flight?.destination?.code }),
        ("leaveBy", "CALWATCH_LEAVE_BY", { $0.facts.leaveBy?.description }),
        ("travelMinutes", "CALWATCH_TRAVEL_MINUTES", { $0.facts.leave.map { String($0.travelSeconds / 60) } }),
        ("place", "CALWATCH_PLACE", { $0.facts.leave?.destination?.name }),
        ("directions", "CALWATCH_DIRECTIONS", { $0.facts.leave?.destination?.at.map(LeaveJSON.directions(to:)) }),
        ("travelMode", "CALWATCH_TRAVEL_MODE", { $0.facts.leave?.mode?.rawValue }),
        ("leaveFrom", "CALWATCH_LEAVE_FROM", { $0.facts.leave?.origin?.name }),
        ("prepareBy", "CALWATCH_PREPARE_BY", { $0.facts.leave?.prepareBy?.description }),
        ("leaveEstimated", "CALWATCH_LEAVE_ESTIMATED", { $0.facts.leave.map { $0.estimated ? "1" : "0" } }),
        // A conflict's other occurrence; for an overrun, the one that has started.
        ("otherSummary", "CALWATCH_OTHER_SUMMARY", { $0.event.other?.summary }),
        ("otherStart", "CALWATCH_OTHER_START", { $0.event.other?.start.description }),
        ("otherJoinURL", "CALWATCH_OTHER_JOIN_URL", { $0.event.other?.joinUrl }),
    ]

    /// Longest value passed, in bytes: Linux refuses a single argument or variable over 128 KiB.
    static let valueLimit = 65_536

    private var values: [String: String] = [:]
    private(set) var environment: [String] = []

    init(_ entry: JournalStore.Entry) {
        for (placeholder, variable, value) in Self.table {
            let text = Self.clean(value(entry) ?? "")
            values[placeholder] = text
            environment.append(variable + "=" + text)
        }
    }

    /// An argument that is exactly `{name}` becomes the field's value; any other argument stays as written.
    func substitute(_ argument: String) -> String {
        guard argument.hasPrefix("{"), argument.hasSuffix("}"), argument.count > 2 else { return argument }
        return values[String(argument.dropFirst().dropLast())] ?? argument
    }

    /// Without NUL (which would cut a C string short), on one line (a line break would let calendar text forge a
    /// line for a hook that reads `env` or its arguments line by line: each becomes a space), and at most
    /// `valueLimit` bytes, cut at a character boundary.
    static func clean(_ text: String) -> String {
        var text = text.contains("\0") ? text.replacingOccurrences(of: "\0", with: "") : text
        if text.unicodeScalars.contains(where: Self.breaksLine) {
            var scalars = String.UnicodeScalarView()
            for scalar in text.unicodeScalars { scalars.append(Self.breaksLine(scalar) ? " " : scalar) }
            text = String(scalars)
        }
        guard text.utf8.count > valueLimit else { return text }
        let bytes = Array(text.utf8.prefix(valueLimit + 1))
        // Cut where a character starts (a byte that is not 10xxxxxx), at or before the limit.
        var cut = valueLimit
        while cut > 0 && bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
        return String(decoding: bytes[..<cut], as: UTF8.self)
    }

    /// LF, VT, FF, CR, NEL and the Unicode line and paragraph separators.
    private static func breaksLine(_ scalar: Unicode.Scalar) -> Bool {
        (0x0A...0x0D).contains(scalar.value) || scalar.value == 0x85 || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
