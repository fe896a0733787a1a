/// Works out when to leave for an occurrence that has a place and a time for the way there (docs/design.md §11):
/// the way's length from the item's own `X-APPLE-TRAVEL-DURATION`, else from the fixed `travelTime` of the place in
/// `places:` that the item is at, else from a routing engine's answer kept in `routes`. The way starts where the
/// `itinerary` says the user is (the place of the event before, a flight's arrival airport), else at the place of
/// `places:` whose hours hold the time. A pure function of the item, the places and what `routes` and `itinerary`
/// hold, like the planner: a way it has no answer for yet is asked for there.
public struct TravelTimes: Sendable {
    public let places: [PlaceSettings]
    public let travel: TravelSettings
    /// The routing engine's answers; `nil` when no engine is configured.
    public let routes: RouteCache?
    /// The geocoder's answers; `nil` when no geocoder is configured.
    public let geocodes: GeocodeCache?
    /// The weather forecast's answers; `nil` when no forecast is configured.
    public let weather: WeatherCache?
    /// Where the user is between events; empty until a caller notes the occurrences' stops (`Classifier.noteStops`).
    public let itinerary = Itinerary()
    /// The rules, when one of them says how to get there (`travelMode:`, `travelTime:`); the first an occurrence
    /// meets is its rule, as for its reminders.
    let travelRules: [ReminderRule]
    /// Where the way starts when nothing else says and no place has `hours`: the only place, or the one named Home.
    /// A first configuration often names one place and no hours; it should still route from there.
    let startingPlace: PlaceSettings?

    public init(
        places: [PlaceSettings], travel: TravelSettings = TravelSettings(), routes: RouteCache? = nil,
        geocodes: GeocodeCache? = nil, weather: WeatherCache? = nil, rules: [ReminderRule] = []
    ) {
        self.weather = travel.weather == nil ? nil : weather
        self.places = places
        self.travel = travel
        self.routes = routes
        self.geocodes = geocodes
        travelRules = rules.contains { $0.travelMode != nil || $0.travelTime != nil || $0.prep != nil } ? rules : []
        startingPlace =
            places.contains { $0.hours != nil }
            ? nil : places.count == 1 ? places[0] : places.first { $0.name.lowercased() == "home" }
    }

    /// Whether anything here reads where the user is between events: places to start from, or an engine to ask.
    public var followsTheDay: Bool { !places.isEmpty || travel.routing != nil || travel.geocoder != nil }

    /// How long before the start the way is assumed to begin when choosing which hour's answer to ask for (the
    /// answer itself then sets the time to leave).
    static let routingEstimate: Int64 = 3600

    /// When to leave for `occurrence` (not a flight: flights have their own rule), or `nil` when nothing gives a
    /// time for the way there. All-day and cancelled occurrences have none.
    public func leave(for occurrence: Occurrence, facts: OccurrenceFacts = .event) -> Leave? {
        leave(for: occurrence, at: place(of: occurrence.source.component), facts: facts)
    }

    /// `leave(for:)` with the item's place already found (`Classifier` finds it once per item, not per occurrence).
    public func leave(for occurrence: Occurrence, at place: PlaceSettings?, facts: OccurrenceFacts) -> Leave? {
        guard !occurrence.allDay, occurrence.status != .cancelled else { return nil }
        let component = occurrence.source.component
        let point = point(of: component, at: place)
        let rule = travelRules.first { $0.matches(occurrence, facts: facts) }
        var confidence: Leave.Confidence?
        var weather: WeatherFactor?
        let travel:
            (
                seconds: Int64, source: Leave.Source, mode: TravelSettings.Mode?,
                origin: (place: Leave.Place, basis: Leave.OriginBasis)?
            )
        if let fixed = Self.fixedTravel(of: component, at: place, rule: rule) {
            travel = (fixed.seconds, fixed.source, nil, nil)
        } else if let point,
            let routed = way(to: point, arrivingBy: occurrence.start, for: occurrence, at: place, rule: rule)
        {
            travel = (routed.seconds, .routing, routed.mode, routed.origin)
            confidence = routed.confidence
            weather = routed.weather
        } else {
            return nil
        }
        let by = occurrence.start.adding(seconds: -travel.seconds)
        let destination = Leave.Place(
            name: component.placeTitle ?? place?.name ?? component.location.map(Self.oneLine), at: point)
        let origin = travel.origin ?? origin(of: occurrence, leaving: by, excluding: place)
        var leave = Leave(
            by: by, travelSeconds: travel.seconds, source: travel.source, mode: travel.mode, origin: origin?.place,
            destination: destination)
        leave.originBasis = origin?.basis
        leave.prep = prep(rule: rule, place: place, leaving: origin)
        leave.confidence = confidence
        leave.weather = weather
        return leave
    }

