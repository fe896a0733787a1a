import Foundation
import Testing

@testable import CalWatchCore
@testable import CalWatchRuntime

/// Where the way to an event starts (the event before it, a flight's arrival airport, the places' hours), how a rule
/// says how and how long, and how the engine's answers are kept, reused and asked again.
@Suite struct WhereTheWayStartsTests {
    /// A day in Berlin, in UTC: the dentist, a client half an hour after, a flight to Munich, a meeting there, and
    /// dinner back home in the evening long after anything else.
    static let day = """
        BEGIN:VEVENT\r
        UID:dentist\r
        DTSTAMP:20270301T000000Z\r
        DTSTART:20270305T080000Z\r
        DTEND:20270305T090000Z\r
        SUMMARY:Dentist\r
        LOCATION:Praxis Dr. Weiss\r
        GEO:52.54;13.41\r
        END:VEVENT\r
        BEGIN:VEVENT\r
        UID:client\r
        DTSTAMP:20270301T000000Z\r
        DTSTART:20270305T093000Z\r
        DTEND:20270305T100000Z\r
        SUMMARY:Client visit\r
        LOCATION:Client\r
        GEO:52.60;13.40\r
        END:VEVENT\r
        BEGIN:VEVENT\r
        UID:flight\r
        DTSTAMP:20270301T000000Z\r
        DTSTART:20270305T120000Z\r
        DTEND:20270305T131000Z\r
        SUMMARY:LH 2040 BER → MUC\r
        END:VEVENT\r
        BEGIN:VEVENT\r
        UID:munich\r
        DTSTAMP:20270301T000000Z\r
        DTSTART:20270305T150000Z\r
        DTEND:20270305T160000Z\r
        SUMMARY:Workshop\r
        LOCATION:Werksviertel\r
        GEO:48.12;11.60\r
        END:VEVENT\r
        BEGIN:VEVENT\r
        UID:dinner\r
        DTSTAMP:20270301T000000Z\r
        DTSTART:20270305T200000Z\r
        DTEND:20270305T220000Z\r
        SUMMARY:Dinner\r
        LOCATION:Trattoria\r
        GEO:48.14;11.58\r
        END:VEVENT\r

        """

    static func configuration(_ yaml: String = "") throws -> Configuration {
        try ConfigurationLoader.parse(
            """
            places:
              - { name: Home, at: { lat: 52.52, lon: 13.40 }, hours: "00:00-23:59" }
            travel:
              routing: { engine: osrm, url: "http://127.0.0.1:9" }
            \(yaml)
            """, file: "config.yml", directory: "/tmp", environment: [:])
    }

    /// The day's occurrences by UID, and a classifier that has noted where each leaves the user.
    static func day(_ configuration: Configuration, routes: RouteCache) throws -> ([String: Occurrence], Classifier) {
        let occurrences = try ProducerHabitTests.scanText(Self.day).occurrences
        let classifier = Classifier(configuration, routes: routes)
        classifier.noteStops(of: occurrences)
        return (Dictionary(uniqueKeysWithValues: occurrences.map { ($0.uid, $0) }), classifier)
    }

    @Test func theWayStartsAtTheEventBeforeOrTheAirportLandedAtElseWhereThePlacesSay() throws {
        let routes = RouteCache()
        let (day, classifier) = try Self.day(try Self.configuration(), routes: routes)
        func origin(_ uid: String) throws -> String? {
            let occurrence = try #require(day[uid])
            // No answer yet: an estimate (a flight keeps flights.travelTime), and the way is wanted, from where it
            // starts.
            let before = classifier.facts(for: occurrence).leave
            #expect(uid == "flight" ? before?.confidence == nil : before?.confidence == .straightLine, "\(uid)")
            let key = try #require(routes.takeWanted().first, "\(uid)")
            routes.store(1200, for: key)
            let leave = try #require(classifier.facts(for: occurrence).leave)
            #expect(leave.origin?.at == key.origin)
            return leave.origin?.name
        }
        // The first of the day starts at home; the client's way from the dentist, who finishes half an hour before.
        #expect(try origin("dentist") == "Home")
        #expect(try origin("client") == "Praxis Dr. Weiss")
        // The flight's way to the airport starts at the client's too (they end two hours before it).
        #expect(try origin("flight") == "Client")
        // After landing, the first event's way starts at the arrival airport.
        let workshop = try origin("munich")
        #expect(workshop?.contains("Munich") == true, "\(workshop ?? "nil")")
        // Dinner is four hours after the workshop, more than travel.fromPreviousWithin (3h): Home's hours say.
        #expect(try origin("dinner") == "Home")
    }

