import Foundation
import Testing

@testable import CalWatchCore

/// Time to get ready (`prep:`): whose setting wins, and `prepareDue` at the time to leave less it, once, following
/// the time to leave when that moves, through quiet hours, and not for what gets no reminders.
@Suite struct PrepareTests {
    /// The dentist at 09:00 UTC, at the place Praxis (30 minutes away), and a flight the same evening.
    static let items = """
        BEGIN:VEVENT\r
        UID:dentist\r
        DTSTAMP:20270301T000000Z\r
        DTSTART:20270305T090000Z\r
        DTEND:20270305T100000Z\r
        SUMMARY:Dentist\r
        LOCATION:Praxis\r
        END:VEVENT\r
        BEGIN:VEVENT\r
        UID:flight\r
        DTSTAMP:20270301T000000Z\r
        DTSTART:20270305T180000Z\r
        DTEND:20270305T191000Z\r
        SUMMARY:LH 2040 BER → MUC\r
        END:VEVENT\r

        """

    static func setup(_ yaml: String) throws -> (Configuration, [String: Occurrence], Classifier) {
        let configuration = try ConfigurationLoader.parse(
            """
            places:
              - { name: Praxis, travelTime: 30m, prep: 20m }
            \(yaml)
            """, file: "config.yml", directory: "/tmp", environment: [:])
        let occurrences = try ProducerHabitTests.scanText(Self.items).occurrences
        return (
            configuration, Dictionary(uniqueKeysWithValues: occurrences.map { ($0.uid, $0) }),
            Classifier(configuration)
        )
    }

    @Test(
        arguments: [
            ("", 20 * 60, Leave.Prep.Source.place),
            ("travel: { prep: 1h }", 20 * 60, .place),
            ("rules:\n  - { summary: Dentist, prep: 45m }", 45 * 60, .rule),
            ("rules:\n  - { summary: Dentist, prep: 0m }\ntravel: { prep: 1h }", nil, nil),
        ] as [(String, Int?, Leave.Prep.Source?)])
    func theRuleThenThePlaceThenTravelSaysHowLong(yaml: String, seconds: Int?, source: Leave.Prep.Source?) throws {
        let (_, day, classifier) = try Self.setup(yaml)
        let dentist = try #require(day["dentist"])
        let leave = try #require(classifier.facts(for: dentist).leave)
        #expect(leave.by == utc("2027-03-05T08:30:00Z"))
        #expect(leave.prep?.seconds == seconds.map(Int64.init) && leave.prep?.source == source)
        #expect(leave.prepareBy == seconds.map { leave.by.adding(seconds: -Int64($0)) })
    }

