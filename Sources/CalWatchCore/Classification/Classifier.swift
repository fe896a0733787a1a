import Foundation
import Synchronization

/// Classifies occurrences (docs/design.md §4): the flight classifier, then the meeting classifier, once per calendar
/// item however many occurrences it has; then per occurrence the facts planning needs (a flight's leave-by from
/// its departure).
public final class Classifier: Sendable {
    let classifiers: [any ItemClassifier]
    let leads: FlightLeads
    /// When to leave for placed events.
    let travel: TravelTimes
    /// What is worked out once per item: its classification, and the place of `places:` it is at. Kept with the
    /// item's `OccurrenceSource` (`OccurrenceSource.classified`), so that it goes when the item does; a table of its
    /// own took 140 bytes per item, a tenth of a daemon's memory.
    struct Known: Sendable {
        /// The classifier that worked it out (`identity`): another classifier's configuration may differ.
        let by: Int
        let result: Classification
        /// Its index in `travel.places`, in 32 bits: the item's `OccurrenceSource` then fits glibc's 176-byte size
        /// class rather than the 192-byte one.
        private let placeIndex: Int32?

        init(by: Int, result: Classification, place: Int?) {
            self.by = by
            self.result = result
            placeIndex = place.flatMap { Int32(exactly: $0) }
        }

        var place: Int? { placeIndex.map { Int($0) } }
    }
    /// Tells this classifier's results apart from another's, as an object's address, which can be reused, would not.
    private let identity = Classifier.made.add(1, ordering: .relaxed).newValue
    private static let made = Atomic<Int>(0)
    /// `classify:` of config.yml: entries that settle an item's kind, first match wins.
    let kindRules: [KindRule]
    /// Whose calendar each scope of a fleet is (`Configuration.people`): their addresses, for `me`.
    private let people: Locked<[String: Set<String>]>
    /// The boarding passes of `passes:`, joined with the flights they are for; a watch follows their folders.
    private let passes: Locked<BoardingPasses>
    /// What the flight-status service of `flights.status` says of the flights, when one is configured.
    let statuses: FlightStatusCache?

    /// The classifiers for a configuration: `me` tells the user's attendee entries apart, `leads` times a flight's
    /// leave-by, `places` a placed event's.
    public init(
        me: [String] = [], leads: FlightLeads = FlightLeads(), meetingProviders: [MeetingProvider] = [],
        travel: TravelTimes = TravelTimes(places: []), people: [String: [String]] = [:], kindRules: [KindRule] = [],
        passes: BoardingPasses = BoardingPasses(), statuses: FlightStatusCache? = nil
    ) {
        self.statuses = statuses
        classifiers = [FlightClassifier(me: me), MeetingClassifier(me: me, providers: meetingProviders)]
        self.kindRules = kindRules
        self.leads = leads
        self.travel = travel
        self.passes = Locked(passes)
        self.people = Locked(people.mapValues(MeetingClassifier.addresses))
    }

    /// The boarding passes from now on (a watch saw their folders change): for occurrences planned from now on.
    public func follow(passes: BoardingPasses) {
        self.passes.withLock { $0 = passes }
    }

    /// Whose calendar each scope is from now on (a fleet's watcher took calendars): for items read from now on.
    public func follow(people: [String: [String]]) {
        self.people.withLock { $0 = people.mapValues(MeetingClassifier.addresses) }
    }

    /// The classifiers of a configuration; `routes` holds a routing engine's answers, `geocodes` a geocoder's and
    /// `weather` a forecast's, where one is configured; `passes` the boarding passes read from `passes:`, `statuses`
    /// the flight-status service's answers.
    public convenience init(
        _ configuration: Configuration, routes: RouteCache? = nil, geocodes: GeocodeCache? = nil,
        weather: WeatherCache? = nil, passes: BoardingPasses = BoardingPasses(), statuses: FlightStatusCache? = nil
    ) {
        self.init(
            me: configuration.me, leads: configuration.flights, meetingProviders: configuration.meetingProviders,
            travel: TravelTimes(
                places: configuration.places, travel: configuration.travel, routes: routes, geocodes: geocodes,
                weather: weather, rules: configuration.planner.rules),
            people: configuration.people, kindRules: configuration.kindRules, passes: passes,
            statuses: configuration.flights.status == nil ? nil : statuses)
    }

    /// What the classifiers find about one item whose occurrences last `duration` seconds (`nil`: all day).
    public func classify(_ component: CalendarComponent, duration: Double?, me: Set<String>? = nil) -> Classification {
        var input = ClassifierInput(component: component, duration: duration)
        input.me = me
        var result = Classification()
        for classifier in classifiers { classifier.classify(input, into: &result) }
        if result.kind == .event {
            // Sure of a plain event when nothing looked otherwise; less when a rule fired and was overruled.
            result.confidence = result.evidence.contains { $0.effect != .fact } ? 0.7 : 0.9
        }
        if let declared = component.declaredKind {
            let value = declared.trimmingCharacters(in: .whitespaces).lowercased()
            if let kind = OccurrenceFacts.Kind(rawValue: value) {
                KindRule.settle(
                    &result, as: kind,
                    why: Evidence(
                        .fact, KindRule.settledPrefix + "\(kind.rawValue) by the item", in: "X-CALWATCH-KIND",
                        text: value),
                    input: input)
            } else {
                result.evidence.append(
                    Evidence(
                        .fact, "not flight, meeting or event: left to the judgement", in: "X-CALWATCH-KIND",
                        text: String(declared.unicodeScalars.filter { !$0.properties.isDefaultIgnorableCodePoint })))
            }
        }
        return result
    }

