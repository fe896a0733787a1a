/// Works out when to leave for an occurrence that has a place and a time for the way there (docs/design.md §11):
/// the way's length from the item's own `X-APPLE-TRAVEL-DURATION`, else from the fixed `travelTime` of the place in
/// `places:` that the item is at, else from a routing engine's answer kept in `routes`. A pure function of the item,
/// the places and what `routes` holds, like the planner: a way it has no answer for yet is asked for there.
public struct TravelTimes: Sendable {
    public let places: [PlaceSettings]
    public let travel: TravelSettings
    /// The routing engine's answers; `nil` when no engine is configured or none is asked (one-shot commands).
    public let routes: RouteCache?

    public init(places: [PlaceSettings], travel: TravelSettings = TravelSettings(), routes: RouteCache? = nil) {
        self.places = places
        self.travel = travel
        self.routes = routes
    }

    /// How long before the start the way is assumed to begin when choosing where it starts and which hour's answer to
    /// ask for (the answer itself then sets the time to leave).
    static let routingEstimate: Int64 = 3600

    /// When to leave for `occurrence` (not a flight: flights have their own rule), or `nil` when nothing gives a
    /// time for the way there. All-day and cancelled occurrences have none.
    public func leave(for occurrence: Occurrence) -> Leave? {
        leave(for: occurrence, at: place(of: occurrence.source.component))
    }

    /// `leave(for:)` with the item's place already found (`Classifier` finds it once per item, not per occurrence).
    public func leave(for occurrence: Occurrence, at place: PlaceSettings?) -> Leave? {
        guard !occurrence.allDay, occurrence.status != .cancelled else { return nil }
        let component = occurrence.source.component
        let point = component.geo ?? place?.at
        let travel: (seconds: Int64, source: Leave.Source, mode: TravelSettings.Mode?)
        // At most two days, checked before the days are multiplied out (a calendar can write P99999999W).
        if let duration = component.travelDuration, !duration.isNegative, duration.nominalDays <= 2,
            duration.exactSeconds <= 2 * 86_400,
            case let seconds = Int64(duration.nominalDays) * 86_400 + duration.exactSeconds, seconds > 0,
            seconds <= 2 * 86_400
        {
            travel = (seconds, .appleTravelDuration, nil)
        } else if let seconds = place?.travelTime, seconds > 0 {
            travel = (seconds, .place, nil)
        } else if let point, let routed = routed(occurrence, to: point, place: place) {
            travel = (routed, .routing, self.travel.mode)
        } else {
            return nil
        }
        let by = occurrence.start.adding(seconds: -travel.seconds)
        let destination = Leave.Place(
            name: component.placeTitle ?? place?.name ?? component.location.map(Self.oneLine), at: point)
        return Leave(
            by: by, travelSeconds: travel.seconds, source: travel.source, mode: travel.mode,
            origin: origin(at: by, zone: occurrence.displayZone, excluding: place), destination: destination)
    }

    /// The engine's answer for the way from where the user is an hour before the start to `to`, with the buffer;
    /// `nil` when there is no engine, the way has no start, or the answer has not come yet (it is asked for).
    private func routed(_ occurrence: Occurrence, to: GeoPoint, place: PlaceSettings?) -> Int64? {
        guard travel.routing != nil, let routes else { return nil }
        let departure = occurrence.start.adding(seconds: -Self.routingEstimate)
        guard let from = origin(at: departure, zone: occurrence.displayZone, excluding: place)?.at else { return nil }
        let key = RouteCache.Key(origin: from, destination: to, mode: travel.mode, at: departure)
        return routes.seconds(for: key).map(travel.buffer.applied(to:))
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

    /// Where the user is at `instant` when nothing else says: the first place whose hours hold its wall-clock time.
    func origin(at instant: Instant, zone: ZoneRules, excluding destination: PlaceSettings?) -> Leave.Place? {
        let wall = zone.wallClock(at: instant)
        let minute = wall.hour * 60 + wall.minute
        let here = places.first { $0.name != destination?.name && $0.hours?.contains(minute) == true }
        return here.map { Leave.Place(name: $0.name, at: $0.at) }
    }

    /// A LOCATION's first line, at most 200 scalars: what names a place in `data.leave`.
    private static func oneLine(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return String(String.UnicodeScalarView(line.unicodeScalars.prefix(200)))
    }
}
