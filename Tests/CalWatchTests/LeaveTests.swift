import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// When to leave for a placed event: Apple Calendar's travel time and structured location as its exports write
/// them, GEO as Google and Outlook write it, and the user's `places:`.
@Suite struct LeaveTests {
    /// An Apple Calendar export: a travel time, and a structured location with its parameters, folded at 75
    /// octets as iCloud folds it.
    static let dentist = """
        BEGIN:VEVENT\r
        UID:8E1C2C1A-5B4D-4F0E-9C27-1D2B3A4C5D6E\r
        DTSTAMP:20270301T080000Z\r
        DTSTART;TZID=Europe/Berlin:20270305T163000\r
        DTEND;TZID=Europe/Berlin:20270305T171500\r
        SUMMARY:Dentist\r
        LOCATION:Praxis Dr. Weiss\\nKastanienallee 12\\, 10435 Berlin\\, Germany\r
        X-APPLE-TRAVEL-ADVISORY-BEHAVIOR:AUTOMATIC\r
        X-APPLE-TRAVEL-DURATION;VALUE=DURATION:PT40M\r
        X-APPLE-STRUCTURED-LOCATION;VALUE=URI;X-ADDRESS="Kastanienallee 12, 1043\r
         5 Berlin, Germany";X-APPLE-RADIUS=70.5;X-APPLE-REFERENCEFRAME=1;X-TITLE=\r
         "Praxis Dr. Weiss":geo:52.538640,13.409560\r
        END:VEVENT\r

        """

    /// A Google Calendar event with GEO, at a place of `places:`.
    static let office = """
        BEGIN:VEVENT\r
        UID:4hq0c2k9s1@google.com\r
        DTSTAMP:20270301T080000Z\r
        DTSTART:20270305T080000Z\r
        DTEND:20270305T090000Z\r
        SUMMARY:Quarterly review\r
        LOCATION:HQ Building 2\r
        GEO:52.5;13.37\r
        END:VEVENT\r

        """

    static let places: [PlaceSettings] = {
        var home = PlaceSettings(name: "Home")
        home.at = GeoPoint(latitude: 52.5208, longitude: 13.4094)
        home.hours = .init(from: 18 * 60, to: 9 * 60)
        var office = PlaceSettings(name: "Office")
        office.match = ["HQ *"]
        office.travelTime = 25 * 60
        return [home, office]
    }()

    static func facts(_ body: String, places: [PlaceSettings] = places) throws -> (Occurrence, OccurrenceFacts) {
        let result = try ProducerHabitTests.scanText(body)
        let occurrence = try #require(result.occurrences.first)
        return (occurrence, Classifier(travel: TravelTimes(places: places)).facts(for: occurrence))
    }

