/// What the classifiers found about one calendar item (docs/design.md §4): its kind with a confidence, a flight's or a
/// meeting's facts, and the evidence behind them, which `calwatch explain` prints.
///
/// It is worked out once per component: every occurrence of a series shares it, and only a flight's instants
/// (departure, arrival, leave-by) are per occurrence (`OccurrenceFacts`).
public struct Classification: Sendable, Hashable {
    public var kind: OccurrenceFacts.Kind
    /// The user's own PARTSTAT is DECLINED. (Beside `kind`, in its padding: a classification is kept per item.)
    public var declined: Bool
    /// How sure the classifier is of `kind`, 0…1.
    public var confidence: Double
    public var flight: FlightFacts? {
        get { flightFacts?.value }
        set { flightFacts = newValue.map(Boxed.init) }
    }
    public var meeting: MeetingFacts? {
        get { meetingFacts?.value }
        set { meetingFacts = newValue.map(Boxed.init) }
    }
    /// The facts boxed: most items are neither, and a daemon keeps one classification per item (inline, the two
    /// took 370 bytes of each, 37 MB of 100,000 items).
    private var flightFacts: Boxed<FlightFacts>?
    private var meetingFacts: Boxed<MeetingFacts>?
    /// The user's own PARTSTAT (upper case), `nil` when the user is not among the attendees.
    public var participation: String?
    /// Every rule that fired, in the order they were tried.
    public var evidence: [Evidence]

    public init(
        kind: OccurrenceFacts.Kind = .event, confidence: Double = 0.5, flight: FlightFacts? = nil,
        meeting: MeetingFacts? = nil, declined: Bool = false, evidence: [Evidence] = []
    ) {
        self.kind = kind
        self.confidence = confidence
        self.flightFacts = flight.map(Boxed.init)
        self.meetingFacts = meeting.map(Boxed.init)
        self.declined = declined
        self.evidence = evidence
    }
}
