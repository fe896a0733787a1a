public import CalWatchCore
import Metrics

/// What calwatch measures for operators, through swift-metrics: recorded where it happens, kept only when a command
/// bootstrapped a backend (`metrics:` in config.yml, `PrometheusTextfile`); otherwise swift-metrics' no-op backend
/// drops it. Every metric's name and help text are here, in one table, so the export is documented.
public enum CalwatchMetrics {
    /// Each metric: its Prometheus name and help text.
    public static let help: [String: String] = [
        eventsEmitted: "Events committed to the journal, by type.",
        sinkDelivered: "Events a sink handled, by sink.",
        sinkFailures: "Failed deliveries to a sink (each is retried), by sink.",
        sinkBacklog: "Committed events a sink has not handled yet, by sink.",
        hookRuns: "Hook program runs, by sink and outcome (success, failure, retry, timeout, signal, not_started).",
        hookDuration: "How long hook program runs took, by sink.",
        filesParsed: "Calendar files read.",
        parseErrors: "Errors found while reading calendar files (a file that stays broken counts once).",
        journalRows: "Rows in the journal (events kept until every sink has them and they expired).",
        lastPlan: "When calwatch last planned, as seconds since 1970 (watch: the wall clock; replay: its end).",
        lateness: "How long after its time an event was committed by the watch daemon, by what woke it (timer: its "
            + "own wake, so this is delay; start and change: catch-up after a start or for an item read late).",
        fleetCalendars: "Calendars this watcher of a fleet holds (watch --fleet).",
        fleetHandovers: "Calendars this watcher of a fleet took or gave up, by how (claimed, released, lost).",
        fleetHeartbeatFailures: "Heartbeats to the fleet's database that failed (its calendars are kept meanwhile).",
        nextRequests: "calwatch next runs the daemon was asked by, by answer (line, or refused: next read the "
            + "calendars itself).",
        serverRefused: "Requests the local server refused, by reason (token: none or a wrong one; signature: an "
            + "answer button's; malformed: a query or body it cannot read; origin: a post from another page).",
        serverStreams: "Clients of the local server's event stream (GET /v1/events) connected now.",
        accountSynced: "When an account's calendars were last read in full from its service, as seconds since 1970, "
            + "by account.",
        accountSignInNeeded: "1 while an account's sign-in has lapsed or was revoked (calwatch account add), by "
            + "account.",
    ]

    static let eventsEmitted = "calwatch_events_emitted_total"
    static let sinkDelivered = "calwatch_sink_delivered_events_total"
    static let sinkFailures = "calwatch_sink_failures_total"
    static let sinkBacklog = "calwatch_sink_backlog_events"
    static let hookRuns = "calwatch_hook_runs_total"
    static let hookDuration = "calwatch_hook_run_duration_seconds"
    static let filesParsed = "calwatch_calendar_files_parsed_total"
    static let parseErrors = "calwatch_calendar_parse_errors_total"
    static let journalRows = "calwatch_journal_rows"
    static let lastPlan = "calwatch_last_plan_timestamp_seconds"
    static let lateness = "calwatch_emit_lateness_seconds"
    static let fleetCalendars = "calwatch_fleet_calendars"
    static let fleetHandovers = "calwatch_fleet_handovers_total"
    static let fleetHeartbeatFailures = "calwatch_fleet_heartbeat_failures_total"
    static let nextRequests = "calwatch_next_requests_total"
    static let serverRefused = "calwatch_server_refused_total"
    static let serverStreams = "calwatch_server_event_streams"
    static let accountSynced = "calwatch_account_last_sync_timestamp_seconds"
    static let accountSignInNeeded = "calwatch_account_sign_in_needed"

    /// An account's poll read every calendar (`accounts:`).
    public static func account(_ name: String, syncedAt seconds: Double) {
        Gauge(label: accountSynced, dimensions: [("account", name)]).record(seconds)
    }

    /// Whether an account's last poll failed for want of a sign-in.
    public static func account(_ name: String, signInNeeded: Bool) {
        Gauge(label: accountSignInNeeded, dimensions: [("account", name)]).record(signInNeeded ? 1 : 0)
    }

