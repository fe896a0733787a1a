import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The pipeline on a virtual clock: planner → journal → bus → sinks, on real SQLite files.
@Suite struct ReplayTests {
    /// Collects what a sink receives.
    actor CollectingSink: EventSink {
        nonisolated let name: String
        var lines: [String] = []
        var events: [PlannedEvent] = []
        init(name: String = "collect") { self.name = name }
        func deliver(_ batch: [JournalStore.Entry]) {
            lines += batch.map(\.json)
            events += batch.map(\.event)
        }
    }

    static func ids(_ lines: [String]) -> [String] {
        lines.map { line in
            let start = line.range(of: "\"id\":\"")!.upperBound
            return String(line[start...].prefix(32))
        }
    }

    /// A working week of the sample calendars.
    static let occurrences: [Occurrence] = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/calendars").path
        return scan([root], from: "2027-02-28", to: "2027-03-09").occurrences
    }()

    static func instant(_ text: String) throws -> Instant {
        try TimeArgument.parse(
            text, zone: TimeZoneDatabase.rules(named: "Europe/Berlin")!, now: utc("2027-01-01T00:00:00Z"))
    }

    @discardableResult
    static func replay(
        journal: JournalStore, sinks: [any EventSink], from: String, to: String, options: Replay.Options = .small,
        shouldStop: () -> Bool = { false }
    ) async throws -> Replay.Summary {
        let replay = Replay(
            occurrences: occurrences, configuration: PlannerConfiguration(), journal: journal, sinks: sinks,
            recordedTime: { Timestamp(millisecondsSinceEpoch: 0) }, options: options)
        return try await replay.run(from: try instant(from), to: try instant(to), shouldStop: shouldStop)
    }

    static func journal() throws -> JournalStore {
        try JournalStore(path: JournalTests.temporaryPath())
    }

    @Test func aReplayStoppedPartWayAndStartedAgainPrintsOnlyTheRest() async throws {
        let whole = CollectingSink()
        try await Self.replay(journal: try Self.journal(), sinks: [whole], from: "2027-03-01", to: "2027-03-06")
        let expected = Self.ids(await whole.lines)
        #expect(expected.count > 300)
        for stop in ["2027-03-01T09:40", "2027-03-03T07:00", "2027-03-04T10:45", "2027-03-05T16:50"] {
            let journal = try Self.journal()
            let sink = CollectingSink()
            try await Self.replay(journal: journal, sinks: [sink], from: "2027-03-01", to: stop)
            // Started again over the same window and journal, as after a crash.
            try await Self.replay(journal: journal, sinks: [sink], from: "2027-03-01", to: "2027-03-06")
            let got = Self.ids(await sink.lines)
            let firstDifference = zip(got, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(
                got.count == expected.count && firstDifference == nil,
                "stopped at \(stop): \(got.count) events, expected \(expected.count); first difference at \(firstDifference ?? -1)"
            )
        }
    }

    @Test func aReplayAskedToStopEndsAtABatchAndTheNextRunDoesTheRest() async throws {
        let whole = CollectingSink()
        try await Self.replay(journal: try Self.journal(), sinks: [whole], from: "2027-03-01", to: "2027-03-06")
        let journal = try Self.journal()
        let sink = CollectingSink()
        var batches = 0
        let first = try await Self.replay(
            journal: journal, sinks: [sink], from: "2027-03-01", to: "2027-03-06",
            shouldStop: {
                batches += 1
                return batches == 5
            })
        #expect(first.stopped && first.total == 5 * Replay.Options.small.batchSize)
        try await Self.replay(journal: journal, sinks: [sink], from: "2027-03-01", to: "2027-03-06")
        #expect(await sink.lines == whole.lines)
    }

    @Test func aRestartAfterDowntimeFollowsTheLatePolicyFromTheJournalLeftBehind() async throws {
        let standup = PlannerTests.meeting("standup", "2027-03-01T10:00:00Z", "2027-03-01T10:30:00Z")
        let journal = try Self.journal()
        func run(_ from: String, _ to: String) async throws -> [String] {
            let sink = CollectingSink()
            let replay = Replay(
                occurrences: [standup], configuration: PlannerConfiguration(), journal: journal, sinks: [sink],
                recordedTime: { Timestamp(millisecondsSinceEpoch: 0) })
            _ = try await replay.run(from: utc(from), to: utc(to))
            return await sink.events.filter { $0.type != .liveActivityUpdate }.map { event in
                var line = "\(event.type.rawValue) \(event.time)"
                if let reminder = event.reminder {
                    line += " \(reminder.secondsBefore / 60)m" + (reminder.late ? " late \(reminder.lateness)s" : "")
                }
                if let reason = event.liveActivity?.endReason { line += " \(reason.rawValue)" }
                return line
            }
        }
        // Running until 09:31: the 30-minute reminder is delivered on time.
        #expect(
            try await run("2027-03-01T09:00:00Z", "2027-03-01T09:31:00Z") == ["reminderDue 2027-03-01T09:30:00Z 30m"])
        // Down from 09:31 to 09:57: the 15- and 5-minute reminders were missed; only the latest comes, marked
        // late, and the live activity that should have started at 09:45 starts now.
        let afterDowntime = try await run("2027-03-01T09:57:00Z", "2027-03-01T11:00:00Z")
        #expect(
            afterDowntime == [
                "liveActivityStart 2027-03-01T09:45:00Z", "reminderDue 2027-03-01T09:55:00Z 5m late 120s",
                "liveActivityEnd 2027-03-01T10:30:00Z ended",
            ])
        // Down again until after the end: nothing is left to deliver.
        #expect(try await run("2027-03-01T12:00:00Z", "2027-03-01T13:00:00Z").isEmpty)
    }

    /// Also into a replay's own journal (`replay` without `--state`), which refuses no duplicate by index: the
    /// planner's state alone keeps each event to once, pruned often or not.
    @Test func twoReplaysPrintTheSameEvents() async throws {
        let first = CollectingSink()
        let second = CollectingSink()
        let throwaway = CollectingSink()
        try await Self.replay(journal: try Self.journal(), sinks: [first], from: "2027-03-01", to: "2027-03-06")
        try await Self.replay(
            journal: try Self.journal(), sinks: [second], from: "2027-03-01", to: "2027-03-06", options: .init())
        try await Self.replay(
            journal: try JournalStore(path: JournalTests.temporaryPath(), throwaway: true), sinks: [throwaway],
            from: "2027-03-01", to: "2027-03-06")
        #expect(await first.lines == second.lines)
        #expect(await throwaway.lines == first.lines)
        let ids = Self.ids(await throwaway.lines)
        #expect(ids.count > 100 && Set(ids).count == ids.count)
    }

    @Test func aSinkThatMissedCommittedEventsCatchesUpFromTheJournal() async throws {
        let journal = try Self.journal()
        let whole = CollectingSink()
        try await Self.replay(journal: journal, sinks: [whole], from: "2027-03-01", to: "2027-03-02")
        // As if the process died after committing the last 5 events and before the sink got them.
        try await journal.setCursor(try await journal.lastSequence() - 5, for: "collect")
        let late = CollectingSink()
        let summary = try await Self.replay(journal: journal, sinks: [late], from: "2027-03-01", to: "2027-03-02")
        #expect(await late.lines == Array(await whole.lines.suffix(5)))
        #expect(summary.sinks.first?.fromJournal == 5)
    }

    @Test func theJournalStaysBoundedAndRemembersWhatItHandled() async throws {
        let journal = try Self.journal()
        let sink = CollectingSink()
        var options = Replay.Options.small
        options.retention.keep = 3600
        let summary = try await Self.replay(
            journal: journal, sinks: [sink], from: "2027-03-01", to: "2027-03-08", options: options)
        #expect(await sink.lines.count == summary.total)
        let handled = try #require(try await journal.handledUntil())
        #expect(handled > (try Self.instant("2027-03-04")))
        // The replay prunes rows its sinks have handled; the sink's cursor may lag a little while it runs, so
        // prune once more the way the replay did last.
        try await journal.prune(expiredBefore: handled, sinks: [sink.name])
        let rows = try await journal.events(after: 0, limit: 1_000_000).count
        #expect(summary.total > 400 && rows < summary.total / 5, "\(rows) rows of \(summary.total)")
        // A run over the same week again starts where the journal had handled everything, and adds nothing.
        let again = try await Self.replay(
            journal: journal, sinks: [sink], from: "2027-03-01", to: "2027-03-08", options: options)
        #expect(again.start == handled && again.total == 0)
    }
}

extension Replay.Options {
    /// Small batches, so that the tests cross many batch boundaries.
    static var small: Replay.Options {
        var options = Replay.Options()
        options.batchSize = 7
        return options
    }
}
