/// What classification found about an occurrence, as far as planning and sinks need it (docs/design.md §4 and §5): its
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
    /// The user's own PARTSTAT (upper case), `nil` when the user is not among the attendees.
    public var participation: String?
    /// A flight's facts (code, route, terminal, …); its departure and arrival are the occurrence's start and end.
    public var flight: FlightFacts? {
        get { details?.flight }
        set { details = Details.of(flight: newValue, meeting: meeting) }
    }
    /// A meeting's join link and details.
    public var meeting: MeetingFacts? {
        get { details?.meeting }
        set { details = Details.of(flight: flight, meeting: newValue) }
    }
    /// Flight and meeting, held by reference: inline they made every event in the sinks' queues half a kilobyte
    /// larger (30 MB more for a replay), and most occurrences have neither.
    private var details: Details?
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
        self.details = Details.of(flight: flight, meeting: meeting)
        self.confidence = confidence
    }

    private final class Details: Sendable, Hashable {
        let flight: FlightFacts?
        let meeting: MeetingFacts?

        private init(flight: FlightFacts?, meeting: MeetingFacts?) {
            self.flight = flight
            self.meeting = meeting
        }

        static func of(flight: FlightFacts?, meeting: MeetingFacts?) -> Details? {
            flight == nil && meeting == nil ? nil : Details(flight: flight, meeting: meeting)
        }

        static func == (a: Details, b: Details) -> Bool { a.flight == b.flight && a.meeting == b.meeting }

        func hash(into hasher: inout Hasher) {
            hasher.combine(flight)
            hasher.combine(meeting)
        }
    }

    /// A flight's code (`BA286`), for hooks.
    public var flightCode: String? { flight?.code }
    /// A meeting's join link, for hooks.
    public var joinURL: String? { meeting?.joinURL }

    /// A plain event: what every occurrence is until classified.
    public static let event = PlanningFacts()
}
