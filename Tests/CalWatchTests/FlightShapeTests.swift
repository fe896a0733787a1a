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
        var description: String? = nil
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
        // Under a title that names a trip, the flight only in the description, as long as the item; several legs
        // chained into one journey.
        Flight(
            summary: "Lisbon long weekend", description: "TAP Air Portugal\nTP 1351 LHR 09.30 → LIS 12:05\nSeat 14C",
            hours: 2.6, code: "TP1351", origin: "LHR", destination: "LIS"),
        Flight(
            summary: "Urlaub Bali", description: "SQ 325 FRA 21:55 → SIN 16:00\nSQ 938 SIN 18:30 → DPS 21:15",
            hours: 21, code: "SQ325", origin: "FRA", destination: "DPS"),
        // A code glued to a name in another script; an emoji arrow.
        Flight(summary: "羽田HND→伊丹ITM JL 113", hours: 1.2, code: "JL113", origin: "HND", destination: "ITM"),
        Flight(summary: "Flight AY 1331 HEL ➡️ CPH", hours: 1.7, code: "AY1331", origin: "HEL", destination: "CPH"),
        // A reservation's title, a bare code as the location, the route in the description.
        Flight(
            summary: "Reservation: Delta 1234", location: "ATL", description: "Atlanta ATL 08:00 - Boston BOS 10:35",
            hours: 2.6, code: "DL1234", origin: "ATL", destination: "BOS"),
        // Departure and arrival labels in Danish and Indonesian; a city the airport table files under a district.
        Flight(
            summary: "Fly SK 1425", description: "Afgang: København (CPH)\nAnkomst: Oslo (OSL)", hours: 1.2,
            code: "SK1425", origin: "CPH", destination: "OSL"),
        Flight(
            summary: "Penerbangan GA 410",
            description: "Keberangkatan: Jakarta (CGK) 09.30\nKedatangan: Denpasar (DPS)",
            hours: 1.8, code: "GA410", origin: "CGK", destination: "DPS"),
        Flight(
            summary: "Flug LH 2218", description: "Von: MUNICH DE\nNach: TOULOUSE FR BLAGNAC", hours: 1.8,
            code: "LH2218", origin: "MUC", destination: "TLS"),
        // A terminal between a code and the arrow; two codes side by side after the number; a location's
        // bracketed code naming the airport of the route's city; a Sabre line's time before its code.
        Flight(
            summary: "Air India AI 503 | Delhi (DEL) T3 → Bengaluru (BLR)", hours: 2.8, code: "AI503", origin: "DEL",
            destination: "BLR", terminal: "3"),
        Flight(summary: "AA 2210 DFW ORD", hours: 2.4, code: "AA2210", origin: "DFW", destination: "ORD"),
        Flight(
            summary: "Flight from London to Dublin", location: "London City Airport (LCY)", hours: 1.3, code: nil,
            origin: "LCY", destination: "DUB"),
        Flight(
            summary: "Flight to Boston",
            description: "AIR DELTA AIR LINES FLT:1234 ECONOMY\nLV ATLANTA GA 0810A ATL\nAR BOSTON MA 1045A BOS",
            hours: 2.6, code: "DL1234", origin: "ATL", destination: "BOS"),
        // The summary names the airports, the description the flight.
        Flight(
            summary: "Bangkok (BKK) - Chiang Mai (CNX)", description: "Thai Airways TG 102\nBaggage 20 kg",
            hours: 1.3, code: "TG102", origin: "BKK", destination: "CNX"),
        // Place names from the gazetteer (`place-names.txt`), with their diacritics, up to five words.
        Flight(
            summary: "Chuyến bay VN 213 Hà Nội → Thành phố Hồ Chí Minh", hours: 2.2, code: "VN213", origin: "HAN",
            destination: "SGN"),
        Flight(summary: "하노이 → 다낭 VN 163", hours: 1.3, code: "VN163", origin: "HAN", destination: "DAD"),
        // Named outright, though its times are an export's placeholder: the times are wrong, not the flight.
        Flight(
            summary: "Canceled: Flight LH 123 from FRA to EWR", hours: 2.6, code: "LH123", origin: "FRA",
            destination: "EWR"),
    ]

    @Test(arguments: flights) func isAFlightReadRight(_ shape: Flight) throws {
        let component = ClassifierTests.item(
            summary: shape.summary, location: shape.location, description: shape.description)
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
        LookAlike(summary: "Klacht indienen KL 1778", minutes: 30, against: "veto: a claim"),
        // Pick-ups in Dutch and in Japanese (written without spaces).
        LookAlike(summary: "Oma ophalen Schiphol KL 1234", minutes: 60, against: "veto: airport pickup"),
        LookAlike(summary: "空港へお迎え JL 123", minutes: 60, against: "veto: airport pickup"),
        // Hand-overs at an airport, in Dutch and in Japanese.
        LookAlike(summary: "Overdracht sleutels AMS-LHR", minutes: 60, against: "veto: a hand-over"),
        LookAlike(summary: "羽田で引き継ぎ HND-ITM", minutes: 60, against: "veto: a hand-over"),
        // A high-speed train whose code looks like an airline's.
        LookAlike(summary: "Frecciarossa FR 9612 Milano → Roma", minutes: 180, against: "veto: train"),
        LookAlike(summary: "新幹線 のぞみ NH 21 東京→新大阪", minutes: 150, against: "veto: train"),
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

    /// A travel day (all day, a day or two) whose description holds the flight's number and route is that flight,
    /// leaving at the first leg's time; a week's holiday with the same lines is a trip, not a flight.
    @Test func aTravelDayWithTheFlightBelowIsAFlight() throws {
        func item(days: Int) -> CalendarComponent {
            var component = ClassifierTests.item(
                summary: "Reisetag Lissabon", description: "TAP TP 1351\nLHR 09:30 → LIS 12:05\nSitz 14C")
            let day = CalendarDate(year: 2027, month: 5, day: 21)
            component.start = .date(day)
            component.end = .date(day.adding(days: days))
            return component
        }
        let day = classifier.classify(item(days: 1), duration: nil)
        let flight = try #require(day.flight, "\(day.evidence)")
        #expect(flight.code == "TP1351")
        #expect(flight.origin?.code == "LHR" && flight.destination?.code == "LIS")
        #expect(flight.departureMinute == 9 * 60 + 30)
        let holiday = classifier.classify(item(days: 7), duration: nil)
        #expect(holiday.kind != .flight, "\(holiday.evidence)")
    }

    /// A flight quoted in the description of an item that does not last what it takes is not the item's: a call
    /// about a booking, a note. A British postcode is not a flight number.
    @Test func aQuotedFlightAndAPostcodeAreNotFlights() {
        let call = ClassifierTests.item(
            summary: "Call with the travel agent", description: "About TP 1351 LHR 09:30 → LIS 12:05")
        let result = classifier.classify(call, duration: 30 * 60)
        #expect(result.kind != .flight)
        #expect(result.evidence.contains { $0.rule.hasPrefix("a flight in the description, but") })
        // As long as the flight, but a call all the same.
        let longCall = classifier.classify(call, duration: 2.6 * 3600)
        #expect(longCall.kind != .flight, "\(longCall.evidence)")
        #expect(
            longCall.evidence.contains { $0.rule == "a flight in the description, but the title names something else" })
        var trip = call
        trip.summary = "Lisboa"
        #expect(classifier.classify(trip, duration: 2.6 * 3600).kind == .flight)
        let flat = classifier.classify(ClassifierTests.item(summary: "Flat viewing BA1 1LN"), duration: 3600)
        #expect(flat.kind != .flight)
        #expect(!flat.evidence.contains { $0.rule.hasPrefix("flight number") }, "\(flat.evidence)")
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
        #expect(doubtful.evidence.contains { $0.description.hasPrefix("− decision: not a flight") })
        // One short of the line: a close decision, and the bias tipped it.
        #expect(
            doubtful.evidence.last?.description
                == "− a close decision: weights \"-1.00 from zero, tipped by the bias -5.00\"")
        #expect(!sure.evidence.contains { $0.rule == Evidence.closeDecision })
    }

    /// An all-day item whose text gives the departure is a flight leaving then, on the origin airport's clock, and
    /// is reminded before its leave-by; one that names its flight outright but gives no time (a travel day) is a
    /// flight detected, with nothing to leave by and no reminder in the night.
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
        let travelDay = classifier.facts(for: untimed)
        #expect(travelDay.kind == .flight)
        #expect(travelDay.flight?.code == "LH401")
        #expect(travelDay.leaveBy == nil)
        let quiet = PlannerTests.run(
            from: "2027-03-15T00:00:00Z", to: "2027-03-17T00:00:00Z", facts: { classifier.facts(for: $0) }, [untimed])
        #expect(PlannerTests.lines(quiet, types: [.flightDetected]).count == 1)
        #expect(PlannerTests.lines(quiet, types: [.reminderDue]).isEmpty)
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
