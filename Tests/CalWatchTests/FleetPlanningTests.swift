import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// What a watcher of a fleet plans: many people's calendars in one watch, each scoped by its name in the fleet,
/// and calendars taken over from another watcher with what that one delivered. Real folders and journals, on a
/// manual clock; the database side is in `FleetTests`.
@Suite struct FleetPlanningTests {
    typealias Bench = WatchTests.Bench

    /// A bench over collections `alice` and `bob`, scoped by those names as a fleet's watcher scopes them.
    static func fleetBench(_ people: [String] = ["alice", "bob"]) throws -> Bench {
        let bench = try Bench(collections: people)
        bench.configuration.calendars = people.map { bench.root + "/" + $0 }
        bench.configuration.scopes = Dictionary(uniqueKeysWithValues: people.map { (bench.root + "/" + $0, $0) })
        bench.configuration.fleet = true
        return bench
    }

    /// The same invitation (one UID, one join link) as each attendee's calendar holds it.
    static let invitation = """
        BEGIN:VCALENDAR\r
        VERSION:2.0\r
        PRODID:-//calwatch tests//EN\r
        BEGIN:VEVENT\r
        UID:standup-2027-03-01@example.org\r
        DTSTAMP:20270101T000000Z\r
        DTSTART:20270301T100000Z\r
        DTEND:20270301T103000Z\r
        SUMMARY:Standup\r
        URL:https://meet.example.org/abc-defg-hij\r
        END:VEVENT\r
        END:VCALENDAR\r

        """

    @Test func oneInvitationInTwoPeoplesCalendarsIsRemindedToEach() async throws {
        let fleet = try Self.fleetBench()
        try fleet.writeRenamed("alice/standup.ics", Self.invitation)
        try fleet.writeRenamed("bob/standup.ics", Self.invitation)
        try await fleet.start(at: "2027-03-01T09:00:00Z")
        for instant in ["09:30", "09:45", "09:55"] { try await fleet.advance(to: "2027-03-01T\(instant):00Z") }
        _ = await fleet.received()
        let reminders = await fleet.sink.events.filter { $0.type == .reminderDue }
        // Three offsets for each person, under ids of their own (a sink that keys by id keeps all six).
        #expect(reminders.count == 6)
        #expect(Set(reminders.map(\.id)).count == 6)
        #expect(Set(reminders.map(\.key.scope)) == ["alice", "bob"])

        // One person's two calendars (no fleet) hold one meeting: reminded once, as before.
        let person = try Bench(collections: ["work", "personal"])
        try person.writeRenamed("work/standup.ics", Self.invitation)
        try person.writeRenamed("personal/standup.ics", Self.invitation)
        try await person.start(at: "2027-03-01T09:00:00Z")
        for instant in ["09:30", "09:45", "09:55"] { try await person.advance(to: "2027-03-01T\(instant):00Z") }
        _ = await person.received()
        let once = await person.sink.events.filter { $0.type == .reminderDue }
        #expect(once.count == 3 && once.allSatisfy { $0.key.scope.isEmpty })
        // Outside a fleet the ids are what they always were.
        #expect(Set(once.map(\.id)).isDisjoint(with: reminders.map(\.id)))
    }

    /// What the fleet's database would give a watcher taking a calendar over: the events another sent.
    static func delivered(_ events: [PlannedEvent]) -> [PlannerState.Delivered] {
        events.map { event in
            PlannerState.Delivered(
                id: event.id, type: event.type, key: event.key, occurrenceStart: event.occurrenceStart,
                occurrenceEnd: event.occurrenceEnd, time: event.time, expiry: event.expiry,
                snoozedUntil: event.answer?.until)
        }
    }

    @Test func aCalendarTakenOverSendsOnlyWhatTheOtherWatcherDidNot() async throws {
        // The first watcher sends the 30- and 15-minute reminders and starts the live activity, then dies.
        let first = try Self.fleetBench(["alice"])
        try first.writeRenamed("alice/standup.ics", Self.invitation)
        try await first.start(at: "2027-03-01T09:00:00Z")
        for instant in ["09:30", "09:45", "09:46"] { try await first.advance(to: "2027-03-01T\(instant):00Z") }
        _ = await first.received()
        let sent = await first.sink.events
        #expect(
            sent.map(Bench.describe) == [
                "reminderDue 2027-03-01T09:30:00Z 30m", "liveActivityStart 2027-03-01T09:45:00Z",
                "reminderDue 2027-03-01T09:45:00Z 15m", "liveActivityUpdate 2027-03-01T09:46:00Z",
            ])

