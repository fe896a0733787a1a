/// What the classifiers found about one calendar item (docs/design.md §4): its kind with a confidence, a flight's or a
/// meeting's facts, and the evidence behind them, which `calwatch explain` prints.
///
/// It is worked out once per component: every occurrence of a series shares it, and only a flight's instants
/// (departure, arrival, leave-by) are per occurrence (`PlanningFacts`).
public struct Classification: Sendable, Hashable {
    public var kind: PlanningFacts.Kind
    /// How sure the classifier is of `kind`, 0…1.
    public var confidence: Double
    public var flight: FlightFacts?
    public var meeting: MeetingFacts?
    /// The user's own PARTSTAT is DECLINED.
    public var declined: Bool
    /// The user's own PARTSTAT (upper case), `nil` when the user is not among the attendees.
    public var participation: String?
    /// Every rule that fired, in the order they were tried.
    public var evidence: [Evidence]

    public init(
        kind: PlanningFacts.Kind = .event, confidence: Double = 0.5, flight: FlightFacts? = nil,
        meeting: MeetingFacts? = nil, declined: Bool = false, evidence: [Evidence] = []
    ) {
        self.kind = kind
        self.confidence = confidence
        self.flight = flight
        self.meeting = meeting
        self.declined = declined
        self.evidence = evidence
    }
}

/// One rule that fired: which, on what text, and what it did to the result.
public struct Evidence: Sendable, Hashable, CustomStringConvertible {
    /// For a flight or against it, or for a meeting; `fact` records an extracted value.
    public enum Effect: String, Sendable {
        case flight
        case notFlight = "not a flight"
        case meeting, fact
    }

    public var effect: Effect
    /// The rule, in words: `route between two airports`, `veto: train`.
    public var rule: String
    /// The property the text came from: `SUMMARY`, `LOCATION`, `DESCRIPTION`, `ATTENDEE`, …
    public var property: String
    /// The text the rule matched.
    public var text: String

    public init(_ effect: Effect, _ rule: String, in property: String, text: String) {
        self.effect = effect
        self.rule = rule
        self.property = property
        self.text = text
    }

    /// `+ flight number of British Airways: SUMMARY "BA286"`: + for the result, − against it, · a fact taken.
    public var description: String {
        let sign =
            switch effect {
            case .flight, .meeting: "+"
            case .notFlight: "−"
            case .fact: "·"
            }
        return "\(sign) \(rule): \(property) \"\(text.prefix(120))\""
    }
}

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
    /// 1: airports with a flight keyword or number; 2: a flight keyword only; 3: a flight number only.
    public var tier: Int

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

/// A meeting's join details.
public struct MeetingFacts: Sendable, Hashable {
    /// The provider id (`zoom`, `teams`, `meet`, …), `nil` for attendees without a join link.
    public var service: String?
    public var joinURL: String?
    public var meetingID: String?
    public var passcode: String?
    public var dialIn: String?

    public init(service: String? = nil, joinURL: String? = nil) {
        self.service = service
        self.joinURL = joinURL
    }
}

/// The text of a calendar item that classifiers read, each field with its property name.
public struct ClassifierInput: Sendable {
    public var component: CalendarComponent
    /// Seconds from start to end of an occurrence (the first one of a series); `nil` for all-day items.
    public var duration: Double?

    public let summary: String
    public let location: String
    public let description: String
    /// CONFERENCE, URL, X-ALT-DESC (the HTML body) and the services' own link properties, each bounded like the
    /// description.
    public let linkProperties: [NamedText]

    /// The most of each text the classifiers read, in UTF-8 bytes: what decides an item (a flight's lines, a join
    /// link, a dial-in) is near the top of even a long invitation, and a stranger's 450 KB description must not cost
    /// half a second per item.
    public static let textLimit = (summary: 2_048, location: 2_048, description: 32_768)

    public init(component: CalendarComponent, duration: Double?) {
        self.component = component
        self.duration = duration
        summary = Self.bounded(component.summary ?? "", Self.textLimit.summary)
        location = Self.bounded(component.location ?? "", Self.textLimit.location)
        description = Self.bounded(component.description ?? "", Self.textLimit.description)
        linkProperties = component.linkProperties.prefix(64).map {
            NamedText(name: $0.name, value: Self.bounded($0.value, Self.textLimit.description))
        }
    }

    /// The text cut to at most `limit` UTF-8 bytes, at a Unicode scalar boundary.
    static func bounded(_ text: String, _ limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var end = text.utf8.index(text.utf8.startIndex, offsetBy: limit)
        while end.samePosition(in: text.unicodeScalars) == nil { end = text.utf8.index(before: end) }
        return String(text.unicodeScalars[..<end])
    }
}

/// A classifier of calendar items: flights, meetings, and later trains, hotels or user rules.
public protocol ItemClassifier: Sendable {
    /// Adds what it finds to `classification`, which earlier classifiers filled in.
    func classify(_ input: ClassifierInput, into classification: inout Classification)
}
