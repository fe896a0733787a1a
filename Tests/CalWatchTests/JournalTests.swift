import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// The journal on real SQLite files: what a restart relies on.
@Suite struct JournalTests {
    static func temporaryPath() -> String {
        TestFolders.path("calwatch-journal", suffix: "/state/journal.db")
    }

    /// The standup's events up to `until`, as the planner makes them.
    static func events(until: String) -> [PlannedEvent] {
        var state = PlannerState()
        var events: [PlannedEvent] = []
        let standup = PlannerTests.meeting("standup", "2027-03-01T10:00:00Z", "2027-03-01T10:30:00Z")
        Planner.run(
            from: utc("2027-03-01T09:00:00Z"), to: utc(until), state: &state, configuration: PlannerConfiguration()
        ) { _ in
            [standup]
        } emit: {
            events.append($0)
        }
        return events
    }

    @Test func committedEventsRebuildThePlannerStateAfterAReopen() async throws {
        let path = Self.temporaryPath()
        let events = Self.events(until: "2027-03-01T09:50:00Z")
        do {
            let journal = try JournalStore(path: path)
            let committed = try await journal.append(events, recorded: Timestamp(utc("2027-03-01T09:50:00Z")))
            #expect(committed.map(\.sequence) == Array(1...Int64(events.count)))
        }
        let reopened = try JournalStore(path: path)
        let state = try await reopened.plannerState()
        var expected = PlannerState()
        for event in events { expected.apply(event) }
        #expect(state.emitted == expected.emitted)
        #expect(state.active == expected.active)
        #expect(state.active.count == 1)
    }

    @Test func pruningKeepsWhatASinkHasNotHandledAndTheSequenceGoesOn() async throws {
        let journal = try JournalStore(path: Self.temporaryPath())
        let events = Self.events(until: "2027-03-01T11:00:00Z")
        _ = try await journal.append(events, recorded: Timestamp(utc("2027-03-01T11:00:00Z")))
        try await journal.setCursor(Int64(events.count), for: "fast")
        try await journal.setCursor(10, for: "slow")
        try await journal.prune(expiredBefore: utc("2027-03-03T00:00:00Z"), sinks: ["fast", "slow"])
        // Everything has expired, but the slow sink still needs what is after its cursor.
        #expect(try await journal.events(after: 0, limit: 1000).first?.sequence == 11)
        try await journal.setCursor(Int64(events.count), for: "slow")
        try await journal.prune(expiredBefore: utc("2027-03-03T00:00:00Z"), sinks: ["fast", "slow"])
        // The last row stays, so the next event continues the sequence and no cursor is fooled.
        #expect(try await journal.events(after: 0, limit: 1000).map(\.sequence) == [Int64(events.count)])
        #expect(try await journal.handledUntil() == utc("2027-03-03T00:00:00Z"))
        let more = Self.events(until: "2027-03-01T11:00:00Z").map { event in
            PlannedEvent(
                event.payload, id: EventID(high: event.id.high, low: event.id.low &+ 1), key: event.key,
                occurrenceStart: event.occurrenceStart, occurrenceEnd: event.occurrenceEnd, time: event.time,
                expiry: event.expiry, fingerprint: event.fingerprint)
        }
        let appended = try await journal.append(Array(more.prefix(1)), recorded: Timestamp(utc("2027-03-03T00:00:00Z")))
        #expect(appended.first?.sequence == Int64(events.count) + 1)
    }

    @Test func anEventIsNeverJournaledTwiceAndSequencesIncrease() async throws {
        let journal = try JournalStore(path: Self.temporaryPath())
        let events = Self.events(until: "2027-03-01T09:50:00Z")
        let first = try await journal.append(
            Array(events.prefix(3)), recorded: Timestamp(utc("2027-03-01T09:50:00Z")))
        let again = try await journal.append(events, recorded: Timestamp(utc("2027-03-01T09:51:00Z")))
        #expect(first.count == 3)
        #expect(again.count == events.count - 3)
        #expect(again.first?.sequence == 4)
        #expect(try await journal.lastSequence() == Int64(events.count))
        let read = try await journal.events(after: 0, limit: 2)
        #expect(read.map(\.sequence) == [1, 2])
        // Read back, an event is the event that was planned: the journal loses nothing a sink renders.
        #expect(read.map(\.event) == Array(events.prefix(2)))
        #expect(read.allSatisfy { $0.recorded == Timestamp(utc("2027-03-01T09:50:00Z")) })
    }