    /// The first configuration a user writes puts the time to get ready on Home, where they get ready: it counts
    /// when the way starts there, and a destination's own `prep` still wins.
    @Test(
        arguments: [
            ("  - { name: Praxis, travelTime: 30m }", 40 * 60, Leave.Prep.Source.origin),
            ("  - { name: Praxis, travelTime: 30m, prep: 20m }", 20 * 60, .place),
            // At 08:30 the user is at the office by its hours, not at Home: Home's prep is not theirs then.
            ("  - { name: Praxis, travelTime: 30m }\n  - { name: Office, hours: \"08:00-12:00\" }", nil, nil),
        ] as [(String, Int?, Leave.Prep.Source?)])
    func thePlaceTheWayStartsFromGivesItsPrepWhenTheDestinationHasNone(
        places: String, seconds: Int?, source: Leave.Prep.Source?
    ) throws {
        let configuration = try ConfigurationLoader.parse(
            """
            places:
              - { name: Home, at: { lat: 52.52, lon: 13.40 }, prep: 40m }
            \(places)
            """, file: "config.yml", directory: "/tmp", environment: [:])
        let dentist = try #require(
            try ProducerHabitTests.scanText(Self.items).occurrences.first { $0.uid == "dentist" })
        let leave = try #require(Classifier(configuration).facts(for: dentist).leave)
        #expect(leave.prep?.seconds == seconds.map(Int64.init) && leave.prep?.source == source, "\(places)")
        #expect(leave.prepareBy == seconds.map { utc("2027-03-05T08:30:00Z").adding(seconds: -Int64($0)) })
    }

    @Test func aFlightTakesFlightsPrepElseTravelPrep() throws {
        for (yaml, seconds) in [
            ("flights: { prep: 1h30m }\ntravel: { prep: 1h }", 5400), ("travel: { prep: 1h }", 3600),
        ] {
            let (_, day, classifier) = try Self.setup(yaml)
            let flight = try #require(day["flight"])
            let facts = classifier.facts(for: flight)
            #expect(facts.kind == .flight)
            let leave = try #require(facts.leave)
            #expect(leave.prepareBy == leave.by.adding(seconds: Int64(-seconds)), "\(yaml)")
        }
    }

    /// Plans the dentist at `now` with `facts`, applying what is due; returns the `prepareDue` events.
    static func prepare(
        _ occurrence: Occurrence, _ facts: OccurrenceFacts, _ state: inout PlannerState,
        _ configuration: PlannerConfiguration, at now: String
    ) -> [PlannedEvent] {
        let plan = Planner.plan(
            [occurrence], facts: { _ in facts }, state: state, configuration: configuration, now: utc(now))
        for event in plan.due { state.apply(event) }
        return plan.due.filter { $0.type == .prepareDue }
    }

    @Test func prepareDueComesOnceAndFollowsTheTimeToLeaveThroughQuietHours() throws {
        let (configuration, day, classifier) = try Self.setup(
            "quietHours: { from: \"22:00\", to: \"08:30\", then: defer }")
        let dentist = try #require(day["dentist"])
        var facts = classifier.facts(for: dentist)
        var state = PlannerState()
        let planner = configuration.planner
        // Its wake is asked for, and it is not due before.
        let early = Planner.plan(
            [dentist], facts: { _ in facts }, state: state, configuration: planner, now: utc("2027-03-05T07:00:00Z"))
        #expect(early.due.isEmpty && early.nextWake == utc("2027-03-05T08:10:00Z"))
        // 08:10 lies in quiet hours: a wake-up is not held back.
        let due = Self.prepare(dentist, facts, &state, planner, at: "2027-03-05T08:10:00Z")
        #expect(due.map(\.time) == [utc("2027-03-05T08:10:00Z")] && due.first?.expiry == utc("2027-03-05T08:30:00Z"))
        #expect(Self.prepare(dentist, facts, &state, planner, at: "2027-03-05T08:12:00Z").isEmpty)
        // The way now takes 40 minutes: the new time to get ready (08:00) has passed, and the new time to leave
        // (08:20) has not, so it comes at once, once.
        facts.leave?.travelSeconds = 2400
        facts.leave?.by = utc("2027-03-05T08:20:00Z")
        let moved = Self.prepare(dentist, facts, &state, planner, at: "2027-03-05T08:13:00Z")
        #expect(moved.map(\.time) == [utc("2027-03-05T08:00:00Z")])
        #expect(Self.prepare(dentist, facts, &state, planner, at: "2027-03-05T08:14:00Z").isEmpty)
        // Found only after the time to leave: nothing to get ready for.
        var late = PlannerState()
        #expect(Self.prepare(dentist, facts, &late, planner, at: "2027-03-05T08:25:00Z").isEmpty)
    }

    @Test func aDeclinedOccurrenceGetsNoTimeToGetReadyUnlessDeclinedOnesAreIncluded() throws {
        let (configuration, day, classifier) = try Self.setup("")
        let dentist = try #require(day["dentist"])
        var facts = classifier.facts(for: dentist)
        facts.declined = true
        var state = PlannerState()
        #expect(Self.prepare(dentist, facts, &state, configuration.planner, at: "2027-03-05T08:15:00Z").isEmpty)
        var included = configuration.planner
        included.includeDeclined = true
        #expect(Self.prepare(dentist, facts, &state, included, at: "2027-03-05T08:15:00Z").count == 1)
    }

    /// The status bar counts down to getting ready first, then to leaving, and wakes for both.
    @Test func nextCountsDownToGettingReadyThenToLeaving() throws {
        let (_, day, classifier) = try Self.setup("")
        let dentist = try #require(day["dentist"])
        let facts = classifier.facts(for: dentist)
        func line(at now: String) -> String? {
            NextUpFormat.line(
                NextUp([dentist], facts: { _ in facts }, options: .init(), now: utc(now), zone: .utc))
        }
        #expect(line(at: "2027-03-05T08:00:00Z") == "Get ready in 10 min for Dentist (leave 08:30)")
        #expect(line(at: "2027-03-05T08:15:00Z")?.hasPrefix("Leave in 15 min for Dentist") == true)
        let wake = NextUp.nextChange(
            [dentist], facts: { _ in facts }, options: .init(), now: utc("2027-03-05T07:30:00Z"))
        #expect(wake == utc("2027-03-05T07:55:00Z"), "15 minutes before getting ready")
    }
}
