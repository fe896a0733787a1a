/// When to leave for an occurrence, and how that was worked out: `data.leave` in every event about it.
public struct Leave: Sendable, Hashable {
    /// Where the time for the way there came from.
    public enum Source: String, Sendable, Hashable {
        /// The item's own `X-APPLE-TRAVEL-DURATION`, as Apple Calendar writes it.
        case appleTravelDuration
        /// The fixed `travelTime` of the place in `places:` the item is at.
        case place
        /// The fixed `travelTime` of the occurrence's rule in `rules:`.
        case rule
        /// A routing engine's answer for the way from the origin (`travel.routing`), with `travel.buffer`.
        case routing
        /// A flight: departure − airport lead − `flights.travelTime`.
        case flightRule
    }

    /// A named point, either part perhaps unknown.
    public struct Place: Sendable, Hashable {
        public var name: String?
        public var at: GeoPoint?

        public init(name: String?, at: GeoPoint?) {
            self.name = name
            self.at = at
        }
    }

    /// What chose where the way starts.
    public enum OriginBasis: Sendable, Hashable {
        /// The event (its summary) that ends at that instant before this one.
        case previousEvent(String?, end: Instant)
        /// The flight (its summary) that lands there at that instant.
        case landing(String?, end: Instant)
        /// The hours of the place in `places:`.
        case placeHours
        /// No place has hours, and this is the only one (or the one named Home).
        case startingPlace
    }

    /// The instant to leave.
    public var by: Instant
    /// How long the way takes (for a flight, the way to the airport).
    public var travelSeconds: Int64
    public var source: Source
    /// How, for a routed way (`driving`, `cycling`, `walking`); `nil` otherwise.
    public var mode: TravelSettings.Mode?
    /// Where the way starts: the place of the event before (a flight's arrival airport), else the place `places:`
    /// says the user is at then; `nil` when nothing says.
    public var origin: Place?
    /// Why the way starts there, for `why`.
    public var originBasis: OriginBasis?
    /// Where the occurrence is: its `GEO` or Apple structured location, a place of `places:`, a flight's airport.
    public var destination: Place?
    /// Time to get ready before leaving, and whose setting it is; `nil` when none is configured.
    public var prep: Prep?
    /// What the weather added to a routed drive (`travel.weather`), with its reason; `nil`: nothing.
    public var weather: WeatherFactor?
    /// How sure the way's time is; `nil` for a fixed one (the item's, a place's, a rule's, `flights.travelTime`).
    public var confidence: Confidence?

    /// How sure a routed way's time is, from surest to least.
    public enum Confidence: String, Sendable, Hashable {
        /// The routing engine's answer for the hour of leaving.
        case answered
        /// The engine's answer for the same way at another hour (its own hour not answered yet).
        case otherHour
        /// No answer now: the median of the engine's earlier answers for the way at this hour of the week, with
        /// `travel.estimate.margin`.
        case usual
        /// No answer ever: the straight-line distance at a typical speed for the mode, with the margin.
        case straightLine
    }

    /// Whether the time is an estimate made without the engine (`usual` or `straightLine`): said as such wherever
    /// it is shown, never passed off as an answer.
    public var estimated: Bool { confidence == .usual || confidence == .straightLine }

    /// Time to get ready before leaving (`prep:`), and where it was set.
    public struct Prep: Sendable, Hashable {
        public enum Source: String, Sendable, Hashable {
            /// The occurrence's rule in `rules:`.
            case rule
            /// The place of `places:` it is at.
            case place
            /// The place of `places:` the way starts from (where the user gets ready).
            case origin
            /// `flights.prep`.
            case flights
            /// `travel.prep`, for everything with a time to leave.
            case travel
        }

        public var seconds: Int64
        public var source: Source

        public init(seconds: Int64, source: Source) {
            self.seconds = seconds
            self.source = source
        }
    }

    /// When to start getting ready: the time to leave less `prep`; `nil` without one.
    public var prepareBy: Instant? { prep.map { by.adding(seconds: -$0.seconds) } }

    public init(
        by: Instant, travelSeconds: Int64, source: Source, mode: TravelSettings.Mode? = nil, origin: Place? = nil,
        destination: Place? = nil
    ) {
        self.by = by
        self.travelSeconds = travelSeconds
        self.source = source
        self.mode = mode
        self.origin = origin
        self.destination = destination
    }

    /// Where a routed time came from, in words.
    var basis: String {
        switch confidence {
        case .answered?, nil: "routing engine"
        case .otherHour?: "routing engine, its answer for another hour"
        case .usual?: "estimated: the way's usual time, the engine not answering"
        case .straightLine?: "estimated from the straight-line distance, the engine not answering"
        }
    }

    /// How the time was reached, for `why` and `explain`: `25m from the place Office`.
    public var explanation: String {
        let travel = DurationText.text(travelSeconds)
        switch source {
        case .appleTravelDuration: return "\(travel) of travel time written in the item"
        case .place: return "\(travel) to \(destination?.name ?? "the place") (places:)"
        case .rule: return "\(travel) on the way (its rule's travelTime)"
        case .routing:
            return "\(travel) \(mode?.rawValue ?? "driving") from \(origin?.name ?? "where you are") (\(basis))"
        case .flightRule:
            guard let mode else { return "airport lead and \(travel) to the airport" }
            return "airport lead and \(travel) \(mode.rawValue) to the airport from \(origin?.name ?? "where you are") "
                + "(\(basis))"
        }
    }
}
