import Foundation
public import CalWatchCore

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program for each event (DESIGN §6): argv from the configuration and never a shell, the event's JSON on
/// standard input, its fields in the environment and in `{field}` arguments.
///
/// Calendar text reaches the program only as data: whole arguments, environment values and standard input,
/// never a command line, so `$(…)`, backticks, `;` or a leading `-` in a summary stay text. A run that outlasts its
/// timeout is stopped with its process group. Exit 0 is done; 75 (EX_TEMPFAIL) asks for a retry, with a growing
/// delay, until the event expires; any other status is a failure, logged with the end of the program's standard
/// error, and not retried. Up to `concurrency` runs go at once, so with more than one, runs can finish out of
/// order; a batch is done when all its runs are.
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

        mutating func add(_ other: Counts) {
            succeeded += other.succeeded
            failed += other.failed
            retried += other.retried
            timedOut += other.timedOut
            skipped += other.skipped
        }
    }

    public nonisolated let name: String
    private let settings: HookSettings
    private let retry: RetryPolicy
    private let now: @Sendable () -> Instant
    private let log: @Sendable (String) -> Void
    /// calwatch's own environment, which a hook gets with the event's fields added.
    private let inherited: [String]
    public private(set) var counts = Counts()

    /// A hook sink. `now` is the real clock (for expiry); `log` hears about failed runs, worded for the user.
    public init(
        settings: HookSettings, name: String? = nil, retry: RetryPolicy = RetryPolicy(),
        now: @escaping @Sendable () -> Instant, log: @escaping @Sendable (String) -> Void
    ) {
        self.settings = settings
        self.name = name ?? "hook:" + settings.run.joined(separator: " ")
        self.retry = retry
        self.now = now
        self.log = log
        // Variables the sink sets itself are dropped from the inherited ones, so an event never carries stale values.
        inherited = ProcessInfo.processInfo.environment
            .filter { !$0.key.hasPrefix("CE_") && !$0.key.hasPrefix("CALWATCH_") }
            .map { $0.key + "=" + $0.value }
        signal(SIGPIPE, SIG_IGN)  // a hook that does not read its input must not kill calwatch
    }

    /// Runs the hook for every event of the batch the filters accept, at most `concurrency` at a time.
    public func deliver(_ batch: [JournalStore.Entry]) async {
        let wanted = batch.filter { settings.accepts($0) }
        counts.skipped += batch.count - wanted.count
        let runs = await withTaskGroup(of: Counts.self, returning: Counts.self) { group in
            var running = 0
            var total = Counts()
            for entry in wanted {
                if running == settings.concurrency, let done = await group.next() {
                    total.add(done)
                    running -= 1
                }
                group.addTask { await self.settle(entry) }
                running += 1
            }
            for await done in group { total.add(done) }
            return total
        }
        counts.add(runs)
    }

    /// Runs the hook for one event until it succeeds, fails, or stops asking for a retry.
    private nonisolated func settle(_ entry: JournalStore.Entry) async -> Counts {
        var counts = Counts()
        let fields = HookFields(entry)
        let process = HookProcess(
            arguments: settings.run.map { fields.substitute($0) },
            environment: inherited + fields.environment,
            input: Array((entry.json + "\n").utf8),
            timeout: settings.timeout)
        let what = "\(name): \(entry.event.type.rawValue) \(entry.event.id)"
        var delay = retry.firstDelay
        var attempt = 1
        while true {
            let result = await process.run()
            let detail = result.standardErrorTail.isEmpty ? "" : "; it said: " + result.standardErrorTail
            var reason: String
            switch result.outcome {
            case .exited(0):
                counts.succeeded += 1
                return counts
            case .exited(75):
                reason = "asked to be retried (exit 75)"
            case .notStarted(let problem):
                reason = "could not start \(settings.run[0]): \(problem)"
            case .exited(let status):
                counts.failed += 1
                log("\(what) failed with exit status \(status)\(detail)")
                return counts
            case .signaled(let signal):
                counts.failed += 1
                log("\(what) was killed by signal \(signal)\(detail)")
                return counts
            case .timedOut:
                counts.failed += 1
                counts.timedOut += 1
                log("\(what) took longer than its timeout of \(settings.timeout); stopped it and its children\(detail)")
                return counts
            }
            let seconds = Int64(delay.components.seconds)
            guard now().adding(seconds: seconds) < entry.event.expiry || attempt < retry.minimumAttempts else {
                counts.failed += 1
                log("\(what) \(reason) after \(attempt) attempts; giving up as the event has expired\(detail)")
                return counts
            }
            if attempt == 1 { log("\(what) \(reason); retrying\(detail)") }
            counts.retried += 1
            attempt += 1
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, retry.maxDelay)
        }
    }
}

extension HookSettings {
    /// Whether the filters let an event through. An offset filter applies to reminders only.
    func accepts(_ entry: JournalStore.Entry) -> Bool {
        if let events, !events.contains(entry.event.type) { return false }
        if let kinds, !kinds.contains(entry.facts.kind) { return false }
        if let calendars, !calendars.contains(entry.event.key.calendar) { return false }
        if let offsets, let reminder = entry.event.reminder, !offsets.contains(reminder.secondsBefore) { return false }
        return true
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

    /// Without NUL (which would cut a C string short) and at most `valueLimit` bytes, cut at a character boundary.
    private static func clean(_ text: String) -> String {
        let text = text.contains("\0") ? text.replacingOccurrences(of: "\0", with: "") : text
        guard text.utf8.count > valueLimit else { return text }
        let bytes = Array(text.utf8.prefix(valueLimit + 1))
        // Cut where a character starts (a byte that is not 10xxxxxx), at or before the limit.
        var cut = valueLimit
        while cut > 0 && bytes[cut] & 0xC0 == 0x80 { cut -= 1 }
        return String(decoding: bytes[..<cut], as: UTF8.self)
    }
}
