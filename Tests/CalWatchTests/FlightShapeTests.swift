import Foundation
import Testing

@testable import CalWatchCore

/// The shapes of flights and look-alikes that calendars nobody here wrote brought, each in text written for this
/// test (not the corpus's): what the scan reads from it, and what the fitted decision makes of it.
@Suite struct FlightShapeTests {
    let classifier = Classifier(me: ["me@example.com"])

    /// A flight's shape and what must be read from it: code, origin, destination (nil: none expected).
    struct Flight: CustomTestStringConvertible, Sendable {
        var summary: String
        var location: String? = nil
        var hours: Double
        var code: String?
        var origin: String?
        var destination: String?
        var terminal: String? = nil
        var testDescription: String { summary }
    }

    static let flights: [Flight] = [
        // ICAO designators, glued and after a flight word.
        Flight(summary: "EZY8423 BRS-FAO", hours: 2.8, code: "U28423", origin: "BRS", destination: "FAO"),
        Flight(summary: "Flight DLH 1874 MUC → OTP", hours: 2.3, code: "LH1874", origin: "MUC", destination: "OTP"),
        // A code beside a city decides; the city's main airport only without one.
        Flight(summary: "Flight KL 1005 to London LCY", hours: 1.3, code: "KL1005", origin: nil, destination: "LCY"),
        Flight(summary: "Flight AF 7300 to Paris ORY", hours: 1.5, code: "AF7300", origin: nil, destination: "ORY"),
        // A reservation system's city pair.
        Flight(summary: "IB3166 MADCDG", hours: 2.2, code: "IB3166", origin: "MAD", destination: "CDG"),
        // A terminal between the number and the route keeps the route in its order.
        Flight(
            summary: "SK 1463 T3 CPH-ARN", hours: 1.2, code: "SK1463", origin: "CPH", destination: "ARN",
            terminal: "3"),
        // City names in other languages and scripts.
        Flight(
            summary: "Vol AF 1846 Varsovie → Lisbonne", hours: 4.5, code: "AF1846", origin: "WAW", destination: "LIS"),
        Flight(summary: "ウィーン→ロンドン OS455便", hours: 2.6, code: "OS455", origin: "VIE", destination: "LHR"),
        Flight(summary: "飞往慕尼黑的航班 CA961", hours: 11.5, code: "CA961", origin: nil, destination: "MUC"),
        Flight(summary: "프라하-서울 OK 5012편", hours: 11.0, code: "OK5012", origin: "PRG", destination: "ICN"),
        Flight(
            summary: "رحلة MS 777 من القاهرة إلى أثينا", hours: 2.0, code: "MS777", origin: "CAI", destination: "ATH"),
        Flight(summary: "Рейс SU 2454 в Рим", hours: 4.0, code: "SU2454", origin: nil, destination: "FCO"),
        // The location names the airport of the route's city.
        Flight(
            summary: "easyJet U2 8021 London to Geneva", location: "London Luton Airport", hours: 1.8,
            code: "U28021", origin: "LTN", destination: "GVA"),
        // Airports' whole names before their codes.
        Flight(
            summary: "British Airways BA0213 London Heathrow Airport (LHR) to Boston Logan International Airport (BOS)",
            hours: 7.8, code: "BA213", origin: "LHR", destination: "BOS"),
        // A train to the airport, then the flight.
        Flight(
            summary: "Zug zum Flug: ICE 519 nach FRA, dann LH 598 FRA-LOS", hours: 8.5, code: "LH598", origin: "FRA",
            destination: "LOS"),
        // A helicopter between two airports, no number.
        Flight(summary: "Helicopter NCE → CEQ", hours: 0.4, code: nil, origin: "NCE", destination: "CEQ"),
    ]

    @Test(arguments: flights) func isAFlightReadRight(_ shape: Flight) throws {
        let component = ClassifierTests.item(summary: shape.summary, location: shape.location)
        let result = classifier.classify(component, duration: shape.hours * 3600)
        let flight = try #require(result.flight, "\(result.evidence)")
        #expect(flight.code == shape.code)
        #expect(flight.origin?.code == shape.origin)
        #expect(flight.destination?.code == shape.destination)
        #expect(flight.terminal == shape.terminal)
        // `explain` shows the decision and what each piece of evidence weighed.
        #expect(result.evidence.contains { $0.rule == "decision: a flight" && ($0.weight ?? 0) > 0 })
    }

    /// Items that only look like flights, and the evidence against them `explain` shows.
    struct LookAlike: CustomTestStringConvertible, Sendable {
        var summary: String
        var minutes: Double
        var attendees: [String] = []
        var against: String
        var testDescription: String { summary }
    }

