/// Works out when to leave for an occurrence that has a place and a time for the way there (docs/design.md §11):
/// the way's length from the item's own `X-APPLE-TRAVEL-DURATION`, else from the fixed `travelTime` of the place in
/// `places:` that the item is at. A pure function of the item, the places and the instant, like the planner.
public struct TravelTimes: Sendable {
    public let places: [PlaceSettings]

    public init(places: [PlaceSettings]) {
        self.places = places
    }

    /// When to leave for `occurrence` (not a flight: flights have their own rule), or `nil` when nothing gives a
    /// time for the way there. All-day and cancelled occurrences have none.
    public func leave(for occurrence: Occurrence) -> Leave? {
        guard !occurrence.allDay, occurrence.status != .cancelled else { return nil }
        let component = occurrence.source.component
        let place = self.place(of: component)
        let travel: (seconds: Int64, source: Leave.Source)
        if let duration = component.travelDuration, !duration.isNegative,
            case let seconds = Int64(duration.nominalDays) * 86_400 + duration.exactSeconds, seconds > 0,
            seconds <= 2 * 86_400
        {
            travel = (seconds, .appleTravelDuration)
        } else if let seconds = place?.travelTime, seconds > 0 {
            travel = (seconds, .place)
        } else {
            return nil
        }
        let by = occurrence.start.adding(seconds: -travel.seconds)
        let destination = Leave.Place(
            name: component.placeTitle ?? place?.name ?? component.location.map(Self.oneLine),
            at: component.geo ?? place?.at)
        return Leave(
            by: by, travelSeconds: travel.seconds, source: travel.source,
            origin: origin(at: by, zone: occurrence.displayZone, excluding: place), destination: destination)
    }

    /// The place of `places:` an item is at: the first whose name or patterns match its LOCATION, or the title of
    /// its Apple structured location.
    public func place(of component: CalendarComponent) -> PlaceSettings? {
        let texts = [component.placeTitle, component.location].compactMap { $0 }
        return places.first { place in texts.contains { place.matches($0) } }
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