    /// A `calwatch next` asked the daemon (`GET /v1/next`): answered with its line, or refused.
    public static func nextAsked(answered: Bool) {
        Counter(label: nextRequests, dimensions: [("answer", answered ? "line" : "refused")]).increment()
    }

    /// A request the local server refused, by reason.
    public static func serverRefused(_ reason: String) {
        Counter(label: serverRefused, dimensions: [("reason", reason)]).increment()
    }

    /// Event-stream clients connected now.
    public static func serverStreams(_ count: Int) { Gauge(label: serverStreams).record(count) }

    /// A fleet's heartbeat: what the watcher holds, and what changed hands.
    public static func fleet(holding: Int, claimed: Int, released: Int, lost: Int) {
        Gauge(label: fleetCalendars).record(holding)
        for (how, count) in [("claimed", claimed), ("released", released), ("lost", lost)] where count > 0 {
            Counter(label: fleetHandovers, dimensions: [("how", how)]).increment(by: count)
        }
    }

    /// A heartbeat that did not reach the fleet's database.
    public static func fleetHeartbeatFailed() {
        Counter(label: fleetHeartbeatFailures).increment()
    }

    static func committed(_ events: [(sequence: Int64, event: PlannedEvent)]) {
        var counts: [EventType: Int] = [:]
        EventType.tally(events, type: \.event.type, into: &counts)
        for (type, count) in counts {
            Counter(label: eventsEmitted, dimensions: [("type", type.rawValue)]).increment(by: count)
        }
    }

    static func delivered(_ count: Int, sink: String, backlog: Int64) {
        Counter(label: sinkDelivered, dimensions: [("sink", sink)]).increment(by: count)
        Gauge(label: sinkBacklog, dimensions: [("sink", sink)]).record(backlog)
    }

    static func failed(sink: String, backlog: Int64) {
        Counter(label: sinkFailures, dimensions: [("sink", sink)]).increment()
        Gauge(label: sinkBacklog, dimensions: [("sink", sink)]).record(backlog)
    }

    static func hookRan(sink: String, outcome: HookOutcome, took duration: Duration) {
        let name =
            switch outcome {
            case .exited(0): "success"
            case .exited(HookOutcome.retryStatus): "retry"
            case .exited: "failure"
            case .signaled: "signal"
            case .timedOut: "timeout"
            case .notStarted: "not_started"
            }
        Counter(label: hookRuns, dimensions: [("sink", sink), ("outcome", name)]).increment()
        Timer(label: hookDuration, dimensions: [("sink", sink)]).record(duration: duration)
    }

    /// Files read and errors found, from a scan or a watch's report.
    public static func read(files: Int, problems: [CalendarProblem]) {
        Counter(label: filesParsed).increment(by: files)
        let errors = problems.filter { $0.severity == .error }.count
        Counter(label: parseErrors).increment(by: errors)
    }

    static func journal(rows: Int64) {
        Gauge(label: journalRows).record(rows)
    }

    public static func planned(at instant: Timestamp) {
        Gauge(label: lastPlan).record(Double(instant.millisecondsSinceEpoch) / 1000)
    }

    /// What made the daemon commit events: an alert on lateness wants `timer` alone, since the others are late by
    /// design (after a restart, everything missed comes at once).
    enum Cause: String {
        /// The wake the daemon slept until.
        case timer
        /// Catch-up at start.
        case start
        /// An item read or changed (or the zone changed) when its events were already due.
        case change
    }

    /// The daemon committed events due at their `time`s at `now`.
    static func emitted(_ events: some Sequence<PlannedEvent>, at now: Timestamp, cause: Cause) {
        let timer = Timer(label: lateness, dimensions: [("cause", cause.rawValue)])
        for event in events {
            let late = now.millisecondsSinceEpoch - event.time.secondsSinceEpoch * 1000
            timer.record(duration: .milliseconds(max(0, late)))
        }
    }
}