    /// The first `classify:` entry an occurrence's item matches settles its kind, unless the item declares its own.
    private func settled(_ result: Classification, of occurrence: Occurrence, duration: Double?) -> Classification {
        guard !kindRules.isEmpty, occurrence.source.component.declaredKind == nil,
            let rule = kindRules.first(where: { $0.matches(occurrence) })
        else { return result }
        var result = result
        let input = ClassifierInput(component: occurrence.source.component, duration: duration)
        let entry = rule.line.map { "the classify: entry on line \($0)" } ?? "a classify: entry"
        KindRule.settle(
            &result, as: rule.kind,
            why: Evidence(
                .fact, KindRule.settledPrefix + "\(rule.kind.rawValue) by \(entry)", in: "config.yml",
                text: rule.describe),
            input: input)
        return result
    }

    /// The classification of an occurrence's item, worked out on first use.
    public func classification(of occurrence: Occurrence) -> Classification {
        known(occurrence).result
    }

    /// Classifies the items of some occurrences ahead of their use: many files' items can so be classified at once,
    /// each on its own.
    public func prepare(_ occurrences: [Occurrence]) {
        var previous: ObjectIdentifier?
        for occurrence in occurrences where ObjectIdentifier(occurrence.source) != previous {
            previous = ObjectIdentifier(occurrence.source)
            _ = known(occurrence)
        }
    }

    private func known(_ occurrence: Occurrence) -> Known {
        if let known = occurrence.source.classified.withLock({ $0 }), known.by == identity { return known }
        let duration =
            occurrence.allDay ? nil : Double(occurrence.end.secondsSinceEpoch - occurrence.start.secondsSinceEpoch)
        let component = occurrence.source.component
        let known = Known(
            by: identity,
            result: settled(
                classify(
                    component, duration: duration,
                    me: occurrence.scope.isEmpty ? nil : people.withLock { $0[occurrence.scope] }),
                of: occurrence, duration: duration),
            place: travel.placeIndex(of: component))
        occurrence.source.classified.withLock { $0 = known }
        return known
    }

    /// Lets go of what was worked out about items whose use is over (their fragments rendered) while their
    /// occurrences are still held.
    public func forget(_ sources: some Sequence<OccurrenceSource>) {
        for source in sources {
            source.classified.withLock { known in if known?.by == identity { known = nil } }
        }
    }

    /// What planning and the sinks need about one occurrence.
    public func facts(for occurrence: Occurrence) -> OccurrenceFacts {
        let known = known(occurrence)
        let classification = known.result
        var facts = OccurrenceFacts(
            kind: classification.kind, declined: classification.declined, flight: classification.flight,
            meeting: classification.meeting, confidence: classification.confidence)
        facts.participation = classification.participation
        if var flight = classification.flight {
            // What the user's boarding pass for this day's flight says: the seat given at check-in wins.
            let passes = passes.withLock { $0 }
            if !passes.isEmpty,
                let entry = passes.leg(
                    for: flight, departure: Self.departure(of: flight, on: occurrence),
                    zone: flight.origin.flatMap { TimeZoneDatabase.rules(named: $0.zone) } ?? occurrence.displayZone)
            {
                flight.pass = entry.leg
                flight.seat = entry.leg.seat ?? flight.seat
                flight.gate = entry.leg.gate ?? flight.gate
                flight.terminal = entry.leg.terminal ?? flight.terminal
                flight.bookingReference = flight.bookingReference ?? entry.leg.bookingReference
                facts.flight = flight
            }
            // What makes the flight detected again when it changes (docs/design.md §5): the calendar's and the
            // pass's facts; what the status service says comes as `flightChanged`.
            facts.flightIdentity =
                [
                    flight.code ?? "", flight.origin?.code ?? "", flight.destination?.code ?? "",
                    occurrence.start.description, occurrence.end.description, flight.gate ?? "", flight.terminal ?? "",
                ].joined(separator: " ")
                // A pass's seat is news too (a flight without a pass keeps the identity it had).
                + (flight.pass.map { " pass \($0.seat ?? "-")" } ?? "")
            var departure = Self.departure(of: flight, on: occurrence)
            if let statuses, let key = Self.statusKey(of: flight, departure: departure, on: occurrence),
                let live = statuses.live(for: key, scheduled: departure, origin: flight.origin?.code)
            {
                flight.live = live
                flight.gate = live.status.gate ?? flight.gate
                flight.terminal = live.status.terminal ?? flight.terminal
                facts.flight = flight
                departure = live.departure ?? departure
            }
            // An all-day flight whose text gives no departure time (a travel day) has nothing to leave by.
            if !occurrence.allDay || flight.departureMinute != nil {
                let airport = flight.origin.map {
                    Leave.Place(name: $0.name, at: GeoPoint(latitude: $0.latitude, longitude: $0.longitude))
                }
                let atAirport = departure.adding(seconds: -lead(flight))
                // The way to the airport from the same machinery as any placed event's (an answer, else the way's
                // usual time), else `flights.travelTime`: what the user said beats a straight line.
                let way = airport?.at.flatMap {
                    travel.way(
                        to: $0, arrivingBy: atAirport, for: occurrence, at: nil, facts: facts, straightLine: false)
                }
                let seconds = way?.seconds ?? leads.travelTime
                var leave = Leave(
                    by: atAirport.adding(seconds: -seconds), travelSeconds: seconds, source: .flightRule,
                    mode: way?.mode, origin: way?.origin.place, destination: airport)
                leave.originBasis = way?.origin.basis
                leave.confidence = way?.confidence
                leave.weather = way?.weather
                leave.prep = travel.prep(
                    for: occurrence, facts: facts, place: nil, leaving: way?.origin, flights: leads)
                facts.leave = leave
            }
        } else {
            facts.leave = travel.leave(for: occurrence, at: known.place.map { travel.places[$0] }, facts: facts)
        }
        return facts
    }

