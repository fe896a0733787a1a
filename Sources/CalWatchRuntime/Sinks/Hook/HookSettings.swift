public import CalWatchCore
import Foundation

/// A shell hook (docs/design.md §6): which events it wants and how it is run.
public struct HookSettings: SinkDriver, EventFilters {
    public static let type = "hook"
    public static let keys = ["run", "on", "kinds", "offsets", "calendars", "timeout", "concurrency"]
    /// The program and its arguments; `{field}` arguments are replaced whole by the event's fields.
    public var run: [String]
    /// Event types to run for; `nil` means all.
    public var events: Set<EventType>?
    /// Kinds of occurrence to run for; `nil` means all.
    public var kinds: Set<OccurrenceFacts.Kind>?
    /// Reminder offsets (seconds) to run for; other events pass. `nil` means all.
    public var offsets: Set<Int64>?
    /// Calendars (their display names) to run for; `nil` means all.
    public var calendars: Set<String>?
    /// How long one run may take before its process group is stopped.
    public var timeout: Duration = .seconds(10)
    /// Runs at the same time, at most.
    public var concurrency = 4

    public init(run: [String]) {
        self.run = run
    }

    /// The `{field}` names a `run` argument can be, in the order docs/sinks/hooks.md lists them; the runtime's hook sink
    /// gives each its value.
    public static let placeholders = [
        "id", "type", "time", "subject", "source", "event", "summary", "location", "calendar", "uid", "kind", "start",
        "end", "startLocal", "minutesBefore", "joinURL", "service", "meetingId", "passcode", "dialIn", "flight",
        "origin", "destination", "leaveBy", "travelMinutes", "place", "directions", "travelMode", "leaveFrom",
        "prepareBy", "leaveEstimated", "otherSummary", "otherStart", "otherJoinURL",
    ]
}

extension HookSettings {
    /// The longest a run may be given (`timeout:`) and the most runs at once (`concurrency:`).
    static let longestTimeout: Int64 = 86_400
    static let mostConcurrent = 64

    public init?(_ entry: ConfigurationSection) {
        guard let value = entry["run"] else {
            entry.note(
                "has no `run:`; write the program and its arguments as a list, such as [notify.sh, \"{summary}\"]")
            return nil
        }
        guard let argv = value.argv(example: "[notify-send, \"{summary}\"]", empty: "name the program to run") else {
            return nil
        }
        for (index, argument) in argv.enumerated()
        where argument.hasPrefix("{") && argument.hasSuffix("}")
            && !Self.placeholders.contains(String(argument.dropFirst().dropLast()))
        {
            value.list().dropFirst(index).first?.note(
                "'\(argument)' is not a field; the fields are "
                    + Self.placeholders.map { "{\($0)}" }.joined(separator: ", "))
        }
        self.init(run: argv)
        entry.filters(into: &self)
        if let seconds = entry["timeout"]?.duration(positive: true, atMost: Self.longestTimeout) {
            timeout = .seconds(seconds)
        }
        if let limit = entry["concurrency"]?.integer(in: 1...Self.mostConcurrent) { concurrency = limit }
    }

    public var defaultName: String { "hook:" + run.joined(separator: " ") }

    public func open(named name: String, in environment: SinkEnvironment) throws -> any EventSink {
        HookSink(settings: self, name: name, clock: environment.clock, now: environment.now, logger: environment.logger)
    }

    /// The program must be there and executable: in the configuration's folder for a relative path, else in PATH.
    public func check(named name: String, in environment: SinkEnvironment) async -> [SinkFinding] {
        let program = run[0]
        let manager = FileManager.default
        let candidates =
            program.contains("/")
            ? [program]
            : (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
                .map { "\($0)/\(program)" }
        guard !candidates.contains(where: { manager.isExecutableFile(atPath: $0) }) else { return [] }
        if let found = candidates.first(where: { manager.fileExists(atPath: $0) }) {
            return [.error("\(found) is not executable (chmod +x \(found))")]
        }
        return [
            .error(
                "\(program) is not found"
                    + (program.contains("/")
                        ? "; a relative path is read from the configuration's folder: put the program there, or "
                            + "give its full path" : " in PATH; install it or give its full path"))
        ]
    }

    public var filters: (any EventFilters)? { self }

    /// The runs the journal recorded for the event, and whether it waits for another.
    public func delivery(of row: JournalStore.Journaled, sink name: String, in lookup: DeliveryLookup) async throws
        -> DecisionTrace.Delivery
    {
        let runs = try await lookup.journal.hookRuns(row.sequence, sink: name)
        if try await lookup.journal.isHeldForRetry(row.sequence, sink: name) {
            return DecisionTrace.Delivery(
                state: "retrying", sink: name,
                detail:
                    "ran \(runs.count) times, last at \(runs.last.map { lookup.shown($0.finished) } ?? "?"): "
                    + "\(runs.last.map { "\($0.outcome)" } ?? "?"); it will be tried again")
        }
        guard let last = runs.last else {
            return DecisionTrace.Delivery(
                state: "delivered", sink: name, detail: "handed to the hook (no run recorded)")
        }
        let times = runs.count == 1 ? "" : " (attempt \(runs.count))"
        return last.outcome.succeeded
            ? DecisionTrace.Delivery(
                state: "delivered", sink: name, detail: "ran at \(lookup.shown(last.finished))\(times): exit 0")
            : DecisionTrace.Delivery(
                state: "failed", sink: name,
                detail: "ran at \(lookup.shown(last.finished))\(times): \(last.outcome); not tried again")
    }
}