    @Test func appleTravelTimeAndStructuredLocationGiveTheTimeToLeave() throws {
        let (occurrence, facts) = try Self.facts(Self.dentist)
        let leave = try #require(facts.leave)
        #expect(leave.source == .appleTravelDuration && leave.travelSeconds == 2400)
        #expect(leave.by == occurrence.start.adding(seconds: -2400) && facts.leaveBy == leave.by)
        #expect(
            leave.destination
                == Leave.Place(name: "Praxis Dr. Weiss", at: GeoPoint(latitude: 52.53864, longitude: 13.40956)))
        // 15:50 in Berlin is outside Home's hours (18:00-09:00): nothing says where the way starts.
        #expect(leave.origin == nil)
    }

    @Test func aPlaceMatchedByItsPatternGivesItsFixedTimeAndHomeIsWhereTheMorningStarts() throws {
        let (occurrence, facts) = try Self.facts(Self.office)
        let leave = try #require(facts.leave)
        #expect(leave.source == .place && leave.travelSeconds == 1500)
        #expect(leave.by == occurrence.start.adding(seconds: -1500))
        // GEO, the item's own, beats the place's point; the name is the place's.
        #expect(leave.destination == Leave.Place(name: "Office", at: GeoPoint(latitude: 52.5, longitude: 13.37)))
        // 07:35 UTC is 08:35 in Berlin… but the scan reads this calendar in UTC: 07:35, inside Home's hours.
        #expect(leave.origin?.name == "Home")
    }

    @Test func aTravelTimeNoWayCanTakeIsNotBelieved() throws {
        for written in ["P99999999W", "PT99999999H", "-PT30M", "P3D"] {
            let item = Self.dentist.replacingOccurrences(of: "PT40M", with: written)
            let (_, facts) = try Self.facts(item, places: [])
            #expect(facts.leave == nil, "\(written)")
        }
    }

    @Test func nothingToSayHowLongTheWayTakesMeansNoTimeToLeave() throws {
        #expect(try Self.facts(Self.office, places: []).1.leave == nil)
        let online = Self.office.replacingOccurrences(
            of: "LOCATION:HQ Building 2", with: "LOCATION:Microsoft Teams Meeting")
        #expect(try Self.facts(online).1.leave == nil)
    }

    @Test func remindersCountBackFromTheTimeToLeaveWhereTheConfigurationSaysSo() throws {
        let (occurrence, facts) = try Self.facts(Self.dentist)
        func reminders(_ yaml: String) throws -> [String] {
            let configuration = try ConfigurationLoader.parse(
                yaml, file: "config.yml", directory: "/tmp", environment: [:])
            let events = PlannerTests.run(
                from: "2027-03-05T13:00:00Z", to: "2027-03-05T16:00:00Z", configuration: configuration.planner,
                facts: { _ in facts }, [occurrence])
            return events.filter { $0.type == .reminderDue }.map { "\($0.time) \($0.reminder!.anchor.rawValue)" }
        }
        // By default an event counts back from its start (15:30 UTC).
        #expect(
            try reminders("{}") == [
                "2027-03-05T15:00:00Z start", "2027-03-05T15:15:00Z start", "2027-03-05T15:25:00Z start",
            ])
        // Anchored at the time to leave, 40 minutes earlier: 14:50 UTC.
        let leaving = ["2027-03-05T14:20:00Z leaveBy", "2027-03-05T14:35:00Z leaveBy", "2027-03-05T14:45:00Z leaveBy"]
        #expect(try reminders("reminders: { anchor: { event: leaveBy } }") == leaving)
        #expect(try reminders("rules:\n  - summary: Dentist\n    anchor: leaveBy\n") == leaving)
    }

    @Test func placesWithMistakesAreNamedWithTheirLine() throws {
        let yaml = """
            places:
              - name: Home
                at: { lat: 152.5, lon: 13.4 }
                hours: "18-8"
              - at: { lat: 52.5, lon: 13.4 }
            travel:
              mode: flying
              routing: { engine: osrm, url: "ftp://example.org" }
            """
        var text: [String] = []
        do {
            _ = try ConfigurationLoader.parse(yaml, file: "config.yml", directory: "/tmp", environment: [:])
        } catch {
            text = error.problems.map { "\($0.line ?? 0): \($0.key ?? ""): \($0.message)" }
        }
        #expect(text.contains { $0.hasPrefix("3: ") && $0.contains("places[0].at") }, "\(text)")
        #expect(text.contains { $0.hasPrefix("4: ") && $0.contains("18:00-08:00") }, "\(text)")
        #expect(text.contains { $0.hasPrefix("5: ") && $0.contains("needs a name") }, "\(text)")
        #expect(text.contains { $0.hasPrefix("7: travel.mode") }, "\(text)")
        #expect(text.contains { $0.hasPrefix("8: travel.routing.url") && $0.contains("not an http") }, "\(text)")
    }

    @Test func eventsCarryTheLeaveAndLinksTheSchemaDescribes() throws {
        let (occurrence, facts) = try Self.facts(Self.dentist)
        var state = PlannerState()
        var configuration = PlannerConfiguration()
        configuration.anchors[.event] = .leaveBy
        let plan = Planner.plan(
            [occurrence], facts: { _ in facts }, state: state, configuration: configuration,
            now: utc("2027-03-05T14:20:00Z"))
        let event = try #require(plan.due.first { $0.type == .reminderDue })
        state.apply(event)
        let line = CloudEventJSON.render(
            event, occurrence: occurrence, facts: facts, sequence: 1,
            recordedTime: Timestamp(millisecondsSinceEpoch: event.time.secondsSinceEpoch * 1000))
        let json = try EventSchemaTests.JSON.parse(line)
        #expect(EventSchemaTests.Validator(root: EventSchemaTests.schema).validate(json, EventSchemaTests.schema) == [])
        #expect(json["data"]?["leave"]?["source"]?.string == "appleTravelDuration")
        #expect(json["data"]?["leave"]?["by"]?.string == "2027-03-05T14:50:00Z")
        #expect(json["data"]?["links"]?["geo"]?.string == "geo:52.53864,13.40956")
        #expect(json["data"]?["links"]?["ride"]?.string?.contains("dropoff%5Blatitude%5D=52.53864") == true)
    }

    @Test func theStatusBarCountsDownToTheTimeToLeave() throws {
        let (occurrence, facts) = try Self.facts(Self.dentist)
        func line(at now: String) -> String? {
            let status = NextUp([occurrence], facts: { _ in facts }, options: .init(), now: utc(now), zone: .utc)
            return NextUpFormat.line(status)
        }
        #expect(line(at: "2027-03-05T14:38:00Z") == "Leave in 12 min for Dentist (40 min on the way)")
        #expect(line(at: "2027-03-05T14:50:00Z") == "Dentist in 40 min")
    }

    @Test func hooksGetTheWayThereAsPlaceholdersAndVariables() throws {
        let (occurrence, facts) = try Self.facts(Self.dentist)
        var configuration = PlannerConfiguration()
        configuration.anchors[.event] = .leaveBy
        let plan = Planner.plan(
            [occurrence], facts: { _ in facts }, state: PlannerState(), configuration: configuration,
            now: utc("2027-03-05T14:20:00Z"))
        let event = try #require(plan.due.first { $0.type == .reminderDue })
        let entry = JournalStore.Entry(
            sequence: 1, event: event, occurrence: occurrence, facts: facts,
            recorded: Timestamp(millisecondsSinceEpoch: 0))
        let environment = HookFields(entry).environment
        #expect(environment.contains("CALWATCH_LEAVE_BY=2027-03-05T14:50:00Z"))
        #expect(environment.contains("CALWATCH_TRAVEL_MINUTES=40"))
        #expect(environment.contains("CALWATCH_PLACE=Praxis Dr. Weiss"))
        #expect(
            environment.contains(
                "CALWATCH_DIRECTIONS=https://www.google.com/maps/dir/?api=1&destination=52.53864%2C13.40956"))
        #expect(HookFields.table.map(\.placeholder) == HookSettings.placeholders)
    }
}