    /// Time to get ready before leaving for `occurrence`: its rule's `prep`, else its place's (for a flight,
    /// `flights.prep`), else the prep of the place the way starts from, else `travel.prep`. A `prep` of 0 says there
    /// is none.
    public func prep(
        for occurrence: Occurrence, facts: OccurrenceFacts, place: PlaceSettings?,
        leaving origin: (place: Leave.Place, basis: Leave.OriginBasis)?, flights: FlightLeads? = nil
    ) -> Leave.Prep? {
        prep(
            rule: travelRules.first { $0.matches(occurrence, facts: facts) }, place: place, leaving: origin,
            flights: flights)
    }

    private func prep(
        rule: ReminderRule?, place: PlaceSettings?, leaving origin: (place: Leave.Place, basis: Leave.OriginBasis)?,
        flights: FlightLeads? = nil
    ) -> Leave.Prep? {
        let settings: [(seconds: Int64?, source: Leave.Prep.Source)] = [
            (rule?.prep, .rule), (place?.prep, .place), (flights?.prep, .flights), (startedFrom(origin)?.prep, .origin),
            (travel.prep, .travel),
        ]
        guard let first = settings.first(where: { $0.seconds != nil }), let seconds = first.seconds, seconds > 0
        else { return nil }
        return Leave.Prep(seconds: seconds, source: first.source)
    }

    /// A travel time no engine is asked for, first that answers: the item's own, its place's, its rule's.
    static func fixedTravel(
        of component: CalendarComponent, at place: PlaceSettings?, rule: ReminderRule?
    ) -> (seconds: Int64, source: Leave.Source)? {
        if let seconds = writtenTravelSeconds(of: component) { return (seconds, .appleTravelDuration) }
        if let seconds = place?.travelTime, seconds > 0 { return (seconds, .place) }
        return rule?.travelTime.map { ($0, .rule) }
    }

    /// The item's own travel time (`X-APPLE-TRAVEL-DURATION`), when it is one of at most two days.
    private static func writtenTravelSeconds(of component: CalendarComponent) -> Int64? {
        // Checked before the days are multiplied out (a calendar can write P99999999W).
        guard let duration = component.travelDuration, !duration.isNegative, duration.nominalDays <= 2,
            duration.exactSeconds <= 2 * 86_400,
            case let seconds = Int64(duration.nominalDays) * 86_400 + duration.exactSeconds, seconds > 0,
            seconds <= 2 * 86_400
        else { return nil }
        return seconds
    }

    /// Why an occurrence would get no time to leave, as `check` says it.
    public enum Missing: Sendable, Hashable, CaseIterable {
        /// No travel time of its own, of its place or of its rule, and no routing engine.
        case noTravelTime
        /// An engine would be asked, but the occurrence is at no known point.
        case noPoint
        /// An engine would be asked, but nothing says where the way starts.
        case noStart
    }

