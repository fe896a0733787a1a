/// What classification found about an occurrence, as far as planning and sinks need it (docs/design.md §4 and §5): its
/// kind, a flight's leave-by instant, identity and code, a meeting's join link, and whether the user declined it.
///
/// The planner takes these as input, so it stays a pure function; the classifiers fill them in.
public struct OccurrenceFacts: Sendable, Hashable {
    /// What an occurrence is.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable { case flight, meeting, event }

    public var kind: Kind
    /// When to leave: a flight's departure − airport lead − travel time, or a placed event's start − its travel time.
    public var leaveBy: Instant? { leave?.by }
    /// A flight's facts whose change makes it detected again (number, route, times, gate), as one text.
    public var flightIdentity: String?
    /// The user's own PARTSTAT is DECLINED.
    public var declined: Bool
    /// The user's own PARTSTAT (upper case), `nil` when the user is not among the attendees.
    public var participation: String?
    /// A flight's facts (code, route, terminal, …); its departure and arrival are the occurrence's start and end.
    public var flight: FlightFacts? {
        get { details?.flight }
        set { details = Details.of(flight: newValue, meeting: meeting, leave: leave) }
    }
    /// A meeting's join link and details.
    public var meeting: MeetingFacts? {
        get { details?.meeting }
        set { details = Details.of(flight: flight, meeting: newValue, leave: leave) }
    }
    /// When to leave, and how that was worked out (`data.leave`).
    public var leave: Leave? {
        get { details?.leave }
        set { details = Details.of(flight: flight, meeting: meeting, leave: newValue) }
    }
    /// Flight, meeting and leave, held by reference: inline they made every event in the sinks' queues half a
    /// kilobyte larger (30 MB more for a replay), and most occurrences have none.
    private var details: Details?
    /// How sure classification is of `kind`.
    public var confidence: Double?

    public init(
        kind: Kind = .event, leave: Leave? = nil, flightIdentity: String? = nil, declined: Bool = false,
        flight: FlightFacts? = nil, meeting: MeetingFacts? = nil, confidence: Double? = nil
    ) {
        self.kind = kind
        self.flightIdentity = flightIdentity
        self.declined = declined
        self.details = Details.of(flight: flight, meeting: meeting, leave: leave)
        self.confidence = confidence
    }

    private final class Details: Sendable, Hashable {
        let flight: FlightFacts?
        let meeting: MeetingFacts?
        let leave: Leave?

        private init(flight: FlightFacts?, meeting: MeetingFacts?, leave: Leave?) {
            self.flight = flight
            self.meeting = meeting
            self.leave = leave
        }

        static func of(flight: FlightFacts?, meeting: MeetingFacts?, leave: Leave?) -> Details? {
            flight == nil && meeting == nil && leave == nil
                ? nil : Details(flight: flight, meeting: meeting, leave: leave)
        }

        static func == (a: Details, b: Details) -> Bool {
            // One box is shared by every event planned from one classification: most comparisons end here.
            a === b || a.flight == b.flight && a.meeting == b.meeting && a.leave == b.leave
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(flight)
            hasher.combine(meeting)
            hasher.combine(leave)
        }
    }

    /// A flight's code (`BA286`), for hooks.
    public var flightCode: String? { flight?.code }
    /// A meeting's join link, for hooks.
    public var joinURL: String? { meeting?.joinURL }

    /// A plain event: what every occurrence is until classified.
    public static let event = OccurrenceFacts()
}