        // Another takes the calendar over 20 seconds after the 5-minute reminder was due (the first one's lease
        // expired meanwhile), with what the first delivered.
        let second = try Self.fleetBench(["alice"])
        second.handOver = .init(scopes: ["alice"], at: utc("2027-03-01T09:55:20Z"), delivered: Self.delivered(sent))
        try second.writeRenamed("alice/standup.ics", Self.invitation)
        try await second.start(at: "2027-03-01T09:55:20Z")
        for instant in ["09:56", "10:00", "10:30"] { try await second.advance(to: "2027-03-01T\(instant):00Z") }
        let taken = await second.received()
        // No reminder again, no second start: the activity goes on from its latest report; the 5-minute reminder
        // comes at once, marked late though within the minute's grace (the user waited on the hand-over); then
        // the activity ends at the end.
        #expect(taken.first == "liveActivityUpdate 2027-03-01T09:55:00Z", "\(taken)")
        #expect(!taken.contains { $0.hasPrefix("liveActivityStart") || $0.hasSuffix(" 30m") || $0.hasSuffix(" 15m") })
        #expect(taken.contains("reminderDue 2027-03-01T09:55:00Z 5m late"), "\(taken)")
        let reminder = await second.sink.events.first { $0.type == .reminderDue }?.reminder
        #expect(reminder?.lateness == 20)
        #expect(taken.last == "liveActivityEnd 2027-03-01T10:30:00Z ended", "\(taken)")
        let ids = Set(await second.sink.events.map(\.id))
        #expect(ids.isDisjoint(with: sent.map(\.id)))
    }

    @Test func aCalendarGivenToAnotherWatcherEndsNothingHere() async throws {
        let bench = try Self.fleetBench()
        try bench.writeRenamed("alice/standup.ics", Self.invitation)
        try bench.writeRenamed("bob/standup.ics", Self.invitation)
        try await bench.start(at: "2027-03-01T09:50:00Z")
        _ = await bench.received()
        #expect(await bench.sink.events.filter { $0.type == .liveActivityStart }.count == 2)

        // Bob's calendar went to another watcher: this one reads Alice's only, on the same journal.
        bench.configuration.calendars = [bench.root + "/alice"]
        bench.configuration.scopes = [bench.root + "/alice": "alice"]
        try await bench.start(at: "2027-03-01T09:51:00Z")
        try await bench.advance(to: "2027-03-01T10:30:00Z")
        let later = await bench.received()
        let ends = await bench.sink.events.filter { $0.type == .liveActivityEnd }
        // Alice's activity ends at its end; Bob's is not ended as removed here (it goes on at the other watcher).
        #expect(ends.map(\.key.scope) == ["alice"], "\(later)")
        #expect(ends.first?.liveActivity?.endReason == .ended)
    }

    @Test func eachPersonsOwnAnswerDecidesTheirReminders() async throws {
        let fleet = try Self.fleetBench()
        fleet.configuration.people = ["alice": ["alice@example.org"], "bob": ["mailto:Bob@Example.org"]]
        let answered = Self.invitation.replacingOccurrences(
            of: "URL:",
            with: """
                ORGANIZER:mailto:carol@example.org\r
                ATTENDEE;PARTSTAT=DECLINED:mailto:alice@example.org\r
                ATTENDEE;PARTSTAT=ACCEPTED:mailto:bob@example.org\r
                URL:
                """)
        try fleet.writeRenamed("alice/standup.ics", answered)
        try fleet.writeRenamed("bob/standup.ics", answered)
        try await fleet.start(at: "2027-03-01T09:00:00Z")
        for instant in ["09:30", "09:45", "09:55"] { try await fleet.advance(to: "2027-03-01T\(instant):00Z") }
        _ = await fleet.received()
        // Alice declined: nothing for her; Bob accepted: his three reminders.
        let reminders = await fleet.sink.events.filter { $0.type == .reminderDue }
        #expect(reminders.map(\.key.scope) == ["bob", "bob", "bob"])
    }
}