    /// Why `occurrence` (not a flight) would get no time to leave; `nil` when it gets one, or will once the routing
    /// engine (and the geocoder, for an address) answers. Asks nothing of either.
    public func missing(for occurrence: Occurrence, at place: PlaceSettings?, facts: OccurrenceFacts) -> Missing? {
        guard !occurrence.allDay, occurrence.status != .cancelled else { return nil }
        let component = occurrence.source.component
        let rule = travelRules.first { $0.matches(occurrence, facts: facts) }
        guard Self.fixedTravel(of: component, at: place, rule: rule) == nil else { return nil }
        guard travel.routing != nil else { return .noTravelTime }
        let addressAsked = travel.geocoder != nil && component.location != nil
        guard point(of: component, at: place, asking: false) != nil || addressAsked else { return .noPoint }
        let departure = occurrence.start.adding(seconds: -Self.routingEstimate)
        guard origin(of: occurrence, leaving: departure, excluding: place)?.place.at != nil else { return .noStart }
        return nil
    }

    /// A routed way: how long, how, from where, how sure, and what the weather added.
    public typealias Way = (
        seconds: Int64, mode: TravelSettings.Mode, origin: (place: Leave.Place, basis: Leave.OriginBasis),
        confidence: Leave.Confidence, weather: WeatherFactor?
    )

    /// A routed way to `to` for arriving by `arrival` (an event's start; for a flight, the airport lead before its
    /// departure): the engine's answer for the way from where the user is then, in the mode of the occurrence's
    /// rule, with the buffer. Until the engine answers (it is asked for), or when it fails, an estimate: the way's
    /// usual time at that hour of the week, else (`straightLine`) the straight line at a typical speed, with the
    /// estimate's margin. `nil` when there is no engine or the way has no start.
    public func way(
        to: GeoPoint, arrivingBy arrival: Instant, for occurrence: Occurrence, at place: PlaceSettings?,
        facts: OccurrenceFacts, straightLine: Bool = true
    ) -> Way? {
        way(
            to: to, arrivingBy: arrival, for: occurrence, at: place,
            rule: travelRules.first { $0.matches(occurrence, facts: facts) }, straightLine: straightLine)
    }

    private func way(
        to: GeoPoint, arrivingBy arrival: Instant, for occurrence: Occurrence, at place: PlaceSettings?,
        rule: ReminderRule?, straightLine: Bool = true
    ) -> Way? {
        guard travel.routing != nil, let routes else { return nil }
        let departure = arrival.adding(seconds: -Self.routingEstimate)
        guard let origin = origin(of: occurrence, leaving: departure, excluding: place), let from = origin.place.at
        else { return nil }
        let mode = rule?.travelMode ?? travel.mode
        let key = RouteCache.Key(origin: from, destination: to, mode: mode, at: departure)
        let seconds: Int64
        let confidence: Leave.Confidence
        if let answer = routes.answer(for: key) {
            (seconds, confidence) = (travel.buffer.applied(to: answer.seconds), answer.exact ? .answered : .otherHour)
        } else if let usual = routes.usual(for: key) {
            (seconds, confidence) = (
                travel.estimateMargin.applied(to: travel.buffer.applied(to: usual.seconds)), .usual
            )
        } else {
            guard straightLine else { return nil }
            let hours = from.kilometres(to: to) / TravelSettings.straightLineSpeed(mode)
            // At least a minute, at most the two days a travel time may take.
            let line = min(max(Int64((hours * 3600).rounded(.up)), 60), 2 * 86_400)
            (seconds, confidence) = (travel.estimateMargin.applied(to: line), .straightLine)
        }
        // The weather halfway, at the hour of leaving; until the forecast answers (it is asked for), none.
        let factor =
            mode == .driving
            ? weather?.conditions(for: WeatherCache.Key(from.midpoint(to: to), at: departure)).flatMap(WeatherFactor.of)
            : nil
        return (factor?.applied(to: seconds) ?? seconds, mode, origin, confidence, factor)
    }

