/// What classification found about an occurrence, as far as planning and sinks need it (DESIGN §4 and §5): its
/// kind, a flight's leave-by instant, identity and code, a meeting's join link, and whether the user declined it.
///
/// The planner takes these as input, so it stays a pure function; the classifiers fill them in.
public struct PlanningFacts: Sendable, Hashable {
    /// What an occurrence is.
    public enum Kind: String, Sendable, Hashable, CaseIterable { case flight, meeting, event }

    public var kind: Kind
    /// A flight's leave-by instant: departure − airport lead − travel time.
    public var leaveBy: Instant?
    /// A flight's facts whose change makes it detected again (number, route, times, gate), as one text.
    public var flightIdentity: String?
    /// The user's own PARTSTAT is DECLINED.
    public var declined: Bool
    /// A flight's facts (code, route, terminal, …); its departure and arrival are the occurrence's start and end.
    public var flight: FlightFacts?
    /// A meeting's join link and details.
    public var meeting: MeetingFacts?
    /// How sure classification is of `kind`.
    public var confidence: Double?

    public init(
        kind: Kind = .event, leaveBy: Instant? = nil, flightIdentity: String? = nil, declined: Bool = false,
        flight: FlightFacts? = nil, meeting: MeetingFacts? = nil, confidence: Double? = nil
    ) {
        self.kind = kind
        self.leaveBy = leaveBy
        self.flightIdentity = flightIdentity
        self.declined = declined
        self.flight = flight
        self.meeting = meeting
        self.confidence = confidence
    }

    /// A flight's code (`BA286`), for hooks.
    public var flightCode: String? { flight?.code }
    /// A meeting's join link, for hooks.
    public var joinURL: String? { meeting?.joinURL }

    /// A plain event: what every occurrence is until classified.
    public static let event = PlanningFacts()
}