    static let lookAlikes: [LookAlike] = [
        LookAlike(summary: "Submit EU261 claim for KL 1778 (5 h late)", minutes: 30, against: "veto: a claim"),
        LookAlike(
            summary: "Flight sim session A320 at FRA training centre", minutes: 240, against: "veto: a simulator"),
        LookAlike(summary: "IVAO group flight LOWW → LIRF", minutes: 100, against: "veto: a virtual flight"),
        LookAlike(summary: "Drop Tomás at LIS (TP 1351)", minutes: 60, against: "veto: airport drop-off"),
        LookAlike(summary: "Oma landet LH 1317 aus Rom", minutes: 60, against: "veto: someone else's flight"),
        LookAlike(
            summary: "TP 1351 LIS-FRA", minutes: 195, attendees: ["tomas@example.net"],
            against: "attendees, and you are not one of them"),
        // A 45-minute item cannot be the 5,600 km from Madrid to Boston.
        LookAlike(summary: "IB 6165 MAD-BOS", minutes: 45, against: "no airliner covers that distance in that time"),
        LookAlike(summary: "Flights to Porto from €29", minutes: 60, against: "veto: a price"),
    ]

    @Test(arguments: lookAlikes) func isNotAFlightAndSaysWhy(_ shape: LookAlike) {
        let component = ClassifierTests.item(
            summary: shape.summary, attendees: shape.attendees.map { Attendee(address: $0) })
        let result = classifier.classify(component, duration: shape.minutes * 60)
        #expect(result.kind != .flight, "\(result.evidence)")
        #expect(result.evidence.contains { $0.rule == shape.against }, "\(result.evidence)")
    }

    /// The weights are data: a decision with other weights decides otherwise, and says so.
    @Test func theDecisionIsTheWeightsSum() {
        let component = ClassifierTests.item(summary: "LH 400 FRA-JFK")
        let input = ClassifierInput(component: component, duration: 8.5 * 3600)
        var sure = Classification()
        FlightClassifier(weights: FlightWeights(bias: -1, weights: [.knownNumber: 2, .route: 2])).classify(
            input, into: &sure)
        #expect(sure.kind == .flight)
        #expect(abs(sure.confidence - 1 / (1 + exp(-3.0))) < 1e-9)
        var doubtful = Classification()
        FlightClassifier(weights: FlightWeights(bias: -5, weights: [.knownNumber: 2, .route: 2])).classify(
            input, into: &doubtful)
        #expect(doubtful.kind == .event)
        #expect(doubtful.evidence.last?.description.hasPrefix("− decision: not a flight") == true)
    }

    /// An all-day item whose text gives the departure is a flight leaving then, on the origin airport's clock, and
    /// is reminded before its leave-by; without a time it is no flight.
    @Test func anAllDayFlightLeavesWhenItsTextSays() throws {
        let path = TestFolders.path("all-day", suffix: ".ics")
        try """
        BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:allday-flight\r
        DTSTAMP:20270101T000000Z\r\nDTSTART;VALUE=DATE:20270315\r\nDTEND;VALUE=DATE:20270316\r
        SUMMARY:Flight LH 400 FRA-JFK\r\nDESCRIPTION:Lufthansa\\nDeparts 13:25\\, lands 16:10 local\r\nEND:VEVENT\r
        BEGIN:VEVENT\r\nUID:allday-trip\r\nDTSTAMP:20270101T000000Z\r\nDTSTART;VALUE=DATE:20270316\r
        DTEND;VALUE=DATE:20270317\r\nSUMMARY:Flight LH 401 JFK-FRA\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let result = scan([path], from: "2027-03-01", to: "2027-04-01", zone: "Europe/Berlin")
        let flight = try #require(result.occurrences.first { $0.uid == "allday-flight" })
        let facts = classifier.facts(for: flight)
        #expect(facts.kind == .flight)
        #expect(facts.flight?.departureMinute == 13 * 60 + 25)
        // 13:25 in Frankfurt (UTC+1 in March) is 12:25Z; three hours' lead abroad and 45 minutes' way before it.
        #expect(facts.leaveBy == utc("2027-03-15T08:40:00Z"))
        let untimed = try #require(result.occurrences.first { $0.uid == "allday-trip" })
        #expect(classifier.facts(for: untimed).kind == .event)
        // Reminded like any flight, though all-day items are not by default.
        let events = PlannerTests.run(
            from: "2027-03-15T00:00:00Z", to: "2027-03-16T00:00:00Z", facts: { classifier.facts(for: $0) }, [flight])
        #expect(
            PlannerTests.lines(events, types: [.reminderDue]) == [
                "reminderDue 2027-03-15T08:10:00Z 30m before leaveBy",
                "reminderDue 2027-03-15T08:25:00Z 15m before leaveBy",
                "reminderDue 2027-03-15T08:35:00Z 5m before leaveBy",
            ])
        #expect(PlannerTests.lines(events, types: [.liveActivityStart]).isEmpty)
    }
}