    /// Where an item is: its `GEO` or Apple structured location, else the point of its place of `places:`, else
    /// the geocoder's answer for its LOCATION (asked for when there is none yet, if `asking`).
    func point(of component: CalendarComponent, at place: PlaceSettings?, asking: Bool = true) -> GeoPoint? {
        if let point = component.geo ?? place?.at { return point }
        guard let geocodes, let location = component.location else { return nil }
        return geocodes.point(for: location, asking: asking)
    }

    /// The place of `places:` an item is at: the first whose name or patterns match its LOCATION, or the title of
    /// its Apple structured location.
    public func place(of component: CalendarComponent) -> PlaceSettings? {
        placeIndex(of: component).map { places[$0] }
    }

    /// The index in `places` of `place(of:)`.
    func placeIndex(of component: CalendarComponent) -> Int? {
        guard !places.isEmpty else { return nil }
        let texts = [component.placeTitle, component.location].compactMap { $0 }
        return places.firstIndex { place in texts.contains { place.matches($0) } }
    }

    /// Where the way to `occurrence` starts: the place of the last event that ends before it, within
    /// `travel.fromPreviousWithin` and on the same day (a flight's arrival airport, within a day); else the place of
    /// `places:` (not the destination) whose hours hold the wall-clock time of `leaving`; else, when no place has
    /// hours, `startingPlace`.
    func origin(of occurrence: Occurrence, leaving: Instant, excluding destination: PlaceSettings?) -> (
        place: Leave.Place, basis: Leave.OriginBasis
    )? {
        let zone = occurrence.displayZone
        if !itinerary.isEmpty {
            let start = occurrence.start
            let wall = zone.wallClock(at: start)
            let midnight = start.adding(seconds: -Int64(wall.hour * 3600 + wall.minute * 60 + wall.second))
            let since = max(midnight, start.adding(seconds: -travel.fromPreviousWithin))
            if let stop = itinerary.last(atOrBefore: start, since: since) { return (stop.place, stop.basis) }
        }
        let wall = zone.wallClock(at: leaving)
        let minute = wall.hour * 60 + wall.minute
        if let here = places.first(where: { $0.name != destination?.name && $0.hours?.contains(minute) == true }) {
            return (Leave.Place(name: here.name, at: here.at), .placeHours)
        }
        guard let home = startingPlace, home.name != destination?.name else { return nil }
        return (Leave.Place(name: home.name, at: home.at), .startingPlace)
    }

    /// The place of `places:` the user gets ready at: where the way starts when it starts at one of them between
    /// events (its hours, or the only place or Home), not straight from the event before.
    private func startedFrom(_ origin: (place: Leave.Place, basis: Leave.OriginBasis)?) -> PlaceSettings? {
        switch origin?.basis {
        case .placeHours?, .startingPlace?: places.first { $0.name == origin?.place.name }
        default: nil
        }
    }

    /// Where the user is after `occurrence`, for the way to the next event: its GEO or the point of its place of
    /// `places:` (`nil` for an all-day, cancelled or instant occurrence, or one with no point).
    func stop(after occurrence: Occurrence, at place: PlaceSettings?) -> Itinerary.Stop? {
        guard !occurrence.allDay, occurrence.status != .cancelled, occurrence.end > occurrence.start else { return nil }
        let component = occurrence.source.component
        // Not asked for here: an occurrence's own planning asks for its address, and the stops are noted again then.
        guard let point = point(of: component, at: place, asking: false) else { return nil }
        let name = component.placeTitle ?? place?.name ?? component.location.map(Self.oneLine)
        return Itinerary.Stop(
            end: occurrence.end, place: Leave.Place(name: name, at: point),
            summary: occurrence.summary.map(Self.oneLine))
    }

    /// A LOCATION's first line, at most 200 scalars: what names a place in `data.leave`.
    static func oneLine(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return String(String.UnicodeScalarView(line.unicodeScalars.prefix(200)))
    }
}