    @Test func aRunStartedAgainSkipsWhatItJournaledWhereverItFallsInTheRowsWrittenTogether() async throws {
        let journal = try JournalStore(path: Self.temporaryPath())
        // Two days of the standup's events.
        let events =
            Self.events(until: "2027-03-01T11:00:00Z")
            + Self.events(until: "2027-03-01T11:00:00Z").map {
                PlannedEvent(
                    $0.payload, id: EventID(high: $0.id.high, low: ~$0.id.low), key: $0.key,
                    occurrenceStart: $0.occurrenceStart.adding(seconds: 86_400),
                    occurrenceEnd: $0.occurrenceEnd.adding(seconds: 86_400), time: $0.time.adding(seconds: 86_400),
                    expiry: $0.expiry.adding(seconds: 86_400), fingerprint: $0.fingerprint)
            }
        #expect(events.count > 64, "more rows than two of the journal's multi-row inserts")
        // One event from the middle of a later chunk, and the first 40, journaled by an earlier run.
        _ = try await journal.append([events[50]], recorded: Timestamp(utc("2027-03-01T09:50:00Z")))
        _ = try await journal.append(Array(events.prefix(40)), recorded: Timestamp(utc("2027-03-01T09:50:00Z")))
        let again = try await journal.append(events, recorded: Timestamp(utc("2027-03-01T11:00:00Z")))
        let fresh = events.indices.filter { $0 >= 40 && $0 != 50 }.map { events[$0] }
        #expect(again.map(\.event) == fresh)
        #expect(again.map(\.sequence) == Array(42...Int64(events.count)))
        let all = try await journal.events(after: 0, limit: 1000)
        #expect(all.count == events.count && Set(all.map(\.event.id)).count == events.count)
    }

    @Test func everyKindOfEventReadsBackAsPlanned() async throws {
        let journal = try JournalStore(path: Self.temporaryPath())
        var late = PlannerState()
        var events: [PlannedEvent] = []
        // Started at 09:52: the 30- and 15-minute reminders collapse into one late one; the activity runs and ends.
        let standup = PlannerTests.meeting("standup", "2027-03-01T10:00:00Z", "2027-03-01T10:30:00Z")
        Planner.run(
            from: utc("2027-03-01T09:52:00Z"), to: utc("2027-03-01T11:00:00Z"), state: &late,
            configuration: PlannerConfiguration()
        ) { _ in
            [standup]
        } emit: {
            events.append($0)
        }
        #expect(events.contains { $0.reminder?.late == true })
        #expect(events.contains { $0.liveActivity?.endReason == .ended })
        _ = try await journal.append(events, recorded: Timestamp(utc("2027-03-01T11:00:00Z")))
        #expect(try await journal.events(after: 0, limit: 1000).map(\.event) == events)
    }

    @Test func aJournalOfAnotherLayoutIsRefusedNotMisread() throws {
        let path = Self.temporaryPath()
        _ = try JournalStore(path: path)
        let connection = try SQLiteConnection(path: path)
        try connection.execute("PRAGMA user_version = 1")
        #expect(throws: JournalStore.IncompatibleLayout.self) { try JournalStore(path: path) }
    }

    @Test func aLayout2JournalIsMigratedWithItsRecordedTimesInMilliseconds() async throws {
        let path = Self.temporaryPath()
        let events = Self.events(until: "2027-03-01T09:50:00Z")
        do {
            let journal = try JournalStore(path: path)
            _ = try await journal.append(events, recorded: Timestamp(millisecondsSinceEpoch: 0))
        }
        // What layout 2 wrote: `recorded` in seconds, no retry table.
        let connection = try SQLiteConnection(path: path)
        try connection.execute(
            "UPDATE events SET recorded = 1804000000; DROP TABLE sink_retries; PRAGMA user_version = 2")
        let migrated = try JournalStore(path: path)
        let read = try await migrated.events(after: 0, limit: 1000)
        #expect(read.count == events.count)
        #expect(read.allSatisfy { $0.recorded == Timestamp(millisecondsSinceEpoch: 1_804_000_000_000) })
        try await migrated.holdRetry(1, for: "hook")
        #expect(try await migrated.heldRetries(for: "hook").map(\.sequence) == [1])
    }

