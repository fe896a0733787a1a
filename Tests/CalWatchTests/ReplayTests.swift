import Foundation
import Testing

@testable import CalWatch

/// The pipeline on a virtual clock: planner → journal → sink, on real SQLite files.
@Suite struct ReplayTests {
    /// Collects what a sink receives.
    final class CollectingSink: EventSink {
        let name = "collect"
        var lines: [String] = []
        func deliver(_ batch: [JournalStore.Entry]) throws { lines += batch.map(\.json) }
    }

    static func ids(_ lines: [String]) -> [String] {
        lines.map { line in
            let start = line.range(of: "\"id\":\"")!.upperBound
            return String(line[start...].prefix(32))
        }
    }

    /// A working week of the sample calendars.
    static var occurrences: [Occurrence] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("samples/calendars").path
        return scan([root], from: "2027-02-28", to: "2027-03-09").occurrences
    }

    static func replay(journal: JournalStore, sink: CollectingSink, from: String, to: String, batchSize: Int = 7) throws
    {
        let berlin = TimeZoneDatabase.rules(named: "Europe/Berlin")!
        let replay = Replay(
            occurrences: occurrences, configuration: PlannerConfiguration(), journal: journal, sinks: [sink],
            recordedTime: { Instant(secondsSinceEpoch: 0) }, batchSize: batchSize)
        _ = try replay.run(
            from: try TimeArgument.parse(from, zone: berlin, now: utc("2027-01-01T00:00:00Z")),
            to: try TimeArgument.parse(to, zone: berlin, now: utc("2027-01-01T00:00:00Z")))
    }

    static func journal() throws -> JournalStore {
        try JournalStore(path: JournalTests.temporaryPath())
    }

    @Test func aReplayStoppedPartWayAndStartedAgainPrintsOnlyTheRest() throws {
        let whole = CollectingSink()
        try Self.replay(journal: try Self.journal(), sink: whole, from: "2027-03-01", to: "2027-03-06")
        #expect(whole.lines.count > 300)
        for stop in ["2027-03-01T09:40", "2027-03-03T07:00", "2027-03-04T10:45", "2027-03-05T16:50"] {
            let journal = try Self.journal()
            let sink = CollectingSink()
            try Self.replay(journal: journal, sink: sink, from: "2027-03-01", to: stop)
            // Started again over the same window and journal, as after a crash.
            try Self.replay(journal: journal, sink: sink, from: "2027-03-01", to: "2027-03-06")
            let got = Self.ids(sink.lines)
            let expected = Self.ids(whole.lines)
            let firstDifference = zip(got, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(
                got.count == expected.count && firstDifference == nil,
                "stopped at \(stop): \(got.count) events, expected \(expected.count); first difference at \(firstDifference ?? -1)"
            )
        }
    }

    @Test func twoReplaysPrintTheSameEvents() throws {
        let first = CollectingSink()
        let second = CollectingSink()
        try Self.replay(journal: try Self.journal(), sink: first, from: "2027-03-01", to: "2027-03-06")
        try Self.replay(journal: try Self.journal(), sink: second, from: "2027-03-01", to: "2027-03-06", batchSize: 512)
        #expect(first.lines == second.lines)
    }

    @Test func aSinkThatMissedCommittedEventsCatchesUpFromTheJournal() throws {
        let journal = try Self.journal()
        let whole = CollectingSink()
        try Self.replay(journal: journal, sink: whole, from: "2027-03-01", to: "2027-03-02")
        // As if the process died after committing the last 5 events and before the sink got them.
        try journal.setCursor(try journal.lastSequence() - 5, for: "collect")
        let late = CollectingSink()
        try Self.replay(journal: journal, sink: late, from: "2027-03-01", to: "2027-03-02")
        #expect(late.lines == Array(whole.lines.suffix(5)))
    }
}
