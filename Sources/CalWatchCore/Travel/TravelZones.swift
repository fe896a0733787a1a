/// Where the user is, as a timeline of zones (`day.travelZone`): the home zone, then from each detected flight's
/// arrival the zone of its destination airport (the airport table's), home again when a flight lands there.
///
/// Floating times and all-day items are written for "wherever I am": a floating 09:00 on a day in Tokyo happens at
/// 09:00 in Tokyo, and the all-day item of that date covers Tokyo's day. Every occurrence on a trip is shown in the
/// zone the user will be in, with the home zone kept beside it (`startHome` in the events).
public struct TravelZones: Sendable {
    public let home: ZoneRules
    /// From each instant on, the zone the user is in; ascending.
    public let stays: [(from: Instant, zone: ZoneRules)]

    /// The timeline of `flights` (any order): each an arrival and the destination's IANA zone name; a name the
    /// zone database does not know is passed by.
    public init(home: ZoneRules, flights: [(arrival: Instant, zone: String)]) {
        self.home = home
        var stays: [(from: Instant, zone: ZoneRules)] = []
        for flight in flights.sorted(by: { $0.arrival < $1.arrival }) {
            let zone =
                flight.zone == home.identifier ? home : TimeZoneDatabase.rules(named: flight.zone)
            guard let zone, stays.last?.zone.identifier ?? home.identifier != zone.identifier else { continue }
            stays.append((flight.arrival, zone))
        }
        self.stays = stays
    }

    /// The flights among `occurrences` as `facts` classifies them: arrival, and the destination airport's zone.
    public static func flights(
        in occurrences: some Sequence<Occurrence>, facts: (Occurrence) -> OccurrenceFacts
    ) -> [(arrival: Instant, zone: String)] {
        occurrences.compactMap { occurrence in
            let facts = facts(occurrence)
            guard facts.kind == .flight, let zone = facts.flight?.destination?.zone, !zone.isEmpty else { return nil }
            return (occurrence.end, zone)
        }
    }

    /// The zone the user is in at `instant`.
    public func zone(at instant: Instant) -> ZoneRules {
        var low = 0
        var high = stays.count
        while low < high {
            let middle = (low + high) / 2
            if stays[middle].from <= instant { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? home : stays[low - 1].zone
    }

    /// The occurrences as they happen where the user is: a floating or all-day one read again in the zone of its
    /// time (its wall clock kept), and any one away from home shown in the zone there; those `keepsHome` names (a
    /// rule's `travelZone: false`) and all at home unchanged. The occurrences of one component share one source.
    public func placing(_ occurrences: [Occurrence], keepsHome: (Occurrence) -> Bool = { _ in false }) -> [Occurrence] {
        guard !stays.isEmpty else { return occurrences }
        var sources: [ObjectIdentifier: [String: OccurrenceSource]] = [:]
        return occurrences.map { occurrence in
            let zone = zone(at: occurrence.start)
            guard zone.identifier != home.identifier, !keepsHome(occurrence) else { return occurrence }
            var placed = occurrence
            if Self.isFloating(occurrence) && zone.identifier != occurrence.displayZone.identifier {
                let written = occurrence.displayZone
                placed.start = zone.instant(for: written.wallClock(at: occurrence.start))
                placed.end =
                    occurrence.allDay
                    ? zone.instant(for: written.wallClock(at: occurrence.end))
                    : placed.start.adding(
                        seconds: occurrence.end.secondsSinceEpoch - occurrence.start.secondsSinceEpoch)
            }
            let source = occurrence.source
            if let shared = sources[ObjectIdentifier(source)]?[zone.identifier] {
                placed.source = shared
            } else {
                placed.source = OccurrenceSource(
                    calendar: source.calendar, component: source.component, allDay: source.allDay,
                    timeZone: source.timeZone, displayZone: zone, homeZone: home,
                    scope: source.scope)
                sources[ObjectIdentifier(source), default: [:]][zone.identifier] = placed.source
            }
            return placed
        }
    }

    /// Written without a zone: a floating DTSTART, or a date.
    static func isFloating(_ occurrence: Occurrence) -> Bool {
        switch occurrence.source.component.start {
        case .date?, .dateTime(_, .floating)?: true
        default: occurrence.allDay
        }
    }
}