    @Test func aRetryHeldForASinkSurvivesPruningAndAReopen() async throws {
        let path = Self.temporaryPath()
        let events = Self.events(until: "2027-03-01T11:00:00Z")
        do {
            let journal = try JournalStore(path: path)
            _ = try await journal.append(events, recorded: Timestamp(utc("2027-03-01T11:00:00Z")))
            try await journal.setCursor(Int64(events.count), for: "hook")
            try await journal.holdRetry(2, for: "hook")
            try await journal.holdRetry(4, for: "hook")
            try await journal.releaseRetry(4, for: "hook")
            try await journal.prune(expiredBefore: utc("2027-03-03T00:00:00Z"), sinks: ["hook"])
        }
        let reopened = try JournalStore(path: path)
        #expect(try await reopened.heldRetries(for: "hook").map(\.sequence) == [2])
        #expect(try await reopened.heldRetries(for: "other").isEmpty)
        // Kept for the retry, and the last row for the sequence; the rest went.
        #expect(try await reopened.events(after: 0, limit: 1000).map(\.sequence) == [2, Int64(events.count)])
    }

    /// A replay's own journal writes a row only when something may read it back: what every sink took first is
    /// never written, and a sink that lags, a hook's retry or a prune finds what it would have found otherwise.
    @Test func aThrowawayJournalWritesOnlyWhatASinkMayStillRead() async throws {
        let journal = try JournalStore(path: Self.temporaryPath(), throwaway: true)
        try await journal.verify([EventBusTests.CountingSink(), EventBusTests.GatedSink()])
        let events = Self.events(until: "2027-03-01T11:00:00Z")
        let (half, count) = (events.count / 2, Int64(events.count))
        let recorded = Timestamp(utc("2027-03-01T11:00:00Z"))
        let committed =
            try await journal.append(Array(events[..<half]), recorded: recorded)
            + journal.append(Array(events[half...]), recorded: recorded)
        #expect(committed.map(\.sequence) == Array(1...count))
        #expect(try await journal.lastSequence() == count)
        // Both sinks took the first half, only the fast one the rest: the slow one reads it back, as it was planned.
        try await journal.setCursor(Int64(half), for: "gated")
        try await journal.setCursor(count, for: "fast")
        let back = try await journal.events(after: Int64(half), limit: 1000)
        #expect(back.map(\.sequence) == Array(Int64(half + 1)...count))
        #expect(back.map(\.event) == Array(events[half...]))
        // The first half was let go unwritten.
        #expect(try await journal.events(after: 0, limit: 1000).first?.sequence == Int64(half + 1))
        // A row held back that a hook will try again stays when every sink has passed it, and through a prune.
        let more = events.map { event in
            PlannedEvent(
                event.payload, id: EventID(high: event.id.high, low: event.id.low &+ 1), key: event.key,
                occurrenceStart: event.occurrenceStart, occurrenceEnd: event.occurrenceEnd, time: event.time,
                expiry: event.expiry, fingerprint: event.fingerprint)
        }
        #expect(try await journal.append(more, recorded: recorded).first?.sequence == count + 1)
        try await journal.holdRetry(count + 2, for: "gated")
        for sink in ["gated", "fast"] { try await journal.setCursor(2 * count, for: sink) }
        try await journal.prune(expiredBefore: utc("2027-03-03T00:00:00Z"), sinks: ["gated", "fast"])
        #expect(try await journal.heldRetries(for: "gated").map(\.event) == [more[1]])
        #expect(try await journal.lastSequence() == 2 * count)
    }

    @Test func sinkCursorsSurviveAReopen() async throws {
        let path = Self.temporaryPath()
        do {
            let journal = try JournalStore(path: path)
            #expect(try await journal.cursor(for: "jsonl") == 0)
            try await journal.setCursor(7, for: "jsonl")
            try await journal.setCursor(3, for: "sqlite")
            try await journal.setCursor(9, for: "jsonl")
        }
        let journal = try JournalStore(path: path)
        #expect(try await journal.cursor(for: "jsonl") == 9)
        #expect(try await journal.cursor(for: "sqlite") == 3)
    }

    @Test func theDatabaseIsPrivateAndInWALMode() async throws {
        let path = Self.temporaryPath()
        let journal = try JournalStore(path: path)
        _ = try await journal.append(
            Self.events(until: "2027-03-01T09:31:00Z"), recorded: Timestamp(utc("2027-03-01T09:31:00Z")))
        #expect(await journal.journalMode == "wal")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: (path as NSString).deletingLastPathComponent)
        #expect(folder[.posixPermissions] as? Int == 0o700)
    }

    @Test func recurrenceIDsRoundTripThroughTheirText() {
        #expect(DateValueText(text: "2027-03-01T08:30:00Z") == .instant(utc("2027-03-01T08:30:00Z")))
        #expect(DateValueText(text: "2027-03-06") == .date(CalendarDate(year: 2027, month: 3, day: 6)))
        #expect(DateValueText(text: "tomorrow") == nil)
    }
}
