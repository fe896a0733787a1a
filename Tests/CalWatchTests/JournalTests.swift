import Foundation
import Testing

@testable import CalWatch

/// The journal on real SQLite files: what a restart relies on.
@Suite struct JournalTests {
    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("calwatch-journal-\(UUID().uuidString)/state/journal.db").path
    }

    /// The standup's events up to `until`, as the planner makes them.
    static func events(until: String) -> [PlannedEvent] {
        var state = PlannerState()
        var events: [PlannedEvent] = []
        let standup = PlannerTests.meeting("standup", "2027-03-01T10:00:00Z", "2027-03-01T10:30:00Z")
        Planner.run(
            from: utc("2027-03-01T09:00:00Z"), to: utc(until), state: &state, configuration: PlannerConfiguration(),
            occurrencesAt: { _ in [standup] }
        ) { events.append($0) }
        return events
    }

    static func render(_ event: PlannedEvent, _ sequence: Int64) -> String {
        var writer = JSONLineWriter(capacity: 512)
        CloudEventJSON.write(event, occurrence: nil, sequence: sequence, recordedTime: event.time, to: &writer)
        return String(decoding: writer.bytes.dropLast(), as: UTF8.self)
    }

    @Test func committedEventsRebuildThePlannerStateAfterAReopen() throws {
        let path = Self.temporaryPath()
        let events = Self.events(until: "2027-03-01T09:50:00Z")
        do {
            let journal = try JournalStore(path: path)
            let committed = try journal.append(events, recorded: utc("2027-03-01T09:50:00Z"), render: Self.render)
            #expect(committed.map(\.sequence) == Array(1...Int64(events.count)))
        }
        let reopened = try JournalStore(path: path)
        let state = try reopened.plannerState()
        var expected = PlannerState()
        for event in events { expected.apply(event) }
        #expect(state.emitted == expected.emitted)
        #expect(state.active == expected.active)
        #expect(state.active.count == 1)
    }

    @Test func anEventIsNeverJournaledTwiceAndSequencesIncrease() throws {
        let journal = try JournalStore(path: Self.temporaryPath())
        let events = Self.events(until: "2027-03-01T09:50:00Z")
        let first = try journal.append(
            Array(events.prefix(3)), recorded: utc("2027-03-01T09:50:00Z"), render: Self.render)
        let again = try journal.append(events, recorded: utc("2027-03-01T09:51:00Z"), render: Self.render)
        #expect(first.count == 3)
        #expect(again.count == events.count - 3)
        #expect(again.first?.sequence == 4)
        #expect(try journal.lastSequence() == Int64(events.count))
        let json = try journal.entries(after: 0, limit: 2).map(\.json)
        #expect(json.count == 2)
        #expect(json[0].contains("\"sequence\":\"1\""))
    }

    @Test func sinkCursorsSurviveAReopen() throws {
        let path = Self.temporaryPath()
        do {
            let journal = try JournalStore(path: path)
            #expect(try journal.cursor(for: "jsonl") == 0)
            try journal.setCursor(7, for: "jsonl")
            try journal.setCursor(3, for: "sqlite")
            try journal.setCursor(9, for: "jsonl")
        }
        let journal = try JournalStore(path: path)
        #expect(try journal.cursor(for: "jsonl") == 9)
        #expect(try journal.cursor(for: "sqlite") == 3)
    }

    @Test func theDatabaseIsPrivateAndInWALMode() throws {
        let path = Self.temporaryPath()
        let journal = try JournalStore(path: path)
        _ = try journal.append(
            Self.events(until: "2027-03-01T09:31:00Z"), recorded: utc("2027-03-01T09:31:00Z"), render: Self.render)
        #expect(journal.journalMode == "wal")
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
