/// A flight's facts that are the same for every occurrence of its calendar item.
public struct FlightFacts: Sendable, Hashable {
    /// The airline designator (`BA`, `U2`) and number (286, leading zeros dropped).
    public var designator: String?
    public var number: Int?
    public var airline: String?
    public var origin: Airport?
    public var destination: Airport?
    public var terminal: String?
    public var gate: String?
    public var seat: String?
    public var bookingReference: String?
    /// An all-day item's departure, in minutes after midnight on the origin airport's clock, read from its text
    /// ("Departs 13:25"): the time its occurrence does not carry.
    public var departureMinute: Int?
    /// 1: airports with a flight keyword or number; 2: a flight keyword only; 3: a flight number only.
    public var tier: Int
    /// The leg of a boarding pass of `passes:` for this occurrence's flight (per occurrence: a pass is for a day).
    public var pass: BoardingPass.Leg?
    /// What the flight-status service of `flights.status` last said of this occurrence's flight.
    public var live: LiveFlight?

    public init(tier: Int) { self.tier = tier }

    /// `BA286`: designator and number, no space, no leading zeros.
    public var code: String? {
        guard let designator, let number else { return nil }
        return designator + String(number)
    }

    /// Origin and destination in different countries; `nil` when either is unknown.
    public var international: Bool? {
        guard let origin, let destination else { return nil }
        return origin.country != destination.country
    }
}

extension FlightFacts {
    /// A flight at a glance, for cards, pushes and the page: its terminal, gate and seat, and what the status service
    /// says when it is news (`LiveFlight.headline`), the calendar's departure being `departure`.
    public func glance(departure: Instant, zone: ZoneRules) -> [String] {
        var parts: [String] = []
        if let terminal { parts.append("Terminal \(terminal)") }
        if let gate { parts.append("Gate \(gate)") }
        if let seat { parts.append("Seat \(seat)") }
        if let news = live?.headline(calendar: departure, zone: zone) { parts.append(news) }
        return parts
    }
}