    @Test func fromPreviousWithinAndTheSameDayBoundTheEventBefore() throws {
        let routes = RouteCache()
        let (day, classifier) = try Self.day(try Self.configuration("  fromPreviousWithin: 5h\n"), routes: routes)
        let dinner = try #require(day["dinner"])
        _ = classifier.facts(for: dinner)
        #expect(routes.takeWanted().first?.origin == GeoPoint(latitude: 48.12, longitude: 11.60))
        // An event the evening before is not where the morning's way starts.
        let itinerary = Itinerary()
        let evening = Instant(secondsSinceEpoch: 1_804_200_000)
        itinerary.replace(0, with: [.init(end: evening, place: .init(name: "Bar", at: nil))])
        #expect(
            itinerary.last(atOrBefore: evening.adding(seconds: 3600), since: evening.adding(seconds: 1))?.place == nil)
        #expect(itinerary.last(atOrBefore: evening.adding(seconds: 3600), since: evening)?.place.name == "Bar")
    }

    @Test func aRuleSaysHowAndHowLong() throws {
        let routes = RouteCache()
        let configuration = try Self.configuration(
            """
            rules:
              - { summary: Dentist, travelTime: 35m }
              - { summary: Client, travelMode: cycling }
            """)
        let (day, classifier) = try Self.day(configuration, routes: routes)
        let dentistOccurrence = try #require(day["dentist"])
        let dentist = try #require(classifier.facts(for: dentistOccurrence).leave)
        #expect(dentist.source == .rule && dentist.travelSeconds == 2100 && dentist.explanation.contains("rule"))
        let client = try #require(day["client"])
        _ = classifier.facts(for: client)
        #expect(routes.takeWanted().map(\.mode) == [.cycling])
        // The first rule an occurrence meets is its rule: a later one's mode does not reach the dentist.
        #expect(routes.takeWanted().isEmpty)
    }

    @Test func aFlightsWayToTheAirportIsRoutedWhenTheEngineAnswersAndFixedOtherwise() throws {
        let routes = RouteCache()
        let configuration = try Self.configuration()
        let (day, classifier) = try Self.day(configuration, routes: routes)
        let flight = try #require(day["flight"])
        let fixed = try #require(classifier.facts(for: flight).leave)
        // Without an answer yet: flights.travelTime after the airport lead.
        #expect(fixed.source == .flightRule && fixed.mode == nil)
        #expect(fixed.travelSeconds == configuration.flights.travelTime && fixed.travelSeconds != 1800)
        let key = try #require(routes.takeWanted().first)
        #expect(key.destination.latitude > 52.3 && key.destination.latitude < 52.4)  // BER
        routes.store(1800, for: key)
        let routed = try #require(classifier.facts(for: flight).leave)
        #expect(routed.mode == .driving && routed.travelSeconds == 1800)
        #expect(routed.by == fixed.by.adding(seconds: fixed.travelSeconds - 1800))
        #expect(routed.explanation.contains("driving to the airport from Client"), "\(routed.explanation)")
    }

    @Test func anAnswerWithinTheThresholdIsKeptAndTheNearestHourServesMeanwhile() {
        let cache = RouteCache()
        let home = GeoPoint(latitude: 52.52, longitude: 13.40)!
        let office = GeoPoint(latitude: 52.50, longitude: 13.37)!
        let eight = Instant(secondsSinceEpoch: 1_804_233_600)  // an hour's start
        let morning = RouteCache.Key(origin: home, destination: office, mode: .driving, at: eight)
        #expect(cache.store(1200, for: morning, at: eight.adding(seconds: -86_400), threshold: 300) == .new)
        // Within five minutes of the last answer: kept; beyond it: the time to leave moves.
        #expect(cache.store(1400, for: morning, threshold: 300) == .kept)
        #expect(cache.seconds(for: morning) == 1200)
        #expect(cache.store(1600, for: morning, threshold: 300) == .moved(from: 1200))
        #expect(cache.seconds(for: morning) == 1600)
        // Another hour of the same way: the nearest answer meanwhile, and the hour's own is wanted.
        let noon = RouteCache.Key(
            origin: home, destination: office, mode: .driving, at: eight.adding(seconds: 4 * 3600))
        #expect(cache.seconds(for: noon) == 1600)
        #expect(cache.takeWanted() == [noon])
        // Another mode is another way.
        var walking = noon
        walking.mode = .walking
        #expect(cache.seconds(for: walking) == nil)
    }

    @Test func aWayAnsweredWellAheadIsAskedAgainAsItsHourNearsOnce() {
        let cache = RouteCache()
        let point = GeoPoint(latitude: 52.52, longitude: 13.40)!
        let eight = Instant(secondsSinceEpoch: 1_804_233_600)
        let key = RouteCache.Key(origin: point, destination: point, mode: .driving, at: eight)
        cache.store(1200, for: key, at: eight.adding(seconds: -6 * 3600))
        #expect(cache.nextDueAgain(before: 3600) == eight.adding(seconds: -3600))
        #expect(cache.takeDueAgain(at: eight.adding(seconds: -2 * 3600), before: 3600).isEmpty)
        #expect(cache.takeDueAgain(at: eight.adding(seconds: -3000), before: 3600) == [key])
        // Taken once: a failure keeps the last answer, and is asked again 30 s later, then a minute after that.
        cache.unanswered(key, at: eight.adding(seconds: -3000))
        #expect(cache.takeDueAgain(at: eight.adding(seconds: -2990), before: 3600).isEmpty)
        #expect(cache.nextDueAgain(before: 3600) == eight.adding(seconds: -2970))
        #expect(cache.takeDueAgain(at: eight.adding(seconds: -2970), before: 3600) == [key])
        cache.unanswered(key, at: eight.adding(seconds: -2970))
        #expect(cache.nextDueAgain(before: 3600) == eight.adding(seconds: -2910))
        // An answer ends the retries.
        cache.store(1300, for: key, at: eight.adding(seconds: -2900))
        #expect(cache.seconds(for: key) == 1300 && cache.nextDueAgain(before: 3600) == nil)
        // A day after its hour the answer goes.
        _ = cache.takeDueAgain(at: eight.adding(seconds: 2 * 86_400), before: 3600)
        #expect(cache.seconds(for: key) == nil)
    }

    @Test func hooksGetHowAndFromWhere() throws {
        let routes = RouteCache()
        let (day, classifier) = try Self.day(try Self.configuration(), routes: routes)
        let client = try #require(day["client"])
        _ = classifier.facts(for: client)
        routes.store(600, for: try #require(routes.takeWanted().first))
        let facts = classifier.facts(for: client)
        var configuration = PlannerConfiguration()
        configuration.anchors[.event] = .leaveBy
        let plan = Planner.plan(
            [client], facts: { _ in facts }, state: PlannerState(), configuration: configuration,
            now: utc("2027-03-05T09:00:00Z"))
        let event = try #require(plan.due.first { $0.type == .reminderDue })
        let entry = JournalStore.Entry(
            sequence: 1, event: event, occurrence: client, facts: facts, recorded: Timestamp(millisecondsSinceEpoch: 0))
        let environment = HookFields(entry).environment
        #expect(environment.contains("CALWATCH_TRAVEL_MODE=driving"))
        #expect(environment.contains("CALWATCH_LEAVE_FROM=Praxis Dr. Weiss"))
        #expect(environment.contains("CALWATCH_LEAVE_ESTIMATED=0"))
        #expect(environment.contains("CALWATCH_PREPARE_BY="))
        #expect(environment.contains("CALWATCH_LEAVE_BY=2027-03-05T09:20:00Z"))
    }

    @Test func theStatusBarSaysHowTheWayIsMade() throws {
        let routes = RouteCache()
        let configuration = try Self.configuration("rules:\n  - { summary: Client, travelMode: cycling }\n")
        let (day, classifier) = try Self.day(configuration, routes: routes)
        let client = try #require(day["client"])
        _ = classifier.facts(for: client)
        routes.store(1500, for: try #require(routes.takeWanted().first))
        let facts = classifier.facts(for: client)
        let status = NextUp(
            [client], facts: { _ in facts }, options: .init(), now: utc("2027-03-05T08:53:00Z"), zone: .utc)
        #expect(NextUpFormat.line(status) == "Leave in 12 min for Client visit (25 min by bike)")
    }

    /// A first configuration: places without hours. The way to the day's first event starts at the only place, or
    /// at the one named Home among several; once any place has hours, only hours say.
    @Test(
        arguments: [
            ("- { name: Home, at: { lat: 52.52, lon: 13.40 } }", "Home"),
            (
                "- { name: home, at: { lat: 52.52, lon: 13.40 } }\n  - { name: Office, match: [Client], travelTime: 25m }",
                "home"
            ),
            (
                "- { name: Flat, at: { lat: 52.52, lon: 13.40 } }\n  - { name: Office, at: { lat: 52.5, lon: 13.37 } }",
                nil
            ),
            (
                "- { name: Home, at: { lat: 52.52, lon: 13.40 } }\n  - { name: Office, at: { lat: 52.5, lon: 13.37 }, hours: 09:00-17:00 }",
                nil
            ),
            ("- { name: Home, at: { lat: 52.52, lon: 13.40 }, hours: \"00:00-24:00\" }", "Home"),
        ] as [(String, String?)])
    func withoutHoursTheWayStartsAtTheOnlyPlaceOrAtHome(places: String, origin: String?) throws {
        let configuration = try ConfigurationLoader.parse(
            """
            places:
              \(places)
            travel:
              routing: { engine: osrm, url: "http://127.0.0.1:9" }
            """, file: "config.yml", directory: "/tmp", environment: [:])
        let routes = RouteCache()
        let (day, classifier) = try Self.day(configuration, routes: routes)
        let dentist = try #require(day["dentist"])
        _ = classifier.facts(for: dentist)
        let wanted = routes.takeWanted()
        #expect(wanted.first?.origin == (origin == nil ? nil : GeoPoint(latitude: 52.52, longitude: 13.40)))
        #expect(classifier.missingLeave(for: dentist) == (origin == nil ? .noStart : nil))
        guard let key = wanted.first else { return }
        routes.store(900, for: key)
        let leave = try #require(classifier.facts(for: dentist).leave)
        #expect(leave.origin?.name == origin)
        let steps = DecisionTrace.steps(of: leave) { $0.description }.joined(separator: "\n")
        #expect(
            steps.contains(
                places.contains("hours")
                    ? "whose hours in places: hold the time" : "where the way starts when nothing else says"),
            "\(steps)")
    }
}