    /// Why `occurrence` would get no time to leave (`TravelTimes.missing`), for `check`; `nil` for a flight (its
    /// rule always gives one) and for one that gets one.
    public func missingLeave(for occurrence: Occurrence) -> TravelTimes.Missing? {
        let known = known(occurrence)
        guard known.result.kind != .flight else { return nil }
        return travel.missing(
            for: occurrence, at: known.place.map { travel.places[$0] }, facts: facts(for: occurrence))
    }

    /// Notes where `occurrences` (one group, a file's) leave the user (`TravelTimes.itinerary`): the ways to the
    /// events after them start there. Returns whether that changed what the itinerary holds, in which case the
    /// occurrences of other groups after them may leave at another time and should be planned again.
    @discardableResult public func noteStops(of occurrences: [Occurrence], origin: Int32 = 0) -> Bool {
        guard travel.followsTheDay else { return false }
        var stops: [Itinerary.Stop] = []
        for occurrence in occurrences {
            let known = known(occurrence)
            if let flight = known.result.flight {
                guard let airport = flight.destination, !occurrence.allDay, occurrence.status != .cancelled else {
                    continue
                }
                let place = Leave.Place(
                    name: airport.name, at: GeoPoint(latitude: airport.latitude, longitude: airport.longitude))
                stops.append(
                    Itinerary.Stop(
                        end: occurrence.end, place: place, landing: true, summary: flight.code ?? airport.code))
            } else if !known.result.declined,
                let stop = travel.stop(after: occurrence, at: known.place.map { travel.places[$0] })
            {
                stops.append(stop)
            }
        }
        return travel.itinerary.replace(origin, with: stops)
    }

    /// Departure − airport lead (international when either end is abroad or unknown: better early than late)
    /// − travel time.
    /// When a flight leaves: its occurrence's start, or for an all-day item the time its text gives, on that day
    /// and on the origin airport's clock (the user's when the origin is unknown).
    public static func departure(of flight: FlightFacts, on occurrence: Occurrence) -> Instant {
        guard occurrence.allDay, let minute = flight.departureMinute else { return occurrence.start }
        let day = occurrence.displayZone.wallClock(at: occurrence.start).date
        let zone = flight.origin.flatMap { TimeZoneDatabase.rules(named: $0.zone) } ?? occurrence.displayZone
        return zone.instant(for: LocalDateTime(date: day, hour: minute / 60, minute: minute % 60))
    }

    /// The flight and day the status service is asked about: its code and its departure's date on the origin
    /// airport's clock (the user's when the origin is unknown); `nil` without a code or a departure time.
    static func statusKey(of flight: FlightFacts, departure: Instant, on occurrence: Occurrence)
        -> FlightStatusCache.Key?
    {
        guard let code = flight.code, !occurrence.allDay || flight.departureMinute != nil else { return nil }
        let zone = flight.origin.flatMap { TimeZoneDatabase.rules(named: $0.zone) } ?? occurrence.displayZone
        return FlightStatusCache.Key(code: code, date: zone.wallClock(at: departure).date.description)
    }

    public func leaveBy(_ flight: FlightFacts, departure: Instant) -> Instant {
        Instant(secondsSinceEpoch: departure.secondsSinceEpoch - lead(flight) - leads.travelTime)
    }

    /// How long before the departure to be at the airport.
    private func lead(_ flight: FlightFacts) -> Int64 {
        flight.international == false ? leads.domestic : leads.international
    }
}
